/* heat.c - libfdtune's first user: the 3D heat equation u_t = Laplacian(u) on the unit cube,
 * explicit Euler in time, the Laplacian fdtuned tuned for the grid, and the solver's own
 * update kernel, on the first GPU found or else the cpu.
 *
 *     cc heat.c $(pkg-config --cflags --libs fdtune) -lm -o heat
 *     heat NX NY NZ [--precision float|double] [--steps N] [--kernel1] [--cache persist]
 *          [--pitch auto|P] [--offset O]
 *
 * The grid has n points per axis, i = 0 .. n-1 at x = i / (n-1); u = 0 on the boundary and
 * u0 = sin(pi x) sin(pi y) sin(pi z), so the exact solution is exp(-3 pi^2 t) u0. That u0
 * is an eigenvector of the discrete Laplacian too, so the computed u is the exact one up to
 * the scheme's truncation error, which the program bounds (error_bound below) and checks:
 * a kernel that gets one point wrong fails the run. --kernel1 runs the seeds' kernel 1
 * instead of the tuned one, to compare; --cache persist asks for the answer tuned in cache
 * mode persist and runs its set-up step on f (NVIDIA).
 *
 * The fields are laid out as the kernel says (fdtune_kernel.h): the solver asks with pitch
 * auto, so that the tuner may pad the rows, allocates u and f after opening the kernel with
 * fdtune_field_alloc, and indexes them with the layout's pitch; --pitch P (0: dense) and
 * --offset O ask for a layout of the solver's own instead. The last line is
 * machine-readable:
 *
 *     heat shape=NXxNYxNZ precision=P steps=N source=tuned|fallback variant=V
 *          laplacian_gbps=X step_ms=X error=X error_bound=X pitch=P offset=O
 *          gain=G|none                                                  (one line)
 *
 * where gain is the answer's over the dense layout (none: not measured).
 *
 * Exit: 0 when error <= error_bound, 1 when not or when the library fails, 2 bad usage. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fdtune_kernel.h>

#define PI 3.14159265358979323846

/* The solver's own kernel: u += dt f on the interior, rows pitch points apart. REAL is a
 * -D define. */
static const char update_source[] =
    "extern \"C\" __global__ void heat_update(REAL *u, const REAL *f, int nx, int ny, int nz,\n"
    "                                         int pitch, REAL dt)\n"
    "{\n"
    "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    const int j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;\n"
    "    if (i < 1 || i >= nx - 1 || j < 1 || j >= ny - 1 || k < 1 || k >= nz - 1)\n"
    "        return;\n"
    "    const long long p = i + (long long)pitch * (j + (long long)ny * k);\n"
    "    u[p] += dt * f[p];\n"
    "}\n";

typedef struct run {
    fdtune_problem p;
    int steps, kernel1;
    int pitch;         /* the kernel's layout's, which u and f follow */
    size_t points, real_size; /* points: a field's, from (0, 0, 0): pitch * ny * nz */
    double h[3], dt;
    fdtune_device *dev;
    fdtune_kernel *laplacian;
    fdtune_function *update;
    void *u, *f;       /* device buffers */
    double *host;      /* u on the host, as double whatever the precision */
    double laplacian_ms, step_ms;
    char err[2048];
} run;

