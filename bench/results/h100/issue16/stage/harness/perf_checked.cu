// temporary: stage variants at one shape, timed beside a 16-byte copy
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>
#include "src.cu"
__global__ void copy16(int4 *d, const int4 *s, size_t n) { for (size_t e = blockIdx.x*(size_t)blockDim.x+threadIdx.x; e < n; e += (size_t)gridDim.x*blockDim.x) d[e] = s[e]; }
int main() {
  const int nx = NX, ny = NY, nz = NZ; size_t n = (size_t)nx*ny*nz;
  real *u, *f; cudaMalloc(&u, n*sizeof(real)); cudaMalloc(&f, n*sizeof(real)); 
  real *h = (real*)malloc(n*sizeof(real)), *o = (real*)malloc(n*sizeof(real));
  for (size_t e = 0; e < n; e++) h[e] = (real)((e * 2654435761u % 1000) / 1000.0);
  cudaMemcpy(u, h, n*sizeof(real), cudaMemcpyHostToDevice);
  dim3 b(FDT_BX, FDT_BY), g((nx + FDT_BX*LANES-1)/(FDT_BX*LANES), (ny + FDT_BY*FDT_M-1)/(FDT_BY*FDT_M), (nz-2*R+FDT_MZ-1)/FDT_MZ);
  fdt_laplacian<<<g, b>>>(f, u, nx, ny, nz, 1, 1, 1);
  cudaMemcpy(o, f, n*sizeof(real), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int t = 0; t < 20000; t++) {
    int i = R + (int)((t * 7919LL) % (nx - 2*R)), j = R + (int)((t * 104729LL) % (ny - 2*R)), k = R + (int)((t * 1299709LL) % (nz - 2*R));
    size_t c = i + (size_t)nx*j + (size_t)nx*ny*k; double acc = 3*fdt_weight(0)*h[c];
    for (int r = 1; r <= R; r++) acc += fdt_weight(r)*((double)h[c-r]+h[c+r]+h[c-r*nx]+h[c+r*nx]+h[c-r*(size_t)nx*ny]+h[c+r*(size_t)nx*ny]);
    if (fabs(acc - o[c]) > 1e-3 * (1 + fabs(acc))) bad++;
  }
  cudaEvent_t a, c; cudaEventCreate(&a); cudaEventCreate(&c); float best[2] = {1e9, 1e9};
  for (int rep = 0; rep < 6; rep++) for (int w = 0; w < 2; w++) {
    cudaEventRecord(a);
    for (int r = 0; r < 20; r++) if (w) fdt_laplacian<<<g, b>>>(f, u, nx, ny, nz, 1, 1, 1); else copy16<<<132*16, 256>>>((int4*)f, (const int4*)u, n*sizeof(real)/16);
    cudaEventRecord(c); cudaEventSynchronize(c); float ms; cudaEventElapsedTime(&ms, a, c); if (ms/20 < best[w]) best[w] = ms/20; }
  printf("bad=%d %-40s %s %dx%dx%d kernel %.4f ms copy %.4f ms over_copy=%.4f\n", bad, NAME, cudaGetErrorString(cudaGetLastError()), nx, ny, nz, best[1], best[0], best[0]/best[1]);
}
