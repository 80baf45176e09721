/* zmarch.hip - each thread owns one (i, j) column and walks FDT_MZ planes up in z, keeping
 * the 2R+1 values of u it needs in z in registers: every plane's u is read from memory once
 * per column for the z terms, and the x and y neighbours come from the caches. Blocks are
 * FDT_BX x FDT_BY x 1; grid z counts chunks of FDT_MZ interior planes. */

#define WIN (2 * R + 1) /* u at planes k-R .. k+R */

extern "C" __global__ FDT_BOUNDS void fdt_laplacian(FDT_KERNEL_ARGS)
{
    pitch = row_pitch(pitch, nx);
    const int i = threadIdx.x + BLOCK_X * FDT_BX;
    const int j = threadIdx.y + BLOCK_Y * FDT_BY;
    const int k0 = R + BLOCK_Z * FDT_MZ;
    if (!interior(i, nx) || !interior(j, ny) || k0 >= nz - R)
        return;
    const int planes = min(FDT_MZ, nz - R - k0);
    const idx_t line = pitch;
    const idx_t slice = (idx_t)pitch * ny;
    const coeffs c = make_coeffs(cx, cy, cz);
    idx_t pos = i + line * j + slice * k0;

    real win[WIN];
#pragma unroll
    for (int q = 0; q < WIN - 1; q++)
        win[q] = u[pos + (q - R) * slice];

    /* Unrolled over all FDT_MZ planes, with an exit for the last chunk: the window's shifts
     * become register renames, and the loads of later planes can be issued before earlier
     * planes are done, which a loop bounded at run time does not allow. */
#pragma unroll
    for (int m = 0; m < FDT_MZ; m++, pos += slice) {
        if (m == planes)
            break;
        win[WIN - 1] = u[pos + R * slice];
        real acc = c.c0 * win[R];
#pragma unroll
        for (int r = 1; r <= R; r++)
            acc += c.z[r] * (win[R - r] + win[R + r])
                 + c.y[r] * (u[pos - r * line] + u[pos + r * line])
                 + c.x[r] * (u[pos - r] + u[pos + r]);
        store_f(&f[pos], acc);
#pragma unroll
        for (int q = 0; q < WIN - 1; q++)
            win[q] = win[q + 1];
    }
}
