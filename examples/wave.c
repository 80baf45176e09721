/* wave.c - a solver of its own operator on libfdtune: the acoustic wave equation
 * u_tt = v^2 Laplacian(u) on the unit cube, 8th order in space, leapfrog in time, with the
 * update written as a stencil spec (specs/acoustic8.json, docs/stencils.md) that fdtuned
 * tunes and libfdtune compiles, plus the solver's own boundary kernel, on the first GPU
 * found or else the cpu.
 *
 *     cc wave.c $(pkg-config --cflags --libs fdtune) -lm -o wave
 *     wave NX NY NZ [--spec FILE] [--precision float|double] [--steps N] [--kernel1]
 *          [--pitch auto|P] [--offset O]
 *
 * The spec (default: WAVE_SPEC where the build sets it, else specs/acoustic8.json) is
 *     u_next = 2 u - u_prev + v2 (c2x D_xx u + c2y D_yy u + c2z D_zz u)
 * with D_aa the central second difference of order 8 (weights w_r, r = 0..4), v2 = v^2 a
 * field read per point (uniform here, so that the check below holds) and c2a = dt^2 / ha^2
 * given at launch. The grid has n points per axis, x = i / (n-1), and u0 = sin(pi x) sin(pi y)
 * sin(pi z). That mode is an eigenvector of every D_aa, with eigenvalue -l_a = w_0 + 2 sum_r
 * w_r cos(pi r h_a), so leapfrog keeps it: with L = v^2 sum_a c2a l_a and cos(theta) =
 * 1 - L / 2, u^n = cos(n theta) u0 exactly, if the 4 outermost layers (which the kernel
 * never writes: they are the boundary) hold that too. The solver's boundary kernel sets them
 * to cos(n theta) u0 each step, so the computed u differs from cos(N theta) u0 by rounding
 * alone, which the program bounds and checks. Its fields are laid out as heat.c's are: asked
 * with pitch auto (or --pitch P, 0 dense, and --offset O), allocated with fdtune_field_alloc
 * once the kernel is open, indexed with the layout's pitch. The last line is
 * machine-readable:
 *
 *     wave shape=NXxNYxNZ precision=P steps=N source=tuned|fallback variant=V
 *          stencil_gbps=X step_ms=X error=X error_bound=X pitch=P offset=O
 *          gain=G|none                                                      (one line)
 *
 * where stencil_gbps is the spec's ideal bytes (fdtune_kernel_bytes) over the kernel's time
 * and gain the answer's layout's over the dense one (none: not measured).
 * Exit: 0 when error <= error_bound, 1 when not or when the library fails, 2 bad usage. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fdtune_kernel.h>

#define PI 3.14159265358979323846
#define R 4            /* the spec's reach: the boundary is 4 layers deep */
#define V2 1.0         /* v^2, uniform */
#ifndef WAVE_SPEC
#define WAVE_SPEC "specs/acoustic8.json"
#endif

/* The 8th-order second difference's weights (the spec's generator computes the same). */
static const double w[R + 1] = {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560};

/* The solver's own kernel: u = c u0 on the R outermost layers, rows pitch points apart.
 * REAL is a -D define. */
static const char boundary_source[] =
    "extern \"C\" __global__ void wave_boundary(REAL *u, const REAL *u0, int nx, int ny,\n"
    "                                          int nz, int pitch, REAL c)\n"
    "{\n"
    "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    const int j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;\n"
    "    const int r = 4;\n"
    "    if (i >= nx || j >= ny)\n"
    "        return;\n"
    "    if (i >= r && i < nx - r && j >= r && j < ny - r && k >= r && k < nz - r)\n"
    "        return;\n"
    "    const long long p = i + (long long)pitch * (j + (long long)ny * k);\n"
    "    u[p] = c * u0[p];\n"
    "}\n";

typedef struct run {
    fdtune_problem p;
    const char *spec_path;
    char *spec;
    int steps, kernel1;
    int pitch;         /* the kernel's layout's, which every field follows */
    size_t points, real_size; /* points: a field's, from (0, 0, 0): pitch * ny * nz */
    double h[3], dt, theta;
    fdtune_device *dev;
    fdtune_kernel *stencil;
    fdtune_function *boundary;
    void *u0, *v2, *grids[3]; /* grids: u_prev, u, u_next, rotated each step */
    double stencil_ms, step_ms;
    char err[2048];
} run;

