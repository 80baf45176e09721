/* runner.c - the device buffers of one problem, the random input, the host reference that
 * checks the reference kernel, and per-variant verification and timing.
 *
 * Every buffer holds the problem's storage (common/problem.h's layout: the offset's points,
 * then rows pitch points apart); kernels get each buffer's point (0,0,0). The inputs are
 * random at every storage point, padding included, so a kernel that strides rows by nx
 * instead of the pitch reads other values; the outputs are poisoned at every storage
 * point, and every point but the interior must still hold the poison after a run, so one
 * that writes by nx, or into the padding or the offset, is caught.
 *
 * Why two references: comparing every variant's full output on the host would copy the
 * whole grid back for each variant; instead the seeds' kernel 1 runs once, is checked
 * point by point against a plain host implementation, and its output stays on the device
 * as the reference that the compare kernel checks every variant against. */
#include "engine/runner.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A NaN as float (0x7ff87ff8) and as two halves of a double (0x7ff87ff8 7ff87ff8). */
#define POISON 0x7ff87ff8u
/* A point's tolerance: twice the most rounding may move a right output there (the
 * stencil's bound at the point, k * eps * sum |c * x| with k its terms and a few more,
 * fdt_rounding_bound), since the output and what it is compared with (the host's doubles,
 * or kernel 1 in the same precision) may each be off by that much. A wrong tap moves a
 * point by a weight times a field's value: read one point off at the smallest weight of an
 * 8th-order derivative, it leaves a point 98 tolerances off in float on 13x17x11
 * (test_a_wrong_tap_is_caught). Each point is judged by its own sum, so a small output is
 * held as tightly as a large one.
 * test_cpu_backend's test_tolerances_are_pinned fails if this moves past what it must
 * catch or what it must let pass. */
static double point_tolerance(fdt_precision precision, double rounding)
{
    return 2 * fdt_unit_roundoff(precision) * rounding;
}

/* |o - ref| in tolerances; a NaN output is infinitely wrong, and where no rounding can
 * happen (every term zero) any error is. */
static double in_tolerances(double o, double ref, double tolerance)
{
    const double err = isnan(o) ? INFINITY : fabs(o - ref);
    return err == 0 ? 0 : tolerance > 0 ? err / tolerance : INFINITY;
}
/* Grid spacings, different per axis so that a kernel which swaps axes is caught. */
static const double spacing[3] = {1.0, 1.3, 0.7};

static double splitmix_unit(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* Uniform in [-1, 1): never constant, rarely zero, so neither a constant Laplacian nor
 * an unwritten output can pass for a right answer. */
static void fill_random(void *u, size_t n, fdt_precision prec, unsigned seed)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        const double v = 2.0 * splitmix_unit(seed, i) - 1.0;
        if (prec == FDT_FLOAT)
            ((float *)u)[i] = (float)v;
        else
            ((double *)u)[i] = v;
    }
}

static double load(const void *u, fdt_precision prec, size_t i)
{
    return prec == FDT_FLOAT ? ((const float *)u)[i] : ((const double *)u)[i];
}

/* Output `output` of the stencil at every interior point of the inputs in, in double, into
 * out (the host reference), and each point's tolerance into tolerance (0 elsewhere); every
 * grid in the problem's storage layout. */
static void host_reference(const fdt_runner *r, const void *const *in, int output, double *out,
                           float *tolerance)
{
    const fdt_problem *p = &r->problem;
    const int R = p->radius;
    const size_t line = (size_t)fdt_problem_pitch(p), slice = line * p->ny;
#pragma omp parallel for schedule(static)
    for (int k = R; k < p->nz - R; k++)
        for (int j = R; j < p->ny - R; j++)
            for (int i = R; i < p->nx - R; i++) {
                const size_t at = (size_t)p->offset + i + line * j + slice * k;
                double rounding;
                out[at] = fdt_stencil_point(r->stencil, p, in, r->coeffs, output, at, &rounding);
                tolerance[at] = (float)point_tolerance(p->precision, rounding);
            }
}

