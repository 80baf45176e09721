// temporary: which points does stage get wrong (float R=2 47x31x21)
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>
#include "stage_src.cu"
int main() {
  const int nx = NX, ny = NY, nz = NZ; size_t n = (size_t)nx*ny*nz;
  real *h = (real*)malloc(n*sizeof(real)), *o = (real*)malloc(n*sizeof(real));
  for (size_t e = 0; e < n; e++) h[e] = (real)((e * 2654435761u % 1000) / 1000.0);
  real *u, *f; cudaMalloc(&u, n*sizeof(real)); cudaMalloc(&f, n*sizeof(real));
  cudaMemcpy(u, h, n*sizeof(real), cudaMemcpyHostToDevice); cudaMemset(f, 0, n*sizeof(real));
  dim3 b(FDT_BX, FDT_BY), g((nx + FDT_BX*LANES-1)/(FDT_BX*LANES), (ny + FDT_BY*FDT_M-1)/(FDT_BY*FDT_M), (nz-2*R+FDT_MZ-1)/FDT_MZ);
  fdt_laplacian<<<g, b>>>(f, u, nx, ny, nz, 1, 1, 1);
  printf("launch: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  cudaMemcpy(o, f, n*sizeof(real), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int k = R; k < nz-R; k++) for (int j = R; j < ny-R; j++) for (int i = R; i < nx-R; i++) {
    size_t c = i + (size_t)nx*j + (size_t)nx*ny*k; double acc = 3*fdt_weight(0)*h[c];
    for (int r = 1; r <= R; r++) acc += fdt_weight(r)*((double)h[c-r]+h[c+r]+h[c-r*nx]+h[c+r*nx]+h[c-r*(size_t)nx*ny]+h[c+r*(size_t)nx*ny]);
    if (fabs(acc - o[c]) > 1e-3 && bad++ < 20) printf("bad i=%d j=%d k=%d got %g want %g\n", i, j, k, (double)o[c], acc);
  }
  printf("bad=%d\n", bad);
}