static int usage(const char *why)
{
    fprintf(stderr, "wave: %s\nusage: wave NX NY NZ [--spec FILE] [--precision float|double] "
            "[--steps N] [--kernel1] [--pitch auto|P] [--offset O]\n", why);
    return 2;
}

static int whole(const char *text, int min, int max, int *out)
{
    char *end;
    const long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_args(int argc, char **argv, run *r)
{
    if (argc < 4)
        return usage("NX NY NZ are required");
    /* NZ is the boundary kernel's grid z, which GPUs bound to 65535. */
    if (whole(argv[1], 2 * R + 1, 65536, &r->p.nx) ||
        whole(argv[2], 2 * R + 1, 65536, &r->p.ny) || whole(argv[3], 2 * R + 1, 65535, &r->p.nz))
        return usage("NX NY must be whole numbers from 9 to 65536, NZ from 9 to 65535");
    r->steps = 100;
    r->spec_path = WAVE_SPEC;
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--kernel1") == 0)
            r->kernel1 = 1;
        else if (strcmp(argv[i], "--pitch") == 0 && i + 1 < argc) {
            if (strcmp(argv[++i], "auto") && whole(argv[i], 0, 65536 + 4096, &r->p.pitch))
                return usage("--pitch takes auto or a whole number (0: dense)");
        } else if (strcmp(argv[i], "--offset") == 0 && i + 1 < argc) {
            if (whole(argv[++i], 0, 255, &r->p.offset)) /* the library says the limit */
                return usage("--offset must be a whole number of points");
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            if (whole(argv[++i], 1, 1000000, &r->steps))
                return usage("--steps must be a whole number from 1 to 1000000");
        } else if (strcmp(argv[i], "--spec") == 0 && i + 1 < argc) {
            r->spec_path = argv[++i];
        } else if (strcmp(argv[i], "--precision") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "float") && strcmp(v, "double"))
                return usage("--precision must be float or double");
            r->p.precision = strcmp(v, "float") == 0 ? FDTUNE_FLOAT : FDTUNE_DOUBLE;
        } else {
            char why[128];
            snprintf(why, sizeof why, "unknown or incomplete option '%.64s'", argv[i]);
            return usage(why);
        }
    }
    return 0;
}

/* The spec's text from its file, NUL-terminated: a spec is at most 64 KiB, and a longer file
 * reaches the library one byte past that, which it refuses. NULL, r->err saying why, when
 * it cannot be read. */
static char *read_spec(run *r)
{
    enum { MAX = 65536 };
    FILE *in = fopen(r->spec_path, "r");
    char *text = in ? calloc(1, MAX + 2) : NULL;
    if (text && fread(text, 1, MAX + 1, in) == 0 && ferror(in)) {
        free(text);
        text = NULL;
    }
    if (!text)
        snprintf(r->err, sizeof r->err, "the spec %s cannot be read", r->spec_path);
    if (in)
        fclose(in);
    return text;
}

/* Grid spacing, the time step (half of leapfrog's limit for the highest mode, L <= 4), and
 * the phase theta the mode turns by each step. */
static void set_scheme(run *r)
{
    const int n[3] = {r->p.nx, r->p.ny, r->p.nz};
    double wsum = fabs(w[0]), sum = 0, big_l = 0;
    for (int q = 1; q <= R; q++)
        wsum += 2 * fabs(w[q]);
    for (int a = 0; a < 3; a++) {
        r->h[a] = 1.0 / (n[a] - 1);
        sum += 1 / (r->h[a] * r->h[a]);
    }
    r->dt = 0.5 * 2 / sqrt(V2 * wsum * sum);
    for (int a = 0; a < 3; a++) {
        double l = -w[0];
        for (int q = 1; q <= R; q++)
            l -= 2 * w[q] * cos(PI * q * r->h[a]);
        big_l += V2 * r->dt * r->dt / (r->h[a] * r->h[a]) * l;
    }
    r->theta = acos(1 - big_l / 2);
    r->real_size = r->p.precision == FDTUNE_FLOAT ? sizeof(float) : sizeof(double);
}

