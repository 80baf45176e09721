/* compile_pool.c - a fixed pool of libuv threads that take jobs by index until none are left. */
#include "engine/compile_pool.h"

#include <stdatomic.h>
#include <stdio.h>
#include <uv.h>

typedef struct pool {
    const fdt_backend_ops *ops;
    const char *arch;
    const fdt_problem *problem;
    fdt_compile_job *jobs;
    size_t n;
    atomic_size_t next;
} pool;

static void compile_one(pool *p, fdt_compile_job *job)
{
    fdt_defines defines;
    fdt_error err = {0};
    fdt_variant_defines(&job->variant, p->problem, &defines);
    const uint64_t start = uv_hrtime();
    job->status = p->ops->compile(p->arch, fdt_family_source(job->variant.family),
                                  "fdt_laplacian", defines.list, defines.count, &job->code, &err);
    job->ms = (double)(uv_hrtime() - start) / 1e6;
    if (job->status != FDT_OK)
        fdt_copy_text(job->message, sizeof job->message, err.msg);
}

static void worker(void *arg)
{
    pool *p = arg;
    for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;)
        compile_one(p, &p->jobs[i]);
}

void fdt_compile_all(const fdt_backend_ops *ops, const char *arch, const fdt_problem *problem,
                     fdt_compile_job *jobs, size_t n, int threads)
{
    pool p = {.ops = ops, .arch = arch, .problem = problem, .jobs = jobs, .n = n};
    atomic_init(&p.next, 0);
    if (threads <= 0)
        threads = (int)uv_available_parallelism();
    uv_thread_t tids[256];
    int started = 0;
    while (started < threads && started < 256 && (size_t)started < n &&
           uv_thread_create(&tids[started], worker, &p) == 0)
        started++;
    /* With no thread to spare the caller compiles everything itself. */
    if (started == 0)
        worker(&p);
    for (int t = 0; t < started; t++)
        uv_thread_join(&tids[t]);
}