/* Whether storage point at (from the buffer's base) is an interior point of the grid; the
 * offset's points and the row padding are not. */
static int is_interior(const fdt_problem *p, size_t at)
{
    const int R = p->radius;
    if (at < (size_t)p->offset)
        return 0;
    const size_t c = at - (size_t)p->offset, line = (size_t)fdt_problem_pitch(p);
    const size_t i = c % line, j = c / line % p->ny, k = c / (line * p->ny);
    return i >= (size_t)R && i < (size_t)(p->nx - R) && j >= (size_t)R &&
           j < (size_t)(p->ny - R) && k >= (size_t)R && k < (size_t)(p->nz - R);
}

/* The host side of verification: out (as the device left it) against the host reference,
 * at every storage point: the interior in tolerances, the rest still poison. */
static void host_verdict(const fdt_problem *p, const void *out, const double *ref,
                         const float *tolerance, fdt_verdict *v)
{
    const size_t n = fdt_problem_storage_points(p);
    const size_t words = fdt_real_size(p->precision) / sizeof(uint32_t);
    double worst = 0, bad = 0;
#pragma omp parallel for reduction(max : worst) reduction(+ : bad)
    for (size_t c = 0; c < n; c++) {
        if (is_interior(p, c)) {
            const double e = in_tolerances(load(out, p->precision, c), ref[c], tolerance[c]);
            worst = e > worst ? e : worst;
        } else {
            for (size_t w = 0; w < words; w++)
                if (((const uint32_t *)out)[c * words + w] != POISON) {
                    bad += 1;
                    break;
                }
        }
    }
    v->error = worst;
    v->boundary_bad = bad;
}

static int verdict_passes(const fdt_verdict *v)
{
    return v->error <= 1 && v->boundary_bad == 0;
}

/* The defines of the runner's own kernels (compare, persist): 256 threads in x. */
static const fdt_variant helper_variant = {.family = NULL, .bx = 256, .by = 1, .bz = 1, .m = 1,
                                           .mz = 1};

static fdt_status compile_and_load(fdt_runner *r, const char *source, const char *entry,
                                   const fdt_variant *v, fdt_kernel **out, fdt_error *err)
{
    fdt_defines defines;
    fdt_variant_defines(v, &r->problem, &defines);
    fdt_code code = {0};
    fdt_status s = r->ops->compile(r->ops->info(r->backend)->arch, source, entry, defines.list,
                                   defines.count, &code, err);
    if (s == FDT_OK)
        s = r->ops->load(r->backend, &code, entry, out, err);
    fdt_code_free(&code);
    return s;
}

typedef struct launch_ctx {
    fdt_runner *r;
    fdt_kernel *k;
    fdt_dim3 grid, block;
    void *args[2 * FDT_STENCIL_FIELDS_MAX + 4 + FDT_STENCIL_COEFFS_MAX];
    double coeffs[FDT_STENCIL_COEFFS_MAX];
    float fcoeffs[FDT_STENCIL_COEFFS_MAX];
} launch_ctx;

static void launch_setup(launch_ctx *c, fdt_runner *r, fdt_kernel *k, const fdt_variant *v)
{
    c->r = r;
    c->k = k;
    fdt_variant_geometry(v, &r->problem, &c->grid, &c->block);
    const int single = r->problem.precision == FDT_FLOAT;
    const fdt_stencil *st = r->stencil;
    size_t n = 0;
    for (int i = 0; i < st->outputs; i++)
        c->args[n++] = &r->out0[i];
    for (int i = 0; i < st->inputs; i++)
        c->args[n++] = &r->in0[i];
    c->args[n++] = &r->problem.nx;
    c->args[n++] = &r->problem.ny;
    c->args[n++] = &r->problem.nz;
    c->args[n++] = &r->pitch;
    for (size_t i = 0; i < st->ncoeffs; i++) {
        c->coeffs[i] = r->coeffs[i];
        c->fcoeffs[i] = (float)r->coeffs[i];
        c->args[n++] = single ? (void *)&c->fcoeffs[i] : (void *)&c->coeffs[i];
    }
}

