/* l2read.hip - the device's L2 bandwidth (tuner/engine/balance.c): a read-mostly kernel over
 * a buffer that fits in L2, launched again and again, so that after the first launch every
 * read is served by L2. Measured once per device and stored with its fingerprint, beside
 * the copy's bandwidth: how much faster a stencil may go when its neighbours' planes stay
 * in L2 than when every read goes to memory.
 *
 * The buffer is cut into one chunk per block. In pass p block b reads chunk (b + p) mod
 * blocks, its threads side by side (coalesced on a GPU; where a block's threads run one
 * after another, the cpu backend, a block of one thread reads the chunk in order): a chunk
 * is never read twice by the same block, so that no pass is served by the L1 of the SM that
 * read it before (up to 256 KiB on an H100: more than its four blocks read per pass, so the
 * figure would be L1's, not L2's). Four sums per thread so that four loads are in
 * flight; the sums are written, one value per thread, so that no compiler may drop the
 * reads. chunk is a multiple of 4 * blockDim.x.
 *
 * Signature: fdt_l2_read(real *out, const real *in, int chunk, int passes), any block
 * (bx, 1, 1) and grid (blocks, 1, 1); out holds blocks * bx values. */

extern "C" __global__ void fdt_l2_read(real *__restrict__ out, const real *__restrict__ in,
                                       int chunk, int passes)
{
    const int step = blockDim.x, blocks = gridDim.x;
    int c = blockIdx.x;
    real a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int pass = 0; pass < passes; pass++) {
        const real *p = in + (idx_t)chunk * c + threadIdx.x;
        for (int i = 0; i < chunk; i += 4 * step) {
            a0 += p[i];
            a1 += p[i + step];
            a2 += p[i + 2 * step];
            a3 += p[i + 3 * step];
        }
        c = c + 1 == blocks ? 0 : c + 1;
    }
    out[threadIdx.x + (idx_t)blockIdx.x * step] = a0 + a1 + a2 + a3;
}
