/* balance.c - a device's balance, see balance.h: the copy timed as every ceiling is
 * (fdt_copy_enqueue), and the L2 kernel, both with fdt_time. */
#include "engine/balance.h"

#include <string.h>
#include <time.h>

/* kernels_src/l2read.hip, common.h prepended, embedded at build time (see Makefile). */
extern const char fdt_kernel_source_l2read[];

enum {
    COPY_MIN_BYTES = 64 << 20,
    L2_MAX_BYTES = 256 << 20, /* every offset fits an int */
    L2_PASSES = 16,           /* so that a launch outlasts the gap between two launches */
    BLOCKS_PER_CU = 4,        /* 1024 threads per CU on a GPU: enough loads in flight */
    GPU_THREADS = 256,
};

/* Doubles, the widest load every backend has. common.h, prepended, wants a radius. */
static const char *const l2_defines[] = {"FDT_REAL=double", "FDT_IDX=int", "FDT_RADIUS=1"};

/* What the buffers are filled with: 0x3f8000003f800000 is a double near 0.008, neither NaN
 * nor denormal, so that summing it runs at full speed on a CPU too. */
#define FILL 0x3f800000u

const char *fdt_l2_read_kernel(const char *const **defines, size_t *count)
{
    *defines = l2_defines;
    *count = sizeof l2_defines / sizeof l2_defines[0];
    return fdt_kernel_source_l2read;
}

size_t fdt_l2_read_launch(const fdt_device_info *dev, fdt_l2_launch *out)
{
    /* Where a block's threads run one after another (the cpu backend: a kernel without
     * barriers, like this one, never runs as a team), a block of one thread reads its chunk
     * in order. */
    const unsigned threads = strcmp(dev->backend, "cpu") == 0 ? 1 : GPU_THREADS;
    const size_t granule = 4 * (size_t)threads;
    const uint64_t half = dev->l2_bytes / 2 < L2_MAX_BYTES ? dev->l2_bytes / 2 : L2_MAX_BYTES;
    const size_t elements = (size_t)half / sizeof(double);
    size_t blocks = (size_t)(dev->compute_units > 0 ? dev->compute_units : 1) * BLOCKS_PER_CU;
    if (blocks > elements / granule)
        blocks = elements / granule;
    *out = (fdt_l2_launch){.grid = {(unsigned)blocks, 1, 1}, .block = {threads, 1, 1},
                           .passes = L2_PASSES};
    if (blocks == 0)
        return 0;
    out->chunk = (int)(elements / blocks / granule * granule);
    return (size_t)out->chunk * blocks;
}

/* Four times the L2 and at least 64 MiB, so that the copy streams from memory rather than
 * from L2; at most an eighth of the memory per buffer. */
static size_t copy_bytes(const fdt_device_info *dev)
{
    uint64_t bytes = 4 * dev->l2_bytes > COPY_MIN_BYTES ? 4 * dev->l2_bytes : COPY_MIN_BYTES;
    if (dev->memory_bytes && bytes > dev->memory_bytes / 8)
        bytes = dev->memory_bytes / 8;
    return (size_t)(bytes / 4096 * 4096);
}

/* A buffer written once before anything is timed: no page is first touched while timed,
 * and the cpu backend reads no shared page of zeros. *p stays 0 if allocation fails. */
static fdt_status alloc_filled(const fdt_backend_ops *ops, fdt_backend *b, size_t bytes,
                               fdt_devptr *p, fdt_error *err)
{
    fdt_status s = ops->alloc(b, bytes, p, err);
    if (s == FDT_OK)
        s = ops->fill32(b, *p, FILL, bytes / 4, err);
    return s;
}

/* The statistics of what fdt_time gathered. */
static fdt_status timed(const fdt_backend_ops *ops, fdt_backend *b, fdt_enqueue_fn enqueue,
                        void *ctx, const fdt_timing *timing, fdt_stats *st, fdt_error *err)
{
    fdt_samples acc = {0};
    const fdt_status s = fdt_time(ops, b, enqueue, ctx, timing, &acc, err);
    fdt_samples_stats(&acc, st);
    fdt_samples_free(&acc);
    return s;
}

