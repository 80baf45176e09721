/* ring.hip - high orders at the copy ceiling (issue 31): xytile's plane tiles kept in a ring
 * in dynamic shared memory, filled by 16-byte asynchronous copies AHEAD planes ahead of the
 * plane computed. xytile loads the next plane into registers and puts it into one of two
 * tiles, so each plane's barrier waits on the slowest load of that plane, and each thread
 * holds its rows' whole z-windows (2R + 1 vectors a row) in registers. Here the copies land
 * in the ring without passing through registers, each barrier waits only on copies issued
 * AHEAD planes before, and the upper half of the z-window is read from the ring, where the
 * planes k + 1 .. k + R already are; the lower half stays in registers. At R = 4 on the
 * H200 this took 512^3 from 0.70 of the device copy (xytile) to 0.77 in double, and from
 * 0.58 to 0.69 in float (fdtune bench; its prototype is bench/r4_ring.cu; both in
 * bench/results/h200/issue31/ring/).
 *
 * Thread (tx, ty) owns one 16-byte vector column and FDT_M consecutive rows of the block's
 * tile, so the y neighbours of its rows are one column of FDT_M + 2R vectors read once a
 * plane. The ring has SLOTS = R + 1 + AHEAD tiles, each with its halo (x halo in whole
 * vectors); plane p lives in slot p % SLOTS. Each plane k:
 *   wait for this thread's copies of plane k + R; barrier (everyone's have landed, and
 *   every read of plane k - 1 is done); copy plane k + R + AHEAD into plane k - 1's slot;
 *   compute plane k from slots k .. k + R and the registers' planes k - R .. k - 1.
 * AHEAD is FDT_AHEAD, which engine/variant.c sets. Vectors off the grid are zero-filled.
 * Rows must start on 16 bytes (the pitch a multiple of the vector and the fields' first
 * points on 16 bytes: variant.c prunes the other layouts; no scalar path, since cp.async
 * copies whole 16-byte vectors). A vector that reaches past nx reads the row's padding.
 * Blocks are FDT_BX x FDT_BY x 1 over the xy plane, boundary included; grid z counts chunks
 * of FDT_MZ interior planes.
 *
 * The ring is dynamic shared memory (FDT_SHARED_BYTES, which engine/variant.c computes and
 * this file checks; over the 48 KB a static array may take on NVIDIA), and the module says
 * how much in fdt_dynamic_shared (common.h), which the cuda backend reads at load to launch
 * with it. cp.async is NVIDIA's (sm_80 and later); elsewhere (the cpu backend, older GPUs)
 * each copy is a plain load and store, which keeps the result and loses the overlap. The family is not in the hip space: its AMD
 * counterpart would fill the ring by loads issued AHEAD planes early (or buffer_load ... lds
 * on gfx90a) with 64-thread single-wavefront tiles, whose barrier costs almost nothing. */

#define HX (LANES * ((R + LANES - 1) / LANES)) /* x halo, whole vectors */
#define HV (HX / LANES)
#define TX (FDT_BX * LANES) /* the tile's interior width and height */
#define TY (FDT_BY * FDT_M)
#define SX (TX + 2 * HX) /* a slot: the tile with its halo */
#define SY (TY + 2 * R)
#define PLANE (SX * SY)
#define SLOTS (R + 1 + FDT_AHEAD)
#define ROW_VECTORS (SX / LANES)
#define SLOT_VECTORS (ROW_VECTORS * SY)
#define THREADS (FDT_BX * FDT_BY)
#define COPIES ((SLOT_VECTORS + THREADS - 1) / THREADS) /* a thread's copies a plane */

static_assert(FDT_SHARED_BYTES == SLOTS * PLANE * sizeof(real),
              "the ring is not the size engine/variant.c gives the launch");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(__HIPCC_RTC__)
/* One 16-byte copy from global to shared memory, bypassing L1 and the registers; bytes 0
 * zero-fills the vector and reads nothing. */
__device__ __forceinline__ void copy_vector(real *to, const real *from, bool on)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(to);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(from),
                 "r"(on ? 16 : 0));
}
__device__ __forceinline__ void copies_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/* Waits until at most FDT_AHEAD - 1 groups (planes) of this thread's copies are in flight. */
__device__ __forceinline__ void copies_wait_ahead()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(FDT_AHEAD - 1));
}
#else
__device__ __forceinline__ void copy_vector(real *to, const real *from, bool on)
{
    lanes l;
    if (on)
        l.v = vector_at(from);
    else
#pragma unroll
        for (int e = 0; e < LANES; e++)
            l.e[e] = 0;
    *reinterpret_cast<vec_t *>(to) = l.v;
}
__device__ __forceinline__ void copies_commit() {}
__device__ __forceinline__ void copies_wait_ahead() {}
#endif

/* A thread's share of each plane's copies: where each lands in a slot (-1: none), where it
 * comes from in a plane of u, and whether it starts on the grid (a vector that starts
 * before nx may end in the row's padding, inside the pitch, which no interior point reads). */
struct ring_copies {
    int to[COPIES];
    idx_t from[COPIES];
    bool on[COPIES];
};

__device__ __forceinline__ void place_copies(ring_copies &c, int tid, int i0, int j0, int nx,
                                             int ny, idx_t line)
{
#pragma unroll
    for (int s = 0; s < COPIES; s++) {
        const int e = tid + s * THREADS, row = e / ROW_VECTORS, col = e % ROW_VECTORS;
        const int gi = i0 - HX + LANES * col, gj = j0 - R + row;
        c.on[s] = e < SLOT_VECTORS && gi >= 0 && gi < nx && gj >= 0 && gj < ny;
        c.to[s] = e < SLOT_VECTORS ? row * SX + LANES * col : -1;
        c.from[s] = c.on[s] ? gi + line * gj : 0;
    }
}