/* u0 at point (i, j, k); exactly 0 on the faces, where sin(pi) would leave 1e-16. */
static double initial(const run *r, size_t i, size_t j, size_t k)
{
    if (i == 0 || j == 0 || k == 0 || i == (size_t)r->p.nx - 1 || j == (size_t)r->p.ny - 1 ||
        k == (size_t)r->p.nz - 1)
        return 0;
    return sin(PI * i * r->h[0]) * sin(PI * j * r->h[1]) * sin(PI * k * r->h[2]);
}

/* Where point (i, j, k) is in a field: rows r->pitch points apart. */
static size_t at(const run *r, size_t i, size_t j, size_t k)
{
    return i + r->pitch * (j + r->p.ny * k);
}

/* scale * u0 (or, with uniform, scale everywhere) in the run's precision, on the host, in
 * the kernel's layout (the rows' padding 0). */
static void *host_field(const run *r, double scale, int uniform)
{
    char *buf = calloc(r->points, r->real_size);
    for (size_t k = 0; buf && k < (size_t)r->p.nz; k++)
        for (size_t j = 0; j < (size_t)r->p.ny; j++)
            for (size_t i = 0; i < (size_t)r->p.nx; i++) {
                const double v = uniform ? scale : scale * initial(r, i, j, k);
                if (r->real_size == sizeof(float))
                    ((float *)buf)[at(r, i, j, k)] = (float)v;
                else
                    ((double *)buf)[at(r, i, j, k)] = v;
            }
    return buf;
}

/* A device buffer in the kernel's layout holding scale * u0 (or scale everywhere). */
static int device_field(run *r, double scale, int uniform, void **out)
{
    const size_t bytes = r->points * r->real_size;
    void *host = host_field(r, scale, uniform);
    int st = host ? FDTUNE_OK : FDTUNE_ERR_ARG;
    if (!host)
        snprintf(r->err, sizeof r->err, "out of host memory for %zu bytes", bytes);
    if (st == FDTUNE_OK)
        st = fdtune_field_alloc(r->stencil, out, r->err, sizeof r->err);
    if (st == FDTUNE_OK)
        st = fdtune_upload(r->dev, *out, host, bytes, r->err, sizeof r->err);
    free(host);
    return st;
}

/* u0, v2, and the three time levels: u_prev = cos(theta) u0 (the exact step -1), u = u0,
 * u_next = u0 (its boundary is set each step, its interior written by the stencil). */
static int setup_fields(run *r)
{
    int st = device_field(r, 1, 0, &r->u0);
    if (st == FDTUNE_OK)
        st = device_field(r, V2, 1, &r->v2);
    if (st == FDTUNE_OK)
        st = device_field(r, cos(r->theta), 0, &r->grids[0]);
    for (int g = 1; st == FDTUNE_OK && g < 3; g++)
        st = device_field(r, 1, 0, &r->grids[g]);
    return st;
}

static int setup_kernels(run *r)
{
    const fdtune_kernel_options o = {.kernel1 = r->kernel1};
    int st = fdtune_kernel_open_spec(r->dev, &r->p, r->spec, &o, &r->stencil, r->err,
                                     sizeof r->err);
    const char *define = r->p.precision == FDTUNE_FLOAT ? "REAL=float" : "REAL=double";
    if (st == FDTUNE_OK)
        st = fdtune_function_compile(r->dev, boundary_source, "wave_boundary", &define, 1, &o,
                                     &r->boundary, r->err, sizeof r->err);
    if (st == FDTUNE_OK) { /* the layout the kernel took: the asked one, or the answer's */
        r->pitch = fdtune_kernel_get_info(r->stencil)->layout.pitch;
        r->points = (size_t)r->pitch * r->p.ny * r->p.nz;
    }
    return st;
}

/* u_next = the spec of (u, u_prev, v2) with c2a = dt^2 / ha^2. */
static int stencil(run *r)
{
    void *const outputs[] = {r->grids[2]};
    const void *const inputs[] = {r->grids[1], r->grids[0], r->v2};
    double c2[3];
    for (int a = 0; a < 3; a++)
        c2[a] = r->dt * r->dt / (r->h[a] * r->h[a]);
    return fdtune_kernel_launch_fields(r->stencil, outputs, inputs, c2, r->err, sizeof r->err);
}