/* The copy's speed, and its samples' spread into *spread (NULL: not wanted). */
static fdt_status time_copy(const fdt_backend_ops *ops, fdt_backend *b, const fdt_timing *timing,
                            double *gbps, double *spread, fdt_error *err)
{
    fdt_device_copy c = {.ops = ops, .backend = b, .bytes = copy_bytes(ops->info(b))};
    fdt_stats st = {0};
    fdt_status s = alloc_filled(ops, b, c.bytes, &c.src, err);
    if (s == FDT_OK)
        s = alloc_filled(ops, b, c.bytes, &c.dst, err);
    if (s == FDT_OK)
        s = timed(ops, b, fdt_copy_enqueue, &c, timing, &st, err);
    if (s == FDT_OK) {
        *gbps = fdt_copy_gbps((double)c.bytes, st.median_ms);
        if (spread)
            *spread = fdt_stats_spread(&st);
    }
    if (c.src)
        ops->free(b, c.src);
    if (c.dst)
        ops->free(b, c.dst);
    return s;
}

fdt_status fdt_balance_copy(const fdt_backend_ops *ops, fdt_backend *b,
                            const fdt_timing *timing, double *gbps, fdt_error *err)
{
    return time_copy(ops, b, timing, gbps, NULL, err);
}

/* One launch of the L2 kernel, as fdt_time enqueues it. */
typedef struct l2_run {
    const fdt_backend_ops *ops;
    fdt_backend *b;
    fdt_kernel *k;
    fdt_l2_launch launch;
    fdt_devptr out, in;
    void *args[4];
} l2_run;

static fdt_status l2_enqueue(void *ctx, fdt_error *err)
{
    l2_run *r = ctx;
    return r->ops->launch(r->b, r->k, r->launch.grid, r->launch.block, r->args, err);
}

static fdt_status l2_load(l2_run *r, fdt_error *err)
{
    const char *const *defines;
    size_t count;
    const char *source = fdt_l2_read_kernel(&defines, &count);
    fdt_code code = {0};
    fdt_status s = r->ops->compile(r->ops->info(r->b)->arch, source, "fdt_l2_read", defines,
                                   count, &code, err);
    if (s == FDT_OK)
        s = r->ops->load(r->b, &code, "fdt_l2_read", &r->k, err);
    fdt_code_free(&code);
    return s;
}

/* Bytes read (the buffer, passes times) and written (a value per thread) per launch. */
static double l2_bytes_moved(const l2_run *r, size_t elements)
{
    const double threads = (double)r->launch.grid.x * r->launch.block.x;
    return ((double)r->launch.passes * (double)elements + threads) * sizeof(double);
}

static fdt_status measure_l2(const fdt_backend_ops *ops, fdt_backend *b,
                             const fdt_timing *timing, double *gbps, fdt_error *err)
{
    l2_run r = {.ops = ops, .b = b};
    const size_t elements = fdt_l2_read_launch(ops->info(b), &r.launch);
    if (elements == 0) /* no L2 size to fit the buffer in: nothing to measure */
        return FDT_OK;
    const size_t threads = (size_t)r.launch.grid.x * r.launch.block.x;
    void *args[] = {&r.out, &r.in, &r.launch.chunk, &r.launch.passes};
    memcpy(r.args, args, sizeof args);
    fdt_stats st = {0};
    fdt_status s = l2_load(&r, err);
    if (s == FDT_OK)
        s = alloc_filled(ops, b, elements * sizeof(double), &r.in, err);
    if (s == FDT_OK)
        s = ops->alloc(b, threads * sizeof(double), &r.out, err);
    if (s == FDT_OK)
        s = timed(ops, b, l2_enqueue, &r, timing, &st, err);
    if (s == FDT_OK)
        *gbps = fdt_gbps(l2_bytes_moved(&r, elements), st.median_ms);
    if (r.in)
        ops->free(b, r.in);
    if (r.out)
        ops->free(b, r.out);
    if (r.k)
        ops->unload(b, r.k);
    return s;
}

fdt_status fdt_balance_measure(const fdt_backend_ops *ops, fdt_backend *b,
                               const fdt_timing *timing, fdt_balance *out, fdt_error *err)
{
    *out = (fdt_balance){0};
    fdt_status s = time_copy(ops, b, timing, &out->copy_gbps, &out->copy_spread, err);
    if (s == FDT_OK)
        s = measure_l2(ops, b, timing, &out->l2_gbps, err);
    if (s == FDT_OK)
        out->measured = (int64_t)time(NULL);
    else
        *out = (fdt_balance){0};
    return s;
}