/* Issues this thread's copies of plane p (none past the last plane read) as one group. */
__device__ __forceinline__ void copy_plane(real *ring, const ring_copies &c, const real *u,
                                           idx_t slice, int p, int last)
{
    if (p < last) {
        real *slot = ring + (p % SLOTS) * PLANE;
#pragma unroll
        for (int s = 0; s < COPIES; s++)
            if (c.to[s] >= 0)
                copy_vector(slot + c.to[s], u + c.from[s] + slice * p, c.on[s]);
    }
    copies_commit(); /* empty groups too: one group a plane keeps the wait's count */
}

__device__ __forceinline__ lanes slot_vector(const real *at)
{
    lanes l;
    l.v = *reinterpret_cast<const vec_t *>(at);
    return l;
}

/* Row q's output vector of plane k: s is the thread's row 0 in plane k's slot, col its
 * column of rows -R .. FDT_M + R - 1, lo the planes k - R .. k - 1 from registers. Each
 * axis's sum takes the weights as constants and only then its coefficient (cx, cy, cz, the
 * kernel's arguments): the 3R + 1 products of make_coeffs would hold as many registers,
 * which at R = 4 in double cost a block of residency. */
__device__ __forceinline__ lanes ring_star(const real *ring, const real *s, int own, int k,
                                           int q, const lanes *col, const lanes *lo, real cx,
                                           real cy, real cz)
{
    real row[2 * HX + LANES];
#pragma unroll
    for (int h = 0; h <= 2 * HV; h++) {
        const lanes x = h == HV ? col[q + R] : slot_vector(s + q * SX + LANES * (h - HV));
#pragma unroll
        for (int e = 0; e < LANES; e++)
            row[LANES * h + e] = x.e[e];
    }
    lanes sx, sy, sz;
#pragma unroll
    for (int e = 0; e < LANES; e++)
        sx.e[e] = sy.e[e] = sz.e[e] = (real)fdt_weight(0) * row[HX + e];
#pragma unroll
    for (int r = 1; r <= R; r++) {
        const real w = (real)fdt_weight(r);
        const lanes up = slot_vector(ring + ((k + r) % SLOTS) * PLANE + own + q * SX);
#pragma unroll
        for (int e = 0; e < LANES; e++) {
            sx.e[e] += w * (row[HX + e - r] + row[HX + e + r]);
            sy.e[e] += w * (col[q + R - r].e[e] + col[q + R + r].e[e]);
            sz.e[e] += w * (lo[r - 1].e[e] + up.e[e]);
        }
    }
    lanes out;
#pragma unroll
    for (int e = 0; e < LANES; e++)
        out.e[e] = cx * sx.e[e] + cy * sy.e[e] + cz * sz.e[e];
    return out;
}

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    pitch = row_pitch(pitch, nx);
#ifdef FDT_CPU
    __shared__ vec_t ring_vectors[SLOTS * PLANE / LANES]; /* one per OS thread (cpu.c) */
#else
    extern __shared__ vec_t ring_vectors[];
#endif
    real *ring = reinterpret_cast<real *>(ring_vectors);
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (k0 >= nz - R)
        return; /* uniform across the block, so no barrier is left waiting */
    const int k1 = min(k0 + FDT_MZ, nz - R), last = k1 + R; /* planes < last are read */
    const int tid = threadIdx.x + FDT_BX * threadIdx.y;
    const int i0 = BLOCK_X * TX, j0 = BLOCK_Y * TY;
    const int i = i0 + LANES * threadIdx.x, jtop = j0 + FDT_M * threadIdx.y;
    const int own = (R + FDT_M * threadIdx.y) * SX + HX + LANES * threadIdx.x;
    const idx_t line = pitch, slice = line * ny;
    const bool whole = i >= R && i + LANES <= nx - R;
    ring_copies cp;
    place_copies(cp, tid, i0, j0, nx, ny, line);

    lanes lo[FDT_M][R]; /* lo[q][r - 1]: row q of plane k - r */
#pragma unroll
    for (int q = 0; q < FDT_M; q++) {
        const bool in = i < nx && jtop + q < ny;
        const idx_t pos = i + line * (jtop + q);
#pragma unroll
        for (int r = 1; r <= R; r++)
#pragma unroll
            for (int e = 0; e < LANES; e++) /* a row off the grid is never stored */
                lo[q][r - 1].e[e] = in ? u[pos + slice * (k0 - r) + e] : 0;
    }
    for (int p = k0; p < k0 + R + FDT_AHEAD; p++)
        copy_plane(ring, cp, u, slice, p, last);

    for (int k = k0; k < k1; k++) {
        copies_wait_ahead();
        __syncthreads();
        copy_plane(ring, cp, u, slice, k + R + FDT_AHEAD, last);
        const real *s = ring + (k % SLOTS) * PLANE + own;
        lanes col[FDT_M + 2 * R];
#pragma unroll
        for (int y = 0; y < FDT_M + 2 * R; y++)
            col[y] = slot_vector(s + (y - R) * SX);
#pragma unroll
        for (int q = 0; q < FDT_M; q++) {
            const lanes out = ring_star(ring, s, own, k, q, col, lo[q], cx, cy, cz);
            const int j = jtop + q;
            if (i < nx && interior(j, ny))
                store_lanes(f + i + line * j + slice * k, out, i, nx, whole);
#pragma unroll
            for (int r = R - 1; r > 0; r--)
                lo[q][r] = lo[q][r - 1];
            lo[q][0] = col[q + R];
        }
    }
}