static fdt_status launch_enqueue(void *ctx, fdt_error *err)
{
    launch_ctx *c = ctx;
    return c->r->ops->launch(c->r->backend, c->k, c->grid, c->block, c->args, err);
}

/* Ends a timed region begun with timer_start, waiting for it (a hang becomes FDT_TIMEOUT);
 * its time counts as the job's GPU time and goes to *ms. */
static fdt_status wait_counted(fdt_runner *r, double *ms, fdt_error *err)
{
    const fdt_status s = r->ops->timer_stop(r->backend, r->timing.timeout_ms, ms, err);
    if (s == FDT_OK)
        r->gpu_ms += *ms;
    return s;
}

/* One launch, waited for and counted (wait_counted). */
static fdt_status launch_and_wait(fdt_runner *r, fdt_kernel *k, fdt_dim3 grid, fdt_dim3 block,
                                  void **args, double *ms, fdt_error *err)
{
    fdt_status s = r->ops->timer_start(r->backend, err);
    if (s == FDT_OK)
        s = r->ops->launch(r->backend, k, grid, block, args, err);
    return s == FDT_OK ? wait_counted(r, ms, err) : s;
}

/* Poison every output, run once, wait; *ms: how long the launch took. The poisoning is
 * device work of the job too, so both count as GPU time. */
static fdt_status run_once(fdt_runner *r, fdt_kernel *k, const fdt_variant *v, double *ms,
                           fdt_error *err)
{
    launch_ctx c;
    launch_setup(&c, r, k, v);
    const fdt_backend_ops *o = r->ops;
    double total = 0;
    fdt_status s = o->timer_start(r->backend, err);
    for (int i = 0; s == FDT_OK && i < r->stencil->outputs; i++)
        s = o->fill32(r->backend, r->out[i], POISON, r->storage_bytes / 4, err);
    if (s == FDT_OK)
        s = o->timer_lap(r->backend, err);
    if (s == FDT_OK)
        s = o->launch(r->backend, k, c.grid, c.block, c.args, err);
    if (s == FDT_OK)
        s = wait_counted(r, &total, err);
    return s == FDT_OK ? o->timer_split(r->backend, 1, ms, err) : s;
}

/* fdt_compare_fold's threads: as many partials as the host then reads. */
#define FOLD_THREADS 1024

static size_t folded_count(const fdt_runner *r)
{
    return r->partial_count < FOLD_THREADS ? r->partial_count : FOLD_THREADS;
}

/* Output i against its reference, on the device: the compare kernel's partials, folded, then
 * read back (the worst point in tolerances, boundary points written). The compare walks the
 * whole buffers from their bases (compare.hip). */
static fdt_status compare_output(fdt_runner *r, int i, double *worst, double *bad,
                                 fdt_error *err)
{
    unsigned poison = POISON;
    long long compare = 0, fold = (long long)r->partial_count;
    fdt_problem *p = &r->problem;
    void *args[] = {&r->out[i], &r->out[i], &r->ref[i], &r->tolerance[i], &p->nx, &p->ny,
                    &p->nz, &r->pitch, &p->offset, &poison, &r->partial, &compare};
    void *fold_args[] = {&r->out[i], &r->out[i], &r->ref[i], &r->tolerance[i], &p->nx, &p->ny,
                         &p->nz, &r->pitch, &p->offset, &poison, &r->partial, &fold};
    const size_t folded = folded_count(r);
    const fdt_dim3 one = {1, 1, 1}, fold_block = {(unsigned)folded, 1, 1};
    double ms;
    fdt_status s = r->ops->timer_start(r->backend, err);
    if (s == FDT_OK)
        s = r->ops->launch(r->backend, r->compare, r->compare_grid, r->compare_block, args, err);
    if (s == FDT_OK)
        s = r->ops->launch(r->backend, r->compare, one, fold_block, fold_args, err);
    if (s == FDT_OK)
        s = wait_counted(r, &ms, err);
    if (s == FDT_OK)
        s = r->ops->download(r->backend, r->partial_host, r->partial,
                             folded * 2 * sizeof(double), err);
    for (size_t t = 0; s == FDT_OK && t < folded; t++) {
        const double *q = &r->partial_host[2 * t];
        *worst = q[0] > *worst ? q[0] : *worst;
        *bad += q[1];
    }
    return s;
}

