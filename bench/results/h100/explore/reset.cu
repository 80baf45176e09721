// Demotes every persisting (evict_last) line in the GPU's L2 to normal.
#include <cstdio>
#include <cuda_runtime.h>
int main() {
    cudaFree(0); /* creates the context the reset needs */
    cudaError_t e = cudaCtxResetPersistingL2Cache();
    printf("cudaCtxResetPersistingL2Cache: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