/* u_next's boundary = cos((n + 1) theta) u0 after step n; then the levels turn. */
static int finish_step(run *r, int n)
{
    int nx = r->p.nx, ny = r->p.ny, nz = r->p.nz, pitch = r->pitch;
    double c = cos((n + 1) * r->theta);
    float c_float = (float)c;
    void *args[] = {&r->grids[2], &r->u0, &nx, &ny, &nz, &pitch,
                    r->p.precision == FDTUNE_FLOAT ? (void *)&c_float : (void *)&c};
    const int block[3] = {128, 2, 1};
    const int grid[3] = {(nx + 127) / 128, (ny + 1) / 2, nz};
    const int st = fdtune_function_launch(r->boundary, grid, block, args, r->err,
                                          sizeof r->err);
    void *oldest = r->grids[0];
    r->grids[0] = r->grids[1];
    r->grids[1] = r->grids[2];
    r->grids[2] = oldest;
    return st;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Steps from..to with each stencil launch timed by device events, as fdtuned times it
 * (heat.c says why this keeps the device busy); the first, from an idle device, is left out
 * when there are more. */
static int timed_steps(run *r, int from, int to)
{
    double sum = 0;
    int st = FDTUNE_OK;
    for (int s = from; s < to && st == FDTUNE_OK; s++) {
        double ms = 0;
        st = fdtune_timer_start(r->dev, r->err, sizeof r->err);
        if (st == FDTUNE_OK)
            st = stencil(r);
        if (st == FDTUNE_OK)
            st = fdtune_timer_stop(r->dev, &ms, r->err, sizeof r->err);
        if (st == FDTUNE_OK)
            st = finish_step(r, s);
        sum += s > from || to - from == 1 ? ms : 0;
    }
    r->stencil_ms = sum / (to - from > 1 ? to - from - 1 : 1);
    return st;
}

/* Steps from..to with nothing waited on between them, timed by the wall clock. */
static int free_steps(run *r, int from, int to)
{
    int st = fdtune_synchronize(r->dev, r->err, sizeof r->err);
    const double start = now_ms();
    for (int s = from; s < to && st == FDTUNE_OK; s++) {
        st = stencil(r);
        if (st == FDTUNE_OK)
            st = finish_step(r, s);
    }
    if (st == FDTUNE_OK)
        st = fdtune_synchronize(r->dev, r->err, sizeof r->err);
    r->step_ms = (now_ms() - start) / (to - from);
    return st;
}

/* The first half of the steps measures the stencil, the second the step. */
static int time_steps(run *r)
{
    if (r->steps == 1) {
        const double start = now_ms();
        const int st = timed_steps(r, 0, 1);
        r->step_ms = now_ms() - start;
        return st;
    }
    const int half = r->steps / 2;
    const int st = timed_steps(r, 0, half);
    return st == FDTUNE_OK ? free_steps(r, half, r->steps) : st;
}

/* The max-norm distance of u (step N) from the exact cos(N theta) u0. */
static int max_error(run *r, double *error)
{
    void *buf = malloc(r->points * r->real_size);
    if (!buf) {
        snprintf(r->err, sizeof r->err, "out of host memory");
        return FDTUNE_ERR_ARG;
    }
    const int st = fdtune_download(r->dev, buf, r->grids[1], r->points * r->real_size, r->err,
                                   sizeof r->err);
    const double c = cos(r->steps * r->theta);
    *error = 0;
    for (size_t k = 0; st == FDTUNE_OK && k < (size_t)r->p.nz; k++)
        for (size_t j = 0; j < (size_t)r->p.ny; j++)
            for (size_t i = 0; i < (size_t)r->p.nx; i++) {
                const size_t q = at(r, i, j, k);
                const double v = r->real_size == sizeof(float) ? ((float *)buf)[q]
                                                               : ((double *)buf)[q];
                const double d = fabs(v - c * initial(r, i, j, k));
                if (!(d <= *error)) /* a NaN is the largest error of all */
                    *error = isnan(d) ? INFINITY : d;
            }
    free(buf);
    return st;
}

/* Rounding alone: a step's sum of 27 terms of size at most 2 + 1 + L <= 7 rounds by less
 * than 64 ulps; an error made at step m reaches step N multiplied by
 * |sin((N - m) theta) / sin theta| <= min(N - m, 1 / sin theta) (leapfrog's own growth),
 * and the stored u0 and u_prev bring 4 ulps more. */
static double error_bound(const run *r)
{
    const double eps = r->p.precision == FDTUNE_FLOAT ? FLT_EPSILON : DBL_EPSILON;
    const double growth = fmin(r->steps, 1 / sin(r->theta));
    return 64 * eps * r->steps * growth + 4 * eps * growth;
}

static void print_kernel(const run *r)
{
    const fdtune_kernel_info *k = fdtune_kernel_get_info(r->stencil);
    printf("device:    %s %s (%s)\n", fdtune_device_backend(r->dev), fdtune_device_name(r->dev),
           fdtune_device_arch(r->dev));
    printf("stencil:   %s, %s", k->variant, k->tuned ? "tuned" : "fallback");
    if (k->tuned)
        printf(" (match %s, fdtuned measured %.1f GB/s, copy %.1f GB/s)", k->match,
               k->stored_gbps, k->copy_gbps);
    else
        printf(" (%s)", k->reason);
    printf("\nlayout:    pitch %d (nx %d), offset %d", k->layout.pitch, r->p.nx,
           k->layout.offset);
    if (k->layout.gain > 0)
        printf(", %.2fx the dense layout's %.1f GB/s", k->layout.gain, k->layout.dense_gbps);
    printf("\nmodules:   %.1f ms, %d from the disk cache, %d compiled\n", k->module_ms,
           k->cache_hits, k->compiles);
    if (k->note[0])
        printf("note:      %s\n", k->note);
}

static int report(run *r)
{
    double error = 0;
    const int st = max_error(r, &error);
    if (st != FDTUNE_OK)
        return st;
    const fdtune_kernel_info *k = fdtune_kernel_get_info(r->stencil);
    const double bound = error_bound(r);
    printf("wave shape=%dx%dx%d precision=%s steps=%d source=%s variant=%s stencil_gbps=%.1f "
           "step_ms=%.4f error=%.3e error_bound=%.3e pitch=%d offset=%d ", r->p.nx, r->p.ny,
           r->p.nz, r->p.precision == FDTUNE_FLOAT ? "float" : "double", r->steps,
           k->tuned ? "tuned" : "fallback", k->variant,
           fdtune_kernel_bytes(r->stencil) / (r->stencil_ms * 1e-3) / 1e9, r->step_ms, error,
           bound, k->layout.pitch, k->layout.offset);
    if (k->layout.gain > 0)
        printf("gain=%.3f\n", k->layout.gain);
    else
        printf("gain=none\n");
    if (error > bound)
        fprintf(stderr, "wave: the error %.3e exceeds the bound %.3e\n", error, bound);
    return error <= bound ? FDTUNE_OK : 1;
}

static void teardown(run *r)
{
    fdtune_function_free(r->boundary);
    fdtune_field_free(r->stencil, r->u0);
    fdtune_field_free(r->stencil, r->v2);
    for (int g = 0; g < 3; g++)
        fdtune_field_free(r->stencil, r->grids[g]);
    fdtune_kernel_close(r->stencil);
    fdtune_device_close(r->dev);
    free(r->spec);
}

int main(int argc, char **argv)
{
    run r = {.p = {.precision = FDTUNE_DOUBLE, .pitch = FDTUNE_PITCH_AUTO}};
    const int bad = parse_args(argc, argv, &r);
    if (bad)
        return bad;
    set_scheme(&r);
    r.spec = read_spec(&r);
    int st = r.spec ? fdtune_device_open(NULL, -1, NULL, &r.dev, r.err, sizeof r.err)
                    : FDTUNE_ERR_ARG;
    if (st == FDTUNE_OK)
        st = setup_kernels(&r);
    if (st == FDTUNE_OK)
        st = setup_fields(&r);
    if (st == FDTUNE_OK) {
        print_kernel(&r);
        st = time_steps(&r);
    }
    if (st == FDTUNE_OK)
        st = report(&r);
    if (st != FDTUNE_OK && st != 1) /* 1: report said why */
        fprintf(stderr, "wave: %s\n", r.err);
    teardown(&r);
    return st == FDTUNE_OK ? 0 : 1;
}
