/* compile_pool.c - a fixed pool of libuv threads that take jobs by index until none are
 * left, and a queue of the finished ones that the caller drains as they come. */
#include "engine/compile_pool.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <uv.h>

#include "engine/stencil.h"

/* A thread and the helper slot it compiles in. */
typedef struct thread {
    fdt_compile_pool *pool;
    int slot;
    uv_thread_t tid;
} thread;

struct fdt_compile_pool {
    const fdt_backend_ops *ops;
    fdt_compile_helpers *helpers; /* NULL: compile in this process */
    const char *arch;
    const fdt_problem *problem;
    fdt_compile_job *jobs;
    size_t n;
    atomic_size_t next;   /* the next job a thread takes; n once dropped */
    uv_mutex_t lock;      /* guards what follows */
    uv_cond_t finished;   /* signalled at each compile's end */
    size_t *done;         /* indices in the order their compiles ended */
    size_t ndone, handed, settled; /* ended; handed back; ended or dropped */
    uint64_t start_ns, last_ns;
    thread threads[FDT_COMPILE_THREADS_MAX];
    int nthreads;
};

void fdt_compile_one(const fdt_backend_ops *ops, fdt_compile_helpers *helpers, int slot,
                     const char *arch, const fdt_problem *p, fdt_compile_job *job)
{
    fdt_defines defines;
    fdt_error err = {0};
    const char *name = fdt_family_name(job->variant.family);
    const char *source = fdt_variant_source(&job->variant, p);
    const char *entry = fdt_stencil_of(p)->entry;
    fdt_variant_defines(&job->variant, p, &defines);
    const uint64_t start = uv_hrtime();
    if (!source)
        job->status = fdt_fail(&err, FDT_ERROR, "out of memory for the source of %s", name);
    else if (helpers)
        job->status = fdt_compile_helpers_compile(helpers, slot, arch, name, source, entry,
                                                  defines.list, defines.count, &job->code,
                                                  &err);
    else
        job->status = ops->compile(arch, source, entry, defines.list, defines.count,
                                   &job->code, &err);
    job->ms = (double)(uv_hrtime() - start) / 1e6;
    if (job->status != FDT_OK)
        fdt_copy_text(job->message, sizeof job->message, err.msg);
}

static void compile_one(fdt_compile_pool *p, int slot, fdt_compile_job *job)
{
    fdt_compile_one(p->ops, p->helpers, slot, p->arch, p->problem, job);
}

static void worker(void *arg)
{
    const thread *t = arg;
    fdt_compile_pool *p = t->pool;
    for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
        compile_one(p, t->slot, &p->jobs[i]);
        uv_mutex_lock(&p->lock);
        p->done[p->ndone++] = i;
        p->settled++;
        p->last_ns = uv_hrtime();
        uv_cond_signal(&p->finished);
        uv_mutex_unlock(&p->lock);
    }
}

fdt_compile_pool *fdt_compile_start(const fdt_backend_ops *ops, fdt_compile_helpers *helpers,
                                    const char *arch, const fdt_problem *problem,
                                    fdt_compile_job *jobs, size_t n, int threads)
{
    fdt_compile_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->done = malloc((n ? n : 1) * sizeof *p->done)) ||
        uv_mutex_init(&p->lock) != 0) {
        free(p ? p->done : NULL);
        free(p);
        return NULL;
    }
    if (uv_cond_init(&p->finished) != 0) {
        uv_mutex_destroy(&p->lock);
        free(p->done);
        free(p);
        return NULL;
    }
    p->ops = ops;
    p->helpers = helpers;
    p->arch = arch;
    p->problem = problem;
    p->jobs = jobs;
    p->n = n;
    p->start_ns = uv_hrtime();
    atomic_init(&p->next, 0);
    if (threads <= 0)
        threads = (int)uv_available_parallelism();
    const int most = threads < FDT_COMPILE_THREADS_MAX ? threads : FDT_COMPILE_THREADS_MAX;
    for (; p->nthreads < most && (size_t)p->nthreads < n; p->nthreads++) {
        thread *t = &p->threads[p->nthreads];
        *t = (thread){.pool = p, .slot = p->nthreads};
        if (uv_thread_create(&t->tid, worker, t) != 0)
            break;
    }
    /* With no thread to spare the caller compiles everything itself, here. */
    if (p->nthreads == 0) {
        p->threads[0] = (thread){.pool = p, .slot = 0};
        worker(&p->threads[0]);
    }
    return p;
}

size_t fdt_compile_next(fdt_compile_pool *p)
{
    uv_mutex_lock(&p->lock);
    while (p->handed == p->ndone && p->settled < p->n)
        uv_cond_wait(&p->finished, &p->lock);
    const size_t i = p->handed < p->ndone ? p->done[p->handed++] : SIZE_MAX;
    uv_mutex_unlock(&p->lock);
    return i;
}

double fdt_compile_wall_ms(const fdt_compile_pool *p)
{
    fdt_compile_pool *q = (fdt_compile_pool *)p;
    uv_mutex_lock(&q->lock);
    const double ms = q->settled == q->n && q->ndone ? (double)(q->last_ns - q->start_ns) / 1e6
                                                      : 0;
    uv_mutex_unlock(&q->lock);
    return ms;
}

void fdt_compile_end(fdt_compile_pool *p)
{
    const size_t taken = atomic_exchange(&p->next, p->n);
    for (size_t i = taken; i < p->n; i++) {
        p->jobs[i].status = FDT_ERROR;
        fdt_copy_text(p->jobs[i].message, sizeof p->jobs[i].message, "not compiled: dropped");
    }
    for (int t = 0; t < p->nthreads; t++)
        uv_thread_join(&p->threads[t].tid);
    uv_cond_destroy(&p->finished);
    uv_mutex_destroy(&p->lock);
    free(p->done);
    free(p);
}

void fdt_compile_all(const fdt_backend_ops *ops, fdt_compile_helpers *helpers,
                     const char *arch, const fdt_problem *p, fdt_compile_job *jobs, size_t n,
                     int threads)
{
    fdt_compile_pool *pool = fdt_compile_start(ops, helpers, arch, p, jobs, n, threads);
    if (!pool) { /* out of memory for a pool: compile them here, one after another */
        for (size_t i = 0; i < n; i++)
            fdt_compile_one(ops, NULL, 0, arch, p, &jobs[i]);
        return;
    }
    while (fdt_compile_next(pool) != SIZE_MAX)
        continue;
    fdt_compile_end(pool);
}