/* Every output against its reference; the verdict is the worst point of any output and
 * every output's boundary points written. */
static fdt_status device_verdict(fdt_runner *r, fdt_verdict *v, fdt_error *err)
{
    fdt_status s = FDT_OK;
    v->error = 0;
    v->boundary_bad = 0;
    for (int i = 0; s == FDT_OK && i < r->stencil->outputs; i++)
        s = compare_output(r, i, &v->error, &v->boundary_bad, err);
    return s;
}

fdt_status fdt_runner_verify(fdt_runner *r, fdt_kernel *k, const fdt_variant *v,
                             fdt_verdict *verdict, fdt_error *err)
{
    double ms = 0;
    fdt_status s = run_once(r, k, v, &ms, err);
    if (s == FDT_OK)
        s = device_verdict(r, verdict, err);
    verdict->launch_ms = ms;
    if (s == FDT_OK && !verdict_passes(verdict))
        return fdt_fail(err, FDT_WRONG, "a point off by %.3g times its tolerance, %.0f "
                        "boundary points written", verdict->error, verdict->boundary_bad);
    return s;
}

static fdt_status timed(fdt_runner *r, fdt_enqueue_fn enqueue, void *ctx, int samples,
                        fdt_samples *acc, fdt_error *err)
{
    fdt_timing t = r->timing;
    t.samples = samples;
    const double busy = acc->busy_ms;
    fdt_status s = fdt_time(r->ops, r->backend, enqueue, ctx, &t, acc, err);
    r->gpu_ms += acc->busy_ms - busy;
    return s;
}

fdt_status fdt_runner_time(fdt_runner *r, fdt_kernel *k, const fdt_variant *v, int samples,
                           fdt_samples *acc, fdt_error *err)
{
    launch_ctx c;
    launch_setup(&c, r, k, v);
    return timed(r, launch_enqueue, &c, samples, acc, err);
}

/* A launch of a kernel with the copy's signature (f, u, nx, ny, nz, pitch): the first
 * output and input. */
typedef struct copy_launch {
    fdt_runner *r;
    fdt_kernel *k;
    fdt_dim3 grid, block;
} copy_launch;

static fdt_status copy_kernel_enqueue(void *ctx, fdt_error *err)
{
    copy_launch *c = ctx;
    fdt_runner *r = c->r;
    void *args[] = {&r->out0[0], &r->in0[0], &r->problem.nx, &r->problem.ny, &r->problem.nz,
                    &r->pitch};
    return r->ops->launch(r->backend, c->k, c->grid, c->block, args, err);
}

fdt_status fdt_runner_time_copy_kernel(fdt_runner *r, fdt_kernel *k, fdt_dim3 grid,
                                       fdt_dim3 block, int samples, fdt_samples *acc,
                                       fdt_error *err)
{
    copy_launch c = {.r = r, .k = k, .grid = grid, .block = block};
    return timed(r, copy_kernel_enqueue, &c, samples, acc, err);
}

/* The dense bytes, from the buffers' bases: the padding would make the ceiling, which every
 * figure is compared with, differ between layouts of one shape. */
