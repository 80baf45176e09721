/* smem.hip - the patent in the seeds: 2.5D blocking with coalesced loads and a circular
 * queue. A block owns an FDT_BX x FDT_BY tile of outputs and walks FDT_MZ planes up in z.
 * Each plane's tile, halo included, is read with coalesced loads into one slot of a queue
 * of 2R+1 planes in shared memory; every neighbour then comes from shared memory, and the
 * slot of the plane left behind is refilled with the next one. The next plane is fetched
 * into registers while the current one is computed, so loads overlap arithmetic. */

#define TX (FDT_BX + 2 * R)
#define TY (FDT_BY + 2 * R)
#define QUEUE (2 * R + 1)
#define THREADS (FDT_BX * FDT_BY)
#define SHARE ((TX * TY + THREADS - 1) / THREADS) /* tile points each thread loads */

struct plane_tile {
    const real *u;
    int i0, j0, nx, ny; /* i0, j0: the tile's first point, halo included */
    idx_t line, slice;
};

__device__ __forceinline__ void fetch(const plane_tile &t, int plane, int tid, real *pre)
{
#pragma unroll
    for (int s = 0; s < SHARE; s++) {
        const int p = tid + s * THREADS;
        const int gi = t.i0 + p % TX, gj = t.j0 + p / TX;
        pre[s] = 0;
        if (p < TX * TY && gi >= 0 && gi < t.nx && gj >= 0 && gj < t.ny)
            pre[s] = t.u[gi + t.line * gj + t.slice * plane];
    }
}

__device__ __forceinline__ void put(real *slot, int tid, const real *pre)
{
#pragma unroll
    for (int s = 0; s < SHARE; s++) {
        const int p = tid + s * THREADS;
        if (p < TX * TY)
            slot[p] = pre[s];
    }
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    pitch = row_pitch(pitch, nx);
    __shared__ real queue[QUEUE][TY * TX];
    const int tid = threadIdx.x + FDT_BX * threadIdx.y;
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (k0 >= nz - R)
        return; /* uniform across the block, so no barrier is left waiting */
    const int k1 = min(k0 + FDT_MZ, nz - R);
    plane_tile t;
    t.u = u;
    t.i0 = BLOCK_X * FDT_BX - R;
    t.j0 = BLOCK_Y * FDT_BY - R;
    t.nx = nx;
    t.ny = ny;
    t.line = pitch;
    t.slice = (idx_t)pitch * ny;
    const int i = t.i0 + R + threadIdx.x, j = t.j0 + R + threadIdx.y;
    const bool active = interior(i, nx) && interior(j, ny);
    const coeffs c = make_coeffs(cx, cy, cz);
    const int centre = (threadIdx.y + R) * TX + threadIdx.x + R;

    real pre[SHARE];
    for (int p = k0 - R; p < k0 + R; p++) {
        fetch(t, p, tid, pre);
        put(queue[p % QUEUE], tid, pre);
    }
    fetch(t, k0 + R, tid, pre);
    for (int k = k0; k < k1; k++) {
        put(queue[(k + R) % QUEUE], tid, pre);
        __syncthreads();
        if (k + 1 < k1)
            fetch(t, k + 1 + R, tid, pre);
        if (active) {
            const real *s = queue[k % QUEUE];
            real acc = c.c0 * s[centre];
#pragma unroll
            for (int r = 1; r <= R; r++)
                acc += c.x[r] * (s[centre - r] + s[centre + r])
                     + c.y[r] * (s[centre - r * TX] + s[centre + r * TX])
                     + c.z[r] * (queue[(k - r) % QUEUE][centre] + queue[(k + r) % QUEUE][centre]);
            store_f(&f[i + t.line * j + t.slice * k], acc);
        }
        __syncthreads();
    }
}
