/* copy.hip - the interior copy, the ceiling beside the device copy: u's interior points
 * copied to f's, the R outermost layers left alone. It moves the bytes a stencil's output
 * costs (the partly written sectors at the ends of f's rows included) with no neighbours
 * to read, so best / interior copy says how far a stencil is from what its own writes
 * allow. Plain copies: one point per thread (FDT_MZ 1) or FDT_MZ planes marched in z; the
 * fastest of a few shapes is the ceiling (fdt_interior_copy_kernel).
 *
 * Signature: fdt_interior_copy(real *f, const real *u, int nx, int ny, int nz, int pitch)
 * (rows pitch points apart, as every kernel's: common.h), block
 * (FDT_BX, FDT_BY, 1), grid (ceil(nx / FDT_BX), ceil(ny / FDT_BY), chunks of FDT_MZ
 * interior planes). */

extern "C" __global__ FDT_BOUNDS void fdt_interior_copy(real *__restrict__ f,
                                                        const real *__restrict__ u, int nx,
                                                        int ny, int nz, int pitch)
{
    const int i = threadIdx.x + blockIdx.x * FDT_BX;
    const int j = threadIdx.y + blockIdx.y * FDT_BY;
    const int k0 = R + blockIdx.z * FDT_MZ;
    if (!interior(i, nx) || !interior(j, ny) || k0 >= nz - R)
        return;
    const int planes = min(FDT_MZ, nz - R - k0);
    const idx_t slice = (idx_t)pitch * ny;
    idx_t pos = i + (idx_t)pitch * j + slice * k0;
#pragma unroll
    for (int m = 0; m < FDT_MZ; m++, pos += slice) {
        if (m == planes)
            break;
        f[pos] = u[pos];
    }
}
