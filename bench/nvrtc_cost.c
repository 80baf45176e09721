/* nvrtc_cost.c - what one NVRTC compile of a kernel family costs, per option set: the same
 * source (common.h + a family's template, as fdtuned embeds it) and defines compiled N times
 * with each option set given on the command line, on one thread, the mean and the fastest
 * wall time per compile printed. Used to choose the cuda backend's compile options (issue 14:
 * the cold exhaustive tune was bound by NVRTC on every core). Built on the GPU host:
 *   nvcc -O2 -o nvrtc_cost bench/nvrtc_cost.c -lnvrtc
 *   cat kernels_src/common.h kernels_src/zvec.hip >src.cu
 *   ./nvrtc_cost src.cu 8 "-DFDT_REAL=double ..." "" "-minimal" ...
 * The third argument is the defines, one string split at spaces; each further argument is
 * an option set (split at spaces too) added to -arch=sm_90 -std=c++17. With THREADS=T in the
 * environment, T threads compile N times each, at once, and the wall time of the whole is
 * printed too: whether NVRTC's compiles in one process run side by side. */
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_OPTS 64
#define MAX_THREADS 64

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

/* Appends the words of text (split at spaces, text modified) to opts. */
static int split(char *text, const char **opts, int n)
{
    for (char *w = strtok(text, " "); w && n < MAX_OPTS; w = strtok(NULL, " "))
        opts[n++] = w;
    return n;
}

/* One compile; its wall time in ms, or -1 with the log printed. */
static double compile_once(const char *src, const char **opts, int n)
{
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, src, "fdt_laplacian", 0, NULL, NULL) != NVRTC_SUCCESS)
        return -1;
    const double t0 = now_ms();
    nvrtcResult r = nvrtcCompileProgram(prog, n, opts);
    size_t size = 0;
    if (r == NVRTC_SUCCESS)
        r = nvrtcGetCUBINSize(prog, &size);
    const double ms = now_ms() - t0;
    if (r != NVRTC_SUCCESS) {
        size_t len = 0;
        nvrtcGetProgramLogSize(prog, &len);
        char *log = malloc(len + 1);
        if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
            fprintf(stderr, "%s\n%s\n", nvrtcGetErrorString(r), log);
        free(log);
    }
    nvrtcDestroyProgram(&prog);
    return r == NVRTC_SUCCESS ? ms : -1;
}

typedef struct run {
    const char *src;
    const char **opts;
    int nopts, reps;
    double sum, best; /* sum < 0: a compile failed */
} run;

static void *compile_reps(void *arg)
{
    run *r = arg;
    r->sum = 0;
    r->best = 1e30;
    for (int i = 0; i < r->reps; i++) {
        const double ms = compile_once(r->src, r->opts, r->nopts);
        if (ms < 0) {
            r->sum = -1;
            break;
        }
        r->sum += ms;
        r->best = ms < r->best ? ms : r->best;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: nvrtc_cost SOURCE N DEFINES OPTIONS...\n");
        return 2;
    }
    char *src = read_file(argv[1]);
    const int reps = atoi(argv[2]);
    if (!src || reps < 1) {
        fprintf(stderr, "nvrtc_cost: cannot read %s, or N < 1\n", argv[1]);
        return 2;
    }
    const char *env = getenv("THREADS");
    int threads = env ? atoi(env) : 1;
    threads = threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    for (int a = 4; a < argc; a++) {
        const char *opts[MAX_OPTS] = {"-arch=sm_90", "-std=c++17"};
        char *defines = strdup(argv[3]), *extra = strdup(argv[a]);
        const int n = split(extra, opts, split(defines, opts, 2));
        run runs[MAX_THREADS];
        pthread_t tids[MAX_THREADS];
        const double t0 = now_ms();
        for (int t = 0; t < threads; t++) {
            runs[t] = (run){.src = src, .opts = opts, .nopts = n, .reps = reps};
            pthread_create(&tids[t], NULL, compile_reps, &runs[t]);
        }
        for (int t = 0; t < threads; t++)
            pthread_join(tids[t], NULL);
        const double wall = now_ms() - t0;
        if (runs[0].sum < 0)
            printf("options '%s': compile failed\n", argv[a]);
        else
            printf("options '%s': mean %.1f ms, fastest %.1f ms over %d compiles; %d threads "
                   "at once: %.1f ms for all %d\n", argv[a], runs[0].sum / reps, runs[0].best,
                   reps, threads, wall, threads * reps);
        free(defines);
        free(extra);
    }
    free(src);
    return 0;
}