static int usage(const char *why)
{
    fprintf(stderr, "heat: %s\nusage: heat NX NY NZ [--precision float|double] [--steps N] "
            "[--kernel1] [--cache persist] [--pitch auto|P] [--offset O]\n", why);
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
    /* NZ is the update's grid z, which GPUs bound to 65535. */
    if (whole(argv[1], 3, 65536, &r->p.nx) || whole(argv[2], 3, 65536, &r->p.ny) ||
        whole(argv[3], 3, 65535, &r->p.nz))
        return usage("NX NY must be whole numbers from 3 to 65536, NZ from 3 to 65535");
    r->steps = 100;
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--kernel1") == 0)
            r->kernel1 = 1;
        else if (strcmp(argv[i], "--pitch") == 0 && i + 1 < argc) {
            if (strcmp(argv[++i], "auto") && whole(argv[i], 0, 65536 + 4096, &r->p.pitch))
                return usage("--pitch takes auto or a whole number (0: dense)");
        } else if (strcmp(argv[i], "--offset") == 0 && i + 1 < argc) {
            if (whole(argv[++i], 0, 255, &r->p.offset)) /* the library says the limit */
                return usage("--offset must be a whole number of points");
        }
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            if (whole(argv[++i], 1, 1000000, &r->steps))
                return usage("--steps must be a whole number from 1 to 1000000");
        } else if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) {
            if (strcmp(argv[++i], "persist") != 0)
                return usage("--cache takes persist (hot, the default, needs no option)");
            r->p.cache = FDTUNE_PERSIST;
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

/* The layout the kernel took (the asked one, or the answer's with pitch auto). */
static void set_layout(run *r)
{
    r->pitch = fdtune_kernel_get_info(r->laplacian)->layout.pitch;
    r->points = (size_t)r->pitch * r->p.ny * r->p.nz;
}

/* Grid spacing, and the time step: explicit Euler is stable, and keeps the max norm from
 * growing, for dt * sum(1/h^2) <= 1/2; 0.4 leaves a margin. */
static void set_scheme(run *r)
{
    const int n[3] = {r->p.nx, r->p.ny, r->p.nz};
    double sum = 0;
    for (int a = 0; a < 3; a++) {
        r->h[a] = 1.0 / (n[a] - 1);
        sum += 1 / (r->h[a] * r->h[a]);
    }
    r->dt = 0.4 / sum;
    r->real_size = r->p.precision == FDTUNE_FLOAT ? sizeof(float) : sizeof(double);
}

/* u0 at point (i, j, k); exactly 0 on the boundary, where sin(pi) would leave 1e-16. */
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

/* Writes u0 (or zeros) in the run's precision into a host buffer of points reals, in the
 * kernel's layout (the rows' padding 0). */
static void *host_field(const run *r, int zeros)
{
    char *buf = calloc(r->points, r->real_size);
    if (!buf || zeros)
        return buf;
    for (size_t k = 0; k < (size_t)r->p.nz; k++)
        for (size_t j = 0; j < (size_t)r->p.ny; j++)
            for (size_t i = 0; i < (size_t)r->p.nx; i++) {
                const double v = initial(r, i, j, k);
                if (r->real_size == sizeof(float))
                    ((float *)buf)[at(r, i, j, k)] = (float)v;
                else
                    ((double *)buf)[at(r, i, j, k)] = v;
            }
    return buf;
}

/* Device buffers u (= u0) and f (= 0: its boundary is never written, but it is read by
 * nobody either; zeros keep a memory checker quiet), in the kernel's layout, and f's
 * persist step (cache mode persist). */
static int setup_fields(run *r)
{
    const size_t bytes = r->points * r->real_size;
    void *u0 = host_field(r, 0), *zero = host_field(r, 1);
    int st = u0 && zero ? FDTUNE_OK : FDTUNE_ERR_ARG;
    if (st != FDTUNE_OK)
        snprintf(r->err, sizeof r->err, "out of host memory for %zu bytes", bytes);
    if (st == FDTUNE_OK)
        st = fdtune_field_alloc(r->laplacian, &r->u, r->err, sizeof r->err);
    if (st == FDTUNE_OK)
        st = fdtune_field_alloc(r->laplacian, &r->f, r->err, sizeof r->err);
    if (st == FDTUNE_OK)
        st = fdtune_upload(r->dev, r->u, u0, bytes, r->err, sizeof r->err);
    if (st == FDTUNE_OK)
        st = fdtune_upload(r->dev, r->f, zero, bytes, r->err, sizeof r->err);
    if (st == FDTUNE_OK)
        st = fdtune_kernel_persist(r->laplacian, r->f, 0, r->err, sizeof r->err);
    free(u0);
    free(zero);
    return st;
}

static int setup_kernels(run *r)
{
    const fdtune_kernel_options o = {.kernel1 = r->kernel1};
    int st = fdtune_kernel_open(r->dev, &r->p, &o, &r->laplacian, r->err, sizeof r->err);
    const char *define = r->p.precision == FDTUNE_FLOAT ? "REAL=float" : "REAL=double";
    if (st == FDTUNE_OK)
        st = fdtune_function_compile(r->dev, update_source, "heat_update", &define, 1, &o,
                                     &r->update, r->err, sizeof r->err);
    if (st == FDTUNE_OK)
        set_layout(r);
    return st;
}

static int update(run *r)
{
    int nx = r->p.nx, ny = r->p.ny, nz = r->p.nz, pitch = r->pitch;
    double dt = r->dt;
    float dt_float = (float)r->dt;
    void *args[] = {&r->u, &r->f, &nx, &ny, &nz, &pitch,
                    r->p.precision == FDTUNE_FLOAT ? (void *)&dt_float : (void *)&dt};
    const int block[3] = {128, 2, 1};
    const int grid[3] = {(nx + 127) / 128, (ny + 1) / 2, nz};
    return fdtune_function_launch(r->update, grid, block, args, r->err, sizeof r->err);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int laplacian(run *r)
{
    return fdtune_kernel_launch(r->laplacian, r->f, r->u, 1 / (r->h[0] * r->h[0]),
                                1 / (r->h[1] * r->h[1]), 1 / (r->h[2] * r->h[2]), r->err,
                                sizeof r->err);
}

/* n steps with each Laplacian timed by device events, as fdtuned times it: the timer's wait
 * idles the device while the host queues the update, which then keeps it busy while the
 * next start event and Laplacian are queued, so each is timed from a busy device as in the
 * tuner. The first, from an idle device and a cold cache, is left out when there are more. */
static int timed_steps(run *r, int n)
{
    double sum = 0;
    int st = FDTUNE_OK;
    for (int s = 0; s < n && st == FDTUNE_OK; s++) {
        double ms = 0;
        st = fdtune_timer_start(r->dev, r->err, sizeof r->err);
        if (st == FDTUNE_OK)
            st = laplacian(r);
        if (st == FDTUNE_OK)
            st = fdtune_timer_stop(r->dev, &ms, r->err, sizeof r->err);
        if (st == FDTUNE_OK)
            st = update(r);
        sum += s > 0 || n == 1 ? ms : 0;
    }
    r->laplacian_ms = sum / (n > 1 ? n - 1 : 1);
    return st;
}

/* n steps with nothing waited on between them, timed as a whole by the wall clock: what a
 * step costs the solver. */
static int free_steps(run *r, int n)
{
    int st = fdtune_synchronize(r->dev, r->err, sizeof r->err);
    const double start = now_ms();
    for (int s = 0; s < n && st == FDTUNE_OK; s++) {
        st = laplacian(r);
        if (st == FDTUNE_OK)
            st = update(r);
    }
    if (st == FDTUNE_OK)
        st = fdtune_synchronize(r->dev, r->err, sizeof r->err);
    r->step_ms = (now_ms() - start) / n;
    return st;
}

/* The time steps: the first half measures the Laplacian, the second the step; a single
 * step does both (its step_ms then includes the timer's wait). */
static int time_steps(run *r)
{
    if (r->steps == 1) {
        const double start = now_ms();
        const int st = timed_steps(r, 1);
        r->step_ms = now_ms() - start;
        return st;
    }
    const int st = timed_steps(r, r->steps / 2);
    return st == FDTUNE_OK ? free_steps(r, r->steps - r->steps / 2) : st;
}

/* The max-norm distance from the exact solution exp(-3 pi^2 t) u0. */
static int max_error(run *r, double *error)
{
    void *buf = malloc(r->points * r->real_size);
    if (!buf) {
        snprintf(r->err, sizeof r->err, "out of host memory");
        return FDTUNE_ERR_ARG;
    }
    const int st = fdtune_download(r->dev, buf, r->u, r->points * r->real_size, r->err,
                                   sizeof r->err);
    const double decay = exp(-3 * PI * PI * r->steps * r->dt);
    *error = 0;
    for (size_t k = 0; st == FDTUNE_OK && k < (size_t)r->p.nz; k++)
        for (size_t j = 0; j < (size_t)r->p.ny; j++)
            for (size_t i = 0; i < (size_t)r->p.nx; i++) {
                const size_t q = at(r, i, j, k);
                const double v = r->real_size == sizeof(float) ? ((float *)buf)[q]
                                                               : ((double *)buf)[q];
                const double d = fabs(v - decay * initial(r, i, j, k));
                if (!(d <= *error)) /* a NaN is the largest error of all */
                    *error = isnan(d) ? INFINITY : d;
            }
    free(buf);
    return st;
}

/* What the scheme may be off by after the run, |u0| <= 1:
 *  - time: each step multiplies the mode by g = 1 - dt L instead of exp(-dt L), with L <=
 *    3 pi^2 its discrete eigenvalue: |g - exp(-dt L)| <= (dt L)^2 / 2, and steps of it add;
 *  - space: L differs from 3 pi^2 by at most pi^4 (hx^2 + hy^2 + hz^2) / 12, which over
 *    time t changes exp(-L t) by at most t times that;
 *  - rounding: each step adds a few ulps (f's sum of 7 terms times dt, then the update),
 *    which the max-norm-stable step does not grow: 16 ulps a step, 2 for u0. */
static double error_bound(const run *r)
{
    const double eps = r->p.precision == FDTUNE_FLOAT ? FLT_EPSILON : DBL_EPSILON;
    const double t = r->steps * r->dt, l = 3 * PI * PI * r->dt;
    const double h2 = r->h[0] * r->h[0] + r->h[1] * r->h[1] + r->h[2] * r->h[2];
    return r->steps * l * l / 2 + t * pow(PI, 4) * h2 / 12 + (16.0 * r->steps + 2) * eps;
}

static void print_kernel(const run *r)
{
    const fdtune_kernel_info *k = fdtune_kernel_get_info(r->laplacian);
    printf("device:    %s %s (%s)\n", fdtune_device_backend(r->dev), fdtune_device_name(r->dev),
           fdtune_device_arch(r->dev));
    printf("laplacian: %s, %s", k->variant, k->tuned ? "tuned" : "fallback");
    if (k->tuned)
        printf(" (match %s, fdtuned measured %.1f GB/s, copy %.1f GB/s%s)", k->match,
               k->stored_gbps, k->copy_gbps, k->persist ? ", persist" : "");
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
    const fdtune_kernel_info *k = fdtune_kernel_get_info(r->laplacian);
    const double bound = error_bound(r);
    printf("heat shape=%dx%dx%d precision=%s steps=%d source=%s variant=%s laplacian_gbps=%.1f "
           "step_ms=%.4f error=%.3e error_bound=%.3e pitch=%d offset=%d ", r->p.nx, r->p.ny,
           r->p.nz, r->p.precision == FDTUNE_FLOAT ? "float" : "double", r->steps,
           k->tuned ? "tuned" : "fallback", k->variant,
           fdtune_laplacian_bytes(&r->p) / (r->laplacian_ms * 1e-3) / 1e9, r->step_ms, error,
           bound, k->layout.pitch, k->layout.offset);
    if (k->layout.gain > 0)
        printf("gain=%.3f\n", k->layout.gain);
    else
        printf("gain=none\n");
    if (error > bound)
        fprintf(stderr, "heat: the error %.3e exceeds the scheme's bound %.3e\n", error, bound);
    return error <= bound ? FDTUNE_OK : 1;
}

static void teardown(run *r)
{
    if (r->laplacian && r->f)
        fdtune_kernel_persist(r->laplacian, r->f, 1, r->err, sizeof r->err);
    fdtune_function_free(r->update);
    fdtune_field_free(r->laplacian, r->u);
    fdtune_field_free(r->laplacian, r->f);
    fdtune_kernel_close(r->laplacian);
    fdtune_device_close(r->dev);
}

int main(int argc, char **argv)
{
    run r = {.p = {.radius = 1, .precision = FDTUNE_DOUBLE, .pitch = FDTUNE_PITCH_AUTO}};
    const int bad = parse_args(argc, argv, &r);
    if (bad)
        return bad;
    set_scheme(&r);
    int st = fdtune_device_open(NULL, -1, NULL, &r.dev, r.err, sizeof r.err);
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
        fprintf(stderr, "heat: %s\n", r.err);
    teardown(&r);
    return st == FDTUNE_OK ? 0 : 1;
}
