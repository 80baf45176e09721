/* snaive.hip - kernel 1 of a user's stencil spec: one thread per interior point, every tap
 * read from global memory, as the seeds' kernel 1 does for the Laplacian. The spec's code
 * comes before common.h as macros (tuner/engine/spec_code.c): FDT_SPEC_ARGS, the kernel's
 * parameters (outputs, inputs, coefficient fields, nx, ny, nz, pitch,
 * constants), and
 * FDT_SPEC_POINT(pos, line, slice), which writes every output at pos. */

extern "C" __global__ FDT_BOUNDS void fdt_spec(FDT_SPEC_ARGS)
{
    pitch = row_pitch(pitch, nx);
    const int i = threadIdx.x + BLOCK_X * blockDim.x;
    const int j = threadIdx.y + BLOCK_Y * blockDim.y;
    const int k = threadIdx.z + BLOCK_Z * blockDim.z;
    if (!interior(i, nx) || !interior(j, ny) || !interior(k, nz))
        return;
    const idx_t line = pitch;
    const idx_t slice = (idx_t)pitch * ny;
    const idx_t pos = i + line * j + slice * k;
    FDT_SPEC_POINT(pos, line, slice);
}