fdt_status fdt_runner_time_copy(fdt_runner *r, int samples, fdt_samples *acc, fdt_error *err)
{
    fdt_device_copy c = {.ops = r->ops, .backend = r->backend, .dst = r->out[0],
                         .src = r->in[0], .bytes = r->bytes};
    return timed(r, fdt_copy_enqueue, &c, samples, acc, err);
}

static fdt_status alloc_buffers(fdt_runner *r, fdt_error *err)
{
    const fdt_backend_ops *o = r->ops;
    fdt_status s = FDT_OK;
    const size_t origin = (size_t)r->problem.offset * fdt_real_size(r->problem.precision);
    for (int i = 0; s == FDT_OK && i < r->stencil->inputs; i++) {
        s = o->alloc(r->backend, r->storage_bytes, &r->in[i], err);
        r->in0[i] = r->in[i] + origin;
    }
    for (int i = 0; s == FDT_OK && i < r->stencil->outputs; i++) {
        s = o->alloc(r->backend, r->storage_bytes, &r->out[i], err);
        r->out0[i] = r->out[i] + origin;
        if (s == FDT_OK)
            s = o->alloc(r->backend, r->storage_bytes, &r->ref[i], err);
        if (s == FDT_OK)
            s = o->alloc(r->backend, r->storage_points * sizeof(float), &r->tolerance[i], err);
    }
    if (s == FDT_OK)
        s = o->alloc(r->backend, r->partial_count * 2 * sizeof(double), &r->partial, err);
    r->partial_host = malloc(folded_count(r) * 2 * sizeof(double));
    if (s == FDT_OK && !r->partial_host)
        s = fdt_fail(err, FDT_ERROR, "out of host memory");
    return s;
}

/* The host's inputs (random from seed, a stream per grid) and the reference of each output,
 * kept between the steps of check_reference. */
typedef struct host_grids {
    void *in[FDT_STENCIL_FIELDS_MAX];
    void *out;        /* one output as the device left it */
    double *ref;      /* one output's reference */
    float *tolerance; /* and its tolerance at each point */
} host_grids;

static void host_grids_free(host_grids *h)
{
    for (int i = 0; i < FDT_STENCIL_FIELDS_MAX; i++)
        free(h->in[i]);
    free(h->out);
    free(h->ref);
    free(h->tolerance);
}

/* Fills and uploads every input from seed. */
static fdt_status upload_inputs(fdt_runner *r, host_grids *h, unsigned seed, fdt_error *err)
{
    fdt_status s = FDT_OK;
    for (int i = 0; s == FDT_OK && i < r->stencil->inputs; i++) {
        h->in[i] = malloc(r->storage_bytes);
        if (!h->in[i])
            return fdt_fail(err, FDT_ERROR, "out of host memory for the %zu-point inputs",
                            r->storage_points);
        fill_random(h->in[i], r->storage_points, r->problem.precision,
                    seed + 7919u * (unsigned)i);
        s = r->ops->upload(r->backend, r->in[i], h->in[i], r->storage_bytes, err);
    }
    return s;
}

/* Output i as kernel 1 left it against the host's reference of it; the tolerances go to
 * the device with it. */
static fdt_status check_output(fdt_runner *r, host_grids *h, int i, fdt_error *err)
{
    host_reference(r, (const void *const *)h->in, i, h->ref, h->tolerance);
    fdt_status s = r->ops->download(r->backend, h->out, r->out[i], r->storage_bytes, err);
    if (s == FDT_OK)
        s = r->ops->upload(r->backend, r->tolerance[i], h->tolerance,
                           r->storage_points * sizeof(float), err);
    if (s != FDT_OK)
        return s;
    fdt_verdict v;
    host_verdict(&r->problem, h->out, h->ref, h->tolerance, &v);
    if (!verdict_passes(&v))
        return fdt_fail(err, FDT_WRONG, "the reference kernel disagrees with the host "
                        "implementation: a point off by %.3g times its tolerance, %.0f boundary "
                        "points written", v.error, v.boundary_bad);
    /* Kernel 1's output is still on the device: copied there, not sent back over the bus
     * (8.6 GB at 1024^3, seconds of every job of that size). */
    return r->ops->copy(r->backend, r->ref[i], r->out[i], r->storage_bytes, err);
}

