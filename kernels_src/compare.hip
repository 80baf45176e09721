/* compare.hip - verification on the device: compares every point of a variant's output
 * with the reference output. Interior points: the largest |out - ref| in the point's own
 * tolerance (the host's bound on rounding there, runner.c; a NaN output, or an error where
 * the tolerance is 0, counts as infinitely wrong). Every other point of the buffer: how many
 * no longer hold the poison written before the run (a kernel wrote where it must not): the
 * boundary, the row padding from nx to the pitch and the offset's points before (0,0,0).
 * So unlike the stencils' kernels, compare takes the buffers' bases, not their point
 * (0,0,0), and the layout's offset with its pitch: it walks the whole storage. Each thread
 * strides over the grid and leaves its two partial results in partial[2*thread..]; a
 * second launch folds them into a few (fold_partials), which the host reduces. One entry
 * point for both launches, its last argument saying which, since the cpu backend builds one
 * launcher per compile. Compare launched with block FDT_BX x 1 x 1. */

/* Whether storage point p (from the buffer's base) is an interior point of the grid. */
__device__ __forceinline__ bool interior_at(idx_t p, int nx, int ny, int nz, int pitch,
                                            int offset)
{
    if (p < offset)
        return false;
    const idx_t c = p - offset;
    const int i = (int)(c % pitch), j = (int)(c / pitch % ny), k = (int)(c / ((idx_t)pitch * ny));
    return interior(i, nx) && interior(j, ny) && interior(k, nz);
}

__device__ void compare_points(const real *out, const unsigned *out_words, const real *ref,
                               const float *tolerance, int nx, int ny, int nz, int pitch,
                               int offset, unsigned poison, double *partial)
{
    const idx_t threads = (idx_t)gridDim.x * blockDim.x;
    const idx_t first = threadIdx.x + (idx_t)blockIdx.x * blockDim.x;
    const idx_t points = offset + (idx_t)pitch * ny * nz;
    const int words = sizeof(real) / sizeof(unsigned);
    double worst = 0, boundary_bad = 0;
    for (idx_t p = first; p < points; p += threads) {
        if (interior_at(p, nx, ny, nz, pitch, offset)) {
            const double o = out[p], r = ref[p], t = tolerance[p];
            const double err = o != o ? 1.0 / 0.0 : (o > r ? o - r : r - o);
            const double e = err == 0 ? 0 : t > 0 ? err / t : 1.0 / 0.0;
            worst = e > worst ? e : worst;
        } else {
            for (int w = 0; w < words; w++)
                if (out_words[p * words + w] != poison) {
                    boundary_bad += 1;
                    break;
                }
        }
    }
    partial[2 * first] = worst;
    partial[2 * first + 1] = boundary_bad;
}

/* Folds compare_points' count partials into the first blockDim.x of them, so that the host
 * reads a few thousand bytes instead of one partial per thread (4 MB at 512^3, a
 * millisecond of download and host loop for every variant verified). One block; thread t
 * reads partials t + blockDim.x, t + 2 blockDim.x, ... and writes partial t alone, which no
 * other thread reads: no barrier is needed, so every backend runs it as it is. */
__device__ void fold_partials(double *partial, long long count)
{
    const long long t = threadIdx.x;
    if (t >= count)
        return;
    double worst = partial[2 * t], bad = partial[2 * t + 1];
    for (long long q = t + blockDim.x; q < count; q += blockDim.x) {
        worst = partial[2 * q] > worst ? partial[2 * q] : worst;
        bad += partial[2 * q + 1];
    }
    partial[2 * t] = worst;
    partial[2 * t + 1] = bad;
}

/* fold == 0: compare every point; fold > 0: fold that many partials. */
extern "C" __global__ void fdt_compare(const real *out, const unsigned *out_words,
                                       const real *ref, const float *tolerance, int nx, int ny,
                                       int nz, int pitch, int offset, unsigned poison,
                                       double *partial, long long fold)
{
    if (fold > 0)
        fold_partials(partial, fold);
    else
        compare_points(out, out_words, ref, tolerance, nx, ny, nz, pitch, offset, poison,
                       partial);
}