/* Runs kernel 1 and keeps its outputs as the device references once the host agrees. */
static fdt_status check_reference(fdt_runner *r, unsigned seed, fdt_error *err)
{
    const size_t n = r->storage_points;
    host_grids h = {.out = malloc(r->storage_bytes), .ref = malloc(n * sizeof(double)),
                    .tolerance = calloc(n, sizeof(float))};
    fdt_status s = h.out && h.ref && h.tolerance
                       ? FDT_OK
                       : fdt_fail(err, FDT_ERROR, "out of host memory for the %zu-point "
                                  "reference", n);
    fdt_kernel *k1 = NULL;
    const fdt_variant v1 = fdt_variant_kernel1(&r->problem);
    if (s == FDT_OK)
        s = upload_inputs(r, &h, seed, err);
    if (s == FDT_OK)
        s = compile_and_load(r, fdt_variant_source(&v1, &r->problem), r->stencil->entry, &v1,
                             &k1, err);
    double ms;
    if (s == FDT_OK)
        s = run_once(r, k1, &v1, &ms, err);
    for (int i = 0; s == FDT_OK && i < r->stencil->outputs; i++)
        s = check_output(r, &h, i, err);
    if (k1)
        r->ops->unload(r->backend, k1);
    host_grids_free(&h);
    return s;
}

/* Cache mode persist: one launch of kernels_src/persist.hip with release = 0 (or 1) per
 * output, one thread per row of it. */
static fdt_status persist_edges(fdt_runner *r, int release, fdt_error *err)
{
    fdt_dim3 grid, block;
    fdt_persist_geometry(&r->problem, &grid, &block);
    fdt_status s = FDT_OK;
    for (int i = 0; s == FDT_OK && i < r->stencil->outputs; i++) {
        void *args[] = {&r->out0[i], &r->problem.nx, &r->problem.ny, &r->problem.nz, &r->pitch,
                        &release};
        double ms;
        s = launch_and_wait(r, r->persist, grid, block, args, &ms, err);
    }
    return s;
}

fdt_status fdt_runner_set_persist(fdt_runner *r, int on, fdt_error *err)
{
    if (!r->persist)
        return fdt_fail(err, FDT_UNSUPPORTED, "this runner has no persist kernel");
    if (r->persisting == on)
        return FDT_OK;
    const fdt_status s = persist_edges(r, !on, err);
    if (s == FDT_OK)
        r->persisting = on;
    return s;
}

static int needs_persist_kernel(const fdt_runner *r)
{
    const fdt_cache_mode c = r->problem.cache;
    return c == FDT_CACHE_PERSIST || (c == FDT_CACHE_AUTO && r->ops->info(r->backend)->l2_persist);
}

/* Hot and auto always; persist where the device has L2 eviction priorities; cold not yet. */
static fdt_status check_cache_mode(const fdt_runner *r, fdt_cache_mode cache, fdt_error *err)
{
    const fdt_device_info *dev = r->ops->info(r->backend);
    if (cache == FDT_CACHE_COLD)
        return fdt_fail(err, FDT_UNSUPPORTED, "cold-cache measurement is not built yet; cache "
                        "modes hot and persist are");
    if (cache == FDT_CACHE_PERSIST && !dev->l2_persist)
        return fdt_fail(err, FDT_UNSUPPORTED, "cache mode persist needs L2 eviction priorities "
                        "(NVIDIA sm_80 or later); %s (%s, %s backend) has none", dev->name,
                        dev->arch, dev->backend);
    return FDT_OK;
}

/* Mode persist puts f's row edges in the persist state before anything is timed, so that
 * kernel 1, the copy and every variant are measured alike in it; modes hot and auto leave
 * them released (auto then switches between the two, fdt_runner_set_persist). The persist
 * kernel is loaded the first time a mode needs it; fdt_runner_close releases the edges. */
static fdt_status apply_cache_mode(fdt_runner *r, fdt_error *err)
{
    fdt_status s = FDT_OK;
    if (!r->persist && needs_persist_kernel(r))
        s = compile_and_load(r, fdt_persist_source(), "fdt_persist_edges", &helper_variant,
                             &r->persist, err);
    if (s == FDT_OK && r->persist)
        s = fdt_runner_set_persist(r, r->problem.cache == FDT_CACHE_PERSIST, err);
    return s;
}

fdt_status fdt_runner_set_cache(fdt_runner *r, fdt_cache_mode cache, fdt_error *err)
{
    fdt_status s = check_cache_mode(r, cache, err);
    if (s != FDT_OK)
        return s;
    const fdt_cache_mode was = r->problem.cache;
    r->problem.cache = cache;
    s = apply_cache_mode(r, err);
    if (s != FDT_OK)
        r->problem.cache = was;
    return s;
}

fdt_status fdt_runner_open(fdt_runner *r, const fdt_backend_ops *ops, fdt_backend *b,
                           const fdt_problem *p, const fdt_timing *timing, unsigned seed,
                           fdt_error *err)
{
    memset(r, 0, sizeof *r);
    r->ops = ops;
    r->backend = b;
    r->problem = *p;
    r->timing = *timing;
    r->stencil = fdt_stencil_of(p); /* known: fdt_problem_check passed */
    fdt_stencil_coefficients(r->stencil, spacing, r->coeffs);
    r->pitch = fdt_problem_pitch(p);
    r->points = (size_t)p->nx * p->ny * p->nz;
    r->bytes = r->points * fdt_real_size(p->precision);
    r->storage_points = fdt_problem_storage_points(p);
    r->storage_bytes = r->storage_points * fdt_real_size(p->precision);
    r->compare_block = (fdt_dim3){256, 1, 1};
    const size_t blocks = (r->storage_points + 255) / 256;
    r->compare_grid = (fdt_dim3){blocks < 1024 ? (unsigned)blocks : 1024, 1, 1};
    r->partial_count = (size_t)r->compare_grid.x * 256;

    fdt_status s = check_cache_mode(r, p->cache, err);
    if (s == FDT_OK)
        s = alloc_buffers(r, err);
    if (s == FDT_OK)
        s = compile_and_load(r, fdt_compare_source(), "fdt_compare", &helper_variant,
                             &r->compare, err);
    if (s == FDT_OK)
        s = apply_cache_mode(r, err);
    if (s == FDT_OK)
        s = check_reference(r, seed, err);
    if (s != FDT_OK)
        fdt_runner_close(r);
    return s;
}

void fdt_runner_close(fdt_runner *r)
{
    if (r->persist) {
        /* Released before the outputs are freed: the next buffer at their addresses must not
         * inherit the priority. After a device fault this fails, and needs not succeed: the
         * context, and the state with it, is gone. */
        fdt_error ignored;
        fdt_runner_set_persist(r, 0, &ignored);
        r->ops->unload(r->backend, r->persist);
    }
    if (r->compare)
        r->ops->unload(r->backend, r->compare);
    for (int i = 0; i < FDT_STENCIL_FIELDS_MAX; i++) {
        const fdt_devptr buffers[] = {r->in[i], r->out[i], r->ref[i], r->tolerance[i]};
        for (size_t b = 0; b < sizeof buffers / sizeof buffers[0]; b++)
            if (buffers[b])
                r->ops->free(r->backend, buffers[b]);
    }
    if (r->partial)
        r->ops->free(r->backend, r->partial);
    free(r->partial_host);
    memset(r, 0, sizeof *r);
}
