/* kernel.c - libfdtune's kernel API (fdtune_kernel.h): a device handle over the backends of
 * tuner/backends/ (attached to the solver's context and stream), the Laplacian built from
 * fdtuned's answer or, failing that, from kernel 1, the solver's own functions, and memory.
 *
 * An answer is trusted for its choice, not its code: the variant it names is rebuilt here
 * (defines, entry, launch) and the answer must agree. The tuned path asks nothing it does
 * not need: the module is looked up in the disk cache by the answer's source hash, and the
 * source is the library's own copy when the hash is one of its own, else fetched from the
 * daemon (and checked against the hash) only when the module must be compiled. Kernel 1's
 * source is built into the library, so the fallback needs neither a daemon nor a checkout.
 *
 * The rule for what is compiled: text this library carries, or text from a daemon this
 * user trusts to run code as it. The hash check of fetched text proves only that the
 * daemon sent what it named, since the daemon chose both: a hash from the daemon is no
 * trust of its own. The trust is the peer's: fdtune_connect keeps no connection to a
 * daemon run by anyone but this user, root or FDTUNE_TRUST_UID's uid (client.c), and a
 * source is fetched over no other; with no connection (fdtune_kernel_load's c NULL) a hash
 * the library does not carry falls back to kernel 1. */
#include "fdtune_kernel.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "backends/backend.h"
#include "client_json.h"
#include "engine/sources.h"
#include "engine/stencil.h"
#include "hashes.h"
#include "engine/measure.h"
#include "engine/variant.h"
#include "module_cache.h"

#define DEFAULT_TIMEOUT_MS 2000
/* The longest entry name (and a NUL) a module may have: it is part of the cache's key. */
#define ENTRY_MAX 128
/* timer_stop waits at most this long for the work it times: a step of a huge grid on the
 * cpu backend takes seconds, and a hung kernel must still end in an error. */
#define WAIT_MS 600000.0

struct fdtune_device {
    const fdt_backend_ops *ops;
    fdt_backend *b;
};

struct fdtune_function {
    fdtune_device *d;
    fdt_kernel *k;
};

struct fdtune_kernel {
    fdtune_device *d;
    fdt_problem problem;
    const fdt_stencil *op;  /* the problem's stencil, looked up once: launches use it */
    fdt_kernel *stencil, *persist; /* persist: NULL unless the answer measured with it */
    fdt_dim3 grid, block, persist_grid, persist_block;
    fdtune_kernel_info info;
};

__attribute__((format(printf, 4, 5)))
static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* A backend's failure as the library's status and text. */
static int backend_failure(const fdt_error *e, char *err, size_t errlen)
{
    return fail(err, errlen, e->status == FDT_COMPILE_ERROR ? FDTUNE_ERR_COMPILE
                                                            : FDTUNE_ERR_DEVICE, "%s", e->msg);
}

static double now_ms(void)
{
    return (double)fdt_monotonic_ns() / 1e6;
}

static fdt_devptr devptr(const void *p)
{
    return (fdt_devptr)(uintptr_t)p;
}

/* --- devices ------------------------------------------------------------------------- */

/* Appends "name: why; " to the list of backends tried. */
static void note_tried(char *tried, size_t len, const char *name, const char *why)
{
    const size_t used = strlen(tried);
    snprintf(tried + used, len - used, "%s%s: %s", used ? "; " : "", name, why);
}

int fdtune_device_open(const char *backend, int device, void *stream, fdtune_device **out,
                       char *err, size_t errlen)
{
    static const char *const automatic[] = {"hip", "cuda", "cpu", NULL};
    const char *one[] = {backend, NULL};
    const int any = !backend || strcmp(backend, "auto") == 0;
    if (!out)
        return fail(err, errlen, FDTUNE_ERR_ARG, "no place for the device handle");
    *out = NULL;
    if (!any && !fdt_backend_find(backend))
        return fail(err, errlen, FDTUNE_ERR_ARG, "unknown backend '%s' (hip, cuda, cpu or auto)",
                    backend);
    fdtune_device *d = calloc(1, sizeof *d);
    if (!d)
        return fail(err, errlen, FDTUNE_ERR_DEVICE, "out of memory");
    char tried[3 * sizeof ((fdt_error *)0)->msg] = "";
    for (const char *const *name = any ? automatic : one; *name; name++) {
        fdt_error e = {0};
        const fdt_backend_ops *ops = fdt_backend_find(*name);
        if (ops->attach(device, stream, &d->b, &e) == FDT_OK) {
            d->ops = ops;
            *out = d;
            return FDTUNE_OK;
        }
        note_tried(tried, sizeof tried, *name, e.msg);
    }
    free(d);
    return fail(err, errlen, FDTUNE_ERR_DEVICE, "no device could be opened (%s)", tried);
}

void fdtune_device_close(fdtune_device *d)
{
    if (!d)
        return;
    d->ops->close(d->b);
    free(d);
}

const char *fdtune_device_backend(const fdtune_device *d)
{
    return d->ops->info(d->b)->backend;
}

const char *fdtune_device_name(const fdtune_device *d)
{
    return d->ops->info(d->b)->name;
}

const char *fdtune_device_arch(const fdtune_device *d)
{
    return d->ops->info(d->b)->arch;
}

/* --- modules ------------------------------------------------------------------------- */

/* One module to get: its source's hash, and the text itself or the daemon that has it. */
typedef struct module_src {
    fdtune_device *d;
    const char *entry;
    const char *const *defines;
    size_t ndefines;
    const char *hash;
    const char *text;  /* NULL: fetched over conn, only when the cache lacks the module */
    fdtune_conn *conn;
} module_src;

/* Time and origin of the modules a kernel loaded. */
typedef struct module_tally {
    double ms;
    int hits, compiles;
} module_tally;

/* The text the daemon has for hash, checked against it: a daemon that sends other text
 * than it named (another version, a fault) must not get it compiled. */
static fdt_status fetch_source(fdtune_conn *c, const char *hash, char **text, fdt_error *e)
{
    if (!c)
        return fdt_fail(e, FDT_ERROR, "the module is not cached and no daemon can send its "
                        "source");
    json_t *req = json_pack("{s:i, s:s, s:s}", "v", 1, "op", "source", "hash", hash), *j;
    char why[512];
    const int st = fdtune_request_json(c, req, &j, why, sizeof why);
    json_decref(req);
    if (st != FDTUNE_OK)
        return fdt_fail(e, FDT_ERROR, "fetching source %s: %s", hash, why);
    const char *got = json_string_value(json_object_get(j, "text"));
    char got_hash[33] = "";
    if (got)
        fdt_source_hash(got, got_hash);
    fdt_status out = FDT_OK;
    if (!got)
        out = fdt_fail(e, FDT_ERROR, "fdtuned has no source %s (%s)", hash,
                       json_string_value(json_object_get(json_object_get(j, "error"),
                                                         "message")) ?: "no text in answer");
    else if (strcmp(got_hash, hash) != 0)
        out = fdt_fail(e, FDT_ERROR, "fdtuned sent a source whose hash is %s, not %s "
                       "(fdtuned of another version?)", got_hash, hash);
    else if (!(*text = strdup(got)))
        out = fdt_fail(e, FDT_ERROR, "out of memory");
    json_decref(j);
    return out;
}

static fdt_status compile_source(void *ctx, fdt_code *out, fdt_error *e)
{
    const module_src *m = ctx;
    char *fetched = NULL;
    if (!m->text) {
        const fdt_status st = fetch_source(m->conn, m->hash, &fetched, e);
        if (st != FDT_OK)
            return st;
    }
    const fdt_status st = m->d->ops->compile(m->d->ops->info(m->d->b)->arch,
                                             m->text ? m->text : fetched, m->entry,
                                             m->defines, m->ndefines, out, e);
    free(fetched);
    return st;
}

/* The cache's key of m on its device. The entry is part of the target (a cpu module holds
 * the launcher of one entry), and so is this library's build: its compile options and cpu
 * launcher make the module too (FDT_LIBRARY_SOURCES, a checksum of its sources). */
static void module_key(const module_src *m, char key[33])
{
    const fdt_device_info *info = m->d->ops->info(m->d->b);
    char target[sizeof info->arch + ENTRY_MAX + sizeof FDT_LIBRARY_SOURCES + 2];
    snprintf(target, sizeof target, "%s %s %s", info->arch, m->entry, FDT_LIBRARY_SOURCES);
    fdt_code_key(m->hash, m->defines, m->ndefines, target, info->compiler_version, key);
}

/* Loads the module of m on its device, from the disk cache or compiled into it. A cached
 * module the device refuses (a driver update, a damaged file that kept its checksum) is
 * dropped and compiled again, once. */
static fdt_status load_module(const module_src *m, fdt_module_cache *cache,
                              fdt_kernel **out, module_tally *tally, fdt_error *e)
{
    if (strlen(m->entry) >= ENTRY_MAX)
        return fdt_fail(e, FDT_ERROR, "the entry's name is longer than %d bytes", ENTRY_MAX - 1);
    char key[33];
    module_key(m, key);
    const fdt_module_recipe recipe = {.key = key, .compile = compile_source, .ctx = (void *)m};
    const double start = now_ms();
    fdt_status st = FDT_ERROR;
    int hit = 0;
    for (int tries = 0; tries < 2; tries++) {
        fdt_code code = {0};
        st = fdt_module_cache_get(cache, &recipe, &code, &hit, e);
        if (st == FDT_OK)
            st = m->d->ops->load(m->d->b, &code, m->entry, out, e);
        fdt_code_free(&code);
        if (st == FDT_OK || !hit)
            break;
        fdt_module_cache_drop(cache, key);
    }
    tally->ms += now_ms() - start;
    tally->hits += st == FDT_OK && hit;
    tally->compiles += st == FDT_OK && !hit;
    return st;
}

/* --- the problem --------------------------------------------------------------------- */

/* p as the engine names it: the default stencil's (the Laplacian), or spec's when there is
 * one (its row made here, its radius its reach), in p's layout (pitch auto: dense). */
static int problem_from(const fdtune_problem *p, const char *spec, fdt_problem *out, char *err,
                        size_t errlen)
{
    if (!p)
        return fail(err, errlen, FDTUNE_ERR_ARG, "no problem given");
    if ((unsigned)p->precision > FDTUNE_FLOAT || (unsigned)p->cache > FDTUNE_AUTO)
        return fail(err, errlen, FDTUNE_ERR_ARG, "the problem's precision or cache is unknown");
    if (p->pitch == FDTUNE_PITCH_AUTO && p->offset)
        return fail(err, errlen, FDTUNE_ERR_ARG, "an offset needs a pitch of its own: with "
                    "pitch auto the tuner picks both");
    *out = (fdt_problem){.nx = p->nx, .ny = p->ny, .nz = p->nz, .radius = p->radius ?: 1,
                         .precision = p->precision == FDTUNE_FLOAT ? FDT_FLOAT : FDT_DOUBLE,
                         .cache = (fdt_cache_mode)p->cache,
                         .pitch = p->pitch == FDTUNE_PITCH_AUTO ? 0 : p->pitch,
                         .offset = p->offset}; /* auto: dense until an answer says */
    fdt_problem_canonical_layout(out);
    const fdt_stencil *st = fdt_stencil_default();
    char bad[256];
    if (spec && !(st = fdt_stencil_from_text(spec, strlen(spec), bad, sizeof bad)))
        return fail(err, errlen, FDTUNE_ERR_ARG, "the stencil spec: %s", bad);
    fdt_copy_text(out->stencil, sizeof out->stencil, st->name);
    if (st->spec)
        out->radius = st->min_radius;
    const char *why = fdt_problem_check(out);
    return why ? fail(err, errlen, FDTUNE_ERR_ARG, "%s", why) : FDTUNE_OK;
}

static fdt_dim3 dim3_of(const int v[3])
{
    return (fdt_dim3){(unsigned)v[0], (unsigned)v[1], (unsigned)v[2]};
}

static int same_dim3(const int a[3], fdt_dim3 b)
{
    return a[0] == (int)b.x && a[1] == (int)b.y && a[2] == (int)b.z;
}

/* The kernel an answer names, rebuilt by this library: its variant, defines and launch
 * geometry for the problem. The answer's must agree with them, so what gets compiled and
 * launched is what this library would build for a variant it knows and this device can run:
 * a daemon of another version, or one that lies, cannot get other defines compiled or a
 * launch that leaves points out. */
typedef struct rebuilt {
    fdt_variant variant;
    fdt_defines defines;
    fdt_dim3 grid, block;
} rebuilt;

static fdt_status same_defines(const fdtune_answer *a, const fdt_defines *d, fdt_error *e)
{
    int same = a->ndefines == (int)d->count;
    for (int i = 0; same && i < a->ndefines; i++)
        same = strcmp(a->defines[i], d->list[i]) == 0;
    return same ? FDT_OK : fdt_fail(e, FDT_ERROR, "the answer's defines for %s are not this "
                                    "library's (fdtuned of another version?)", a->variant);
}

static fdt_status same_launch(const fdtune_answer *a, const fdt_problem *p, const rebuilt *r,
                              fdt_error *e)
{
    fdt_dim3 grid, block;
    fdt_persist_geometry(p, &grid, &block);
    const int persist_ok = !a->persist.present ||
                           (a->persist.source_hash[0] &&
                            strcmp(a->persist.entry, "fdt_persist_edges") == 0 &&
                            same_dim3(a->persist.grid, grid) && same_dim3(a->persist.block, block));
    if (!same_dim3(a->grid, r->grid) || !same_dim3(a->block, r->block) ||
        strcmp(a->entry, fdt_stencil_of(p)->entry) != 0 || !persist_ok)
        return fdt_fail(e, FDT_ERROR, "the answer's entry or launch geometry for %s is not "
                        "this library's (fdtuned of another version?)", a->variant);
    return FDT_OK;
}

static fdt_status check_answer(const fdtune_answer *a, const fdt_problem *p,
                               const fdt_device_info *dev, rebuilt *r, fdt_error *e)
{
    char why[256];
    if (!a->source_hash[0])
        return fdt_fail(e, FDT_ERROR, "the answer names no source hash (fdtuned is older "
                        "than this library)");
    if (a->ndefines < 0 || a->ndefines > FDTUNE_DEFINES_MAX)
        return fdt_fail(e, FDT_ERROR, "the answer has %d defines", a->ndefines);
    if (fdt_variant_parse(a->variant, &r->variant, why, sizeof why) != 0)
        return fdt_fail(e, FDT_ERROR, "the answer's variant is not one this library knows: %s",
                        why);
    const char *cannot = fdt_variant_check(&r->variant, p, dev);
    if (cannot)
        return fdt_fail(e, FDT_ERROR, "%s cannot run on this %s device: %s", a->variant,
                        dev->backend, cannot);
    fdt_variant_defines(&r->variant, p, &r->defines);
    fdt_variant_geometry(&r->variant, p, &r->grid, &r->block);
    fdt_status st = same_defines(a, &r->defines, e);
    return st == FDT_OK ? same_launch(a, p, r, e) : st;
}

/* The answer's persist step, where this device can run it (NVIDIA sm_80 and later). */
static fdt_status load_persist(fdtune_kernel *k, fdtune_conn *c, const fdtune_answer *a,
                               const rebuilt *r, fdt_module_cache *cache,
                               module_tally *tally, fdt_error *e)
{
    if (!a->persist.present || !k->d->ops->info(k->d->b)->l2_persist)
        return FDT_OK;
    const module_src m = {.d = k->d, .entry = "fdt_persist_edges", .defines = r->defines.list,
                          .ndefines = r->defines.count, .hash = a->persist.source_hash,
                          .text = fdt_built_in_source(a->persist.source_hash),
                          .conn = c};
    fdt_persist_geometry(&k->problem, &k->persist_grid, &k->persist_block);
    const fdt_status st = load_module(&m, cache, &k->persist, tally, e);
    k->info.persist = st == FDT_OK;
    return st;
}

/* Adds what to know to the kernel's note, "; " between items. */
__attribute__((format(printf, 2, 3)))
static void add_note(fdtune_kernel *k, const char *fmt, ...)
{
    const size_t used = strlen(k->info.note);
    if (used + 3 >= sizeof k->info.note)
        return;
    if (used)
        strcpy(k->info.note + used, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->info.note + strlen(k->info.note), sizeof k->info.note - strlen(k->info.note),
              fmt, ap);
    va_end(ap);
}

/* An answer measured on another device than this one runs correctly here, but its speed
 * was not measured here. */
static void note_device(fdtune_kernel *k, const fdtune_answer *a)
{
    const fdt_device_info *dev = k->d->ops->info(k->d->b);
    if (a->from.device[0] && strcmp(a->from.device, dev->name) != 0)
        add_note(k, "the answer was measured on %s, not on this %s", a->from.device,
                 dev->name);
}

/* The source of v for k's problem as this library builds it, and its hash: a built-in one
 * (the Laplacian's families) is the answer's hash, the text found by it (or fetched when
 * the daemon is of another version); a spec's is generated from the solver's own spec, and
 * hashed here: the daemon's weights for the same pattern may differ, and are not used. */
static void own_source(const fdtune_kernel *k, const fdt_variant *v, const char *answer_hash,
                       module_src *m, char hash[33])
{
    if (!k->op->spec) {
        m->hash = answer_hash;
        m->text = fdt_built_in_source(answer_hash);
        return;
    }
    m->text = fdt_variant_source(v, &k->problem);
    fdt_source_hash(m->text, hash);
    m->hash = hash;
}

/* The layout launches assume: with pitch auto the answer's (an fdtuned older than layouts
 * names none: dense), checked as the solver's own would be; an asked one stays, since the
 * solver's fields are in it, and an answer measured in another layout is noted. */
static fdt_status take_layout(fdtune_kernel *k, int pitch_auto, const fdtune_answer *a,
                              fdt_error *e)
{
    fdt_problem q = k->problem;
    q.pitch = a->layout.pitch;
    q.offset = a->layout.offset;
    fdt_problem_canonical_layout(&q);
    if (!pitch_auto) {
        if (a->layout.pitch && !fdt_problem_same(&q, &k->problem))
            add_note(k, "the answer was measured at pitch %d offset %d, not at the asked "
                     "layout", a->layout.pitch, a->layout.offset);
        return FDT_OK;
    }
    const char *why = fdt_problem_check(&q);
    if (why)
        return fdt_fail(e, FDT_ERROR, "the answer's layout: %s", why);
    k->problem = q;
    return FDT_OK;
}

static fdt_status load_answer(fdtune_kernel *k, fdtune_conn *c, const fdtune_answer *a,
                              int pitch_auto, fdt_module_cache *cache, module_tally *tally,
                              fdt_error *e)
{
    rebuilt r;
    fdt_status st = take_layout(k, pitch_auto, a, e);
    if (st == FDT_OK)
        st = check_answer(a, &k->problem, k->d->ops->info(k->d->b), &r, e);
    if (st != FDT_OK)
        return st;
    module_src m = {.d = k->d, .entry = k->op->entry,
                    .defines = r.defines.list, .ndefines = r.defines.count, .conn = c};
    char hash[33];
    own_source(k, &r.variant, a->source_hash, &m, hash);
    st = load_module(&m, cache, &k->stencil, tally, e);
    if (st == FDT_OK)
        st = load_persist(k, c, a, &r, cache, tally, e);
    if (st != FDT_OK)
        return st;
    k->grid = r.grid;
    k->block = r.block;
    k->info.tuned = 1;
    fdt_variant_name(&r.variant, k->info.variant, sizeof k->info.variant);
    snprintf(k->info.match, sizeof k->info.match, "%s", a->match);
    k->info.stored_gbps = a->gbps;
    k->info.copy_gbps = a->copy_gbps;
    k->info.layout.dense_gbps = pitch_auto ? a->layout.dense_gbps : 0;
    k->info.layout.gain = pitch_auto ? a->layout.gain : 0;
    note_device(k, a);
    return FDT_OK;
}

/* Kernel 1 of k's stencil (the seeds' for the Laplacian), from the library's own source. */
static fdt_status load_kernel1(fdtune_kernel *k, fdt_module_cache *cache,
                               module_tally *tally, fdt_error *e)
{
    const fdt_variant v = fdt_variant_kernel1(&k->problem);
    fdt_defines defines;
    fdt_variant_defines(&v, &k->problem, &defines);
    const char *text = fdt_variant_source(&v, &k->problem);
    char hash[33];
    fdt_source_hash(text, hash);
    const module_src m = {.d = k->d, .entry = k->op->entry,
                          .defines = defines.list, .ndefines = defines.count, .hash = hash,
                          .text = text};
    const fdt_status st = load_module(&m, cache, &k->stencil, tally, e);
    if (st != FDT_OK)
        return st;
    fdt_variant_geometry(&v, &k->problem, &k->grid, &k->block);
    fdt_variant_name(&v, k->info.variant, sizeof k->info.variant);
    return FDT_OK;
}

static void unload(fdtune_kernel *k)
{
    if (k->stencil)
        k->d->ops->unload(k->d->b, k->stencil);
    if (k->persist)
        k->d->ops->unload(k->d->b, k->persist);
    k->stencil = k->persist = NULL;
}

static void set_reason(fdtune_kernel *k, const char *why)
{
    fdt_copy_text(k->info.reason, sizeof k->info.reason, why);
}

/* The answer's kernel when there is one that builds, else kernel 1 (no_answer says why
 * there is none). */
static int build(fdtune_device *d, fdtune_conn *c, const fdtune_problem *p, const char *spec,
                 const fdtune_answer *a, const fdtune_kernel_options *o, const char *no_answer,
                 fdtune_kernel **out, char *err, size_t errlen)
{
    if (!d || !out)
        return fail(err, errlen, FDTUNE_ERR_ARG, "no %s given", d ? "place for the kernel"
                                                                  : "device");
    *out = NULL;
    fdtune_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return fail(err, errlen, FDTUNE_ERR_DEVICE, "out of memory");
    k->d = d;
    int st = problem_from(p, spec, &k->problem, err, errlen);
    if (st != FDTUNE_OK) {
        free(k);
        return st;
    }
    k->op = fdt_stencil_of(&k->problem); /* known: problem_from checked it */
    const fdt_problem asked = k->problem;
    fdt_module_cache cache;
    fdt_module_cache_open(&cache, o ? o->cache_dir : NULL);
    module_tally tally = {0};
    fdt_error e = {0};
    if (!a)
        set_reason(k, no_answer);
    else if (strcmp(a->match, "default") == 0)
        set_reason(k, "fdtuned has tuned nothing near this problem yet (match default)");
    else if (load_answer(k, c, a, p->pitch == FDTUNE_PITCH_AUTO, &cache, &tally, &e) !=
             FDT_OK) {
        unload(k);
        k->problem = asked;
        memset(&k->info, 0, sizeof k->info);
        set_reason(k, e.msg);
    }
    if (!k->stencil && load_kernel1(k, &cache, &tally, &e) != FDT_OK) {
        free(k);
        return backend_failure(&e, err, errlen);
    }
    k->info.grid[0] = (int)k->grid.x, k->info.grid[1] = (int)k->grid.y;
    k->info.grid[2] = (int)k->grid.z;
    k->info.block[0] = (int)k->block.x, k->info.block[1] = (int)k->block.y;
    k->info.block[2] = (int)k->block.z;
    k->info.layout.pitch = fdt_problem_pitch(&k->problem);
    k->info.layout.offset = k->problem.offset;
    if (cache.note[0])
        add_note(k, "%s", cache.note);
    k->info.module_ms = tally.ms;
    k->info.cache_hits = tally.hits;
    k->info.compiles = tally.compiles;
    *out = k;
    return FDTUNE_OK;
}

int fdtune_kernel_load(fdtune_device *d, fdtune_conn *c, const fdtune_problem *p,
                       const fdtune_answer *a, const fdtune_kernel_options *o,
                       fdtune_kernel **out, char *err, size_t errlen)
{
    return build(d, c, p, NULL, a, o, "no answer was given", out, err, errlen);
}

int fdtune_kernel_open_spec(fdtune_device *d, const fdtune_problem *p, const char *spec,
                            const fdtune_kernel_options *o, fdtune_kernel **out, char *err,
                            size_t errlen)
{
    if (o && o->kernel1)
        return build(d, NULL, p, spec, NULL, o, "kernel 1 was asked for", out, err, errlen);
    char why[512];
    const int timeout = o && o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
    fdtune_conn *c = fdtune_connect(o ? o->socket : NULL, timeout, why, sizeof why);
    fdtune_answer a;
    const int asked = c && p && fdtune_query_spec(c, p, spec, &a, why, sizeof why) == FDTUNE_OK;
    const int st = build(d, c, p, spec, asked ? &a : NULL, o, why, out, err, errlen);
    fdtune_close(c);
    return st;
}

int fdtune_kernel_open(fdtune_device *d, const fdtune_problem *p,
                       const fdtune_kernel_options *o, fdtune_kernel **out, char *err,
                       size_t errlen)
{
    return fdtune_kernel_open_spec(d, p, NULL, o, out, err, errlen);
}

int fdtune_kernel_launch(fdtune_kernel *k, void *f, const void *u, double cx, double cy,
                         double cz, char *err, size_t errlen)
{
    if (k && k->op->spec)
        return fail(err, errlen, FDTUNE_ERR_ARG, "this kernel is a spec's: launch it with "
                    "fdtune_kernel_launch_fields");
    void *const outputs[] = {f};
    const void *const inputs[] = {u};
    const double constants[] = {cx, cy, cz};
    return fdtune_kernel_launch_fields(k, outputs, inputs, constants, err, errlen);
}

/* The arguments of one launch of k: outputs, inputs, shape and row pitch, constants
 * (stencil.h). */
typedef struct launch_args {
    fdt_devptr grids[2 * FDT_STENCIL_FIELDS_MAX];
    int shape[4];
    double d[FDT_STENCIL_COEFFS_MAX];
    float s[FDT_STENCIL_COEFFS_MAX];
    void *list[2 * FDT_STENCIL_FIELDS_MAX + 4 + FDT_STENCIL_COEFFS_MAX];
} launch_args;

static void launch_args_fill(const fdtune_kernel *k, void *const *outputs,
                             const void *const *inputs, const double *constants, launch_args *a)
{
    const fdt_stencil *st = k->op;
    size_t n = 0, g = 0;
    for (int i = 0; i < st->outputs; i++, g++) {
        a->grids[g] = devptr(outputs[i]);
        a->list[n++] = &a->grids[g];
    }
    for (int i = 0; i < st->inputs; i++, g++) {
        a->grids[g] = devptr(inputs[i]);
        a->list[n++] = &a->grids[g];
    }
    a->shape[0] = k->problem.nx, a->shape[1] = k->problem.ny, a->shape[2] = k->problem.nz;
    a->shape[3] = fdt_problem_pitch(&k->problem);
    for (int i = 0; i < 4; i++)
        a->list[n++] = &a->shape[i];
    for (size_t i = 0; i < st->ncoeffs; i++) {
        a->d[i] = constants[i];
        a->s[i] = (float)constants[i];
        a->list[n++] = k->problem.precision == FDT_FLOAT ? (void *)&a->s[i] : (void *)&a->d[i];
    }
}

/* The bytes from a field's aligned base to its point (0, 0, 0). */
static size_t head_bytes(const fdtune_kernel *k)
{
    return (size_t)k->problem.offset * fdt_real_size(k->problem.precision);
}

/* A kernel built for a layout whose fields start on 16 bytes loads and stores whole 16-byte
 * vectors (kernels_src/common.h, rows_aligned): a field off 16 bytes would fault the
 * device, and is refused. Off the layout's 32-byte sector only, it is right and slower
 * (fdtune_kernel_check_field). */
static int refused_field(const fdtune_kernel *k, uintptr_t field)
{
    /* A kernel built for fields off 16 bytes takes them a point at a time: any will do. */
    return head_bytes(k) % 16 == 0 && field % 16 != 0;
}

static int fields_fit(const fdtune_kernel *k, const fdt_devptr *fields, size_t n, char *err,
                      size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (refused_field(k, (uintptr_t)fields[i]))
            return fail(err, errlen, FDTUNE_ERR_LAYOUT, "field %zu at 0x%llx is not on 16 "
                        "bytes, as the kernel's layout (pitch %d, offset %d) puts it: the "
                        "kernel's whole-vector accesses would fault; nothing was launched "
                        "(fdtune_field_alloc allocates fields in the layout)", i,
                        (unsigned long long)fields[i], fdt_problem_pitch(&k->problem),
                        k->problem.offset);
    return FDTUNE_OK;
}

int fdtune_kernel_launch_fields(fdtune_kernel *k, void *const *outputs,
                                const void *const *inputs, const double *constants,
                                char *err, size_t errlen)
{
    if (!k || !outputs || !inputs || (!constants && k->op->ncoeffs))
        return fail(err, errlen, FDTUNE_ERR_ARG, "no %s given",
                    !k ? "kernel" : !outputs ? "outputs" : !inputs ? "inputs" : "constants");
    launch_args a;
    launch_args_fill(k, outputs, inputs, constants, &a);
    const int st = fields_fit(k, a.grids, (size_t)(k->op->outputs + k->op->inputs), err, errlen);
    if (st != FDTUNE_OK)
        return st;
    fdt_error e = {0};
    if (k->d->ops->launch(k->d->b, k->stencil, k->grid, k->block, a.list, &e) != FDT_OK)
        return backend_failure(&e, err, errlen);
    return FDTUNE_OK;
}

double fdtune_kernel_bytes(const fdtune_kernel *k)
{
    return k ? fdt_stencil_ideal_bytes(k->op, &k->problem) : 0.0;
}

int fdtune_kernel_persist(fdtune_kernel *k, void *f, int release, char *err, size_t errlen)
{
    if (!k)
        return fail(err, errlen, FDTUNE_ERR_ARG, "no kernel given");
    if (!k->persist)
        return FDTUNE_OK;
    fdt_devptr fp = devptr(f);
    int nx = k->problem.nx, ny = k->problem.ny, nz = k->problem.nz, rel = release != 0;
    int pitch = fdt_problem_pitch(&k->problem);
    void *args[] = {&fp, &nx, &ny, &nz, &pitch, &rel};
    fdt_error e = {0};
    if (k->d->ops->launch(k->d->b, k->persist, k->persist_grid, k->persist_block, args, &e) !=
        FDT_OK)
        return backend_failure(&e, err, errlen);
    return FDTUNE_OK;
}

/* --- fields in the kernel's layout ---------------------------------------------------- */

int fdtune_field_alloc(fdtune_kernel *k, void **field, char *err, size_t errlen)
{
    if (!k || !field)
        return fail(err, errlen, FDTUNE_ERR_ARG, "a kernel and a place for the field are needed");
    *field = NULL;
    const size_t bytes = fdt_problem_storage_points(&k->problem) *
                         fdt_real_size(k->problem.precision);
    void *base;
    const int st = fdtune_alloc(k->d, (bytes + FDT_OFFSET_BYTES - 1) / FDT_OFFSET_BYTES *
                                      FDT_OFFSET_BYTES, &base, err, errlen);
    if (st != FDTUNE_OK)
        return st;
    if ((uintptr_t)base % FDT_OFFSET_BYTES) { /* a layout's offset counts from such a base */
        fdtune_free(k->d, base);
        return fail(err, errlen, FDTUNE_ERR_DEVICE, "the %s device's allocator returned a "
                    "buffer not aligned to %d bytes", fdtune_device_backend(k->d),
                    FDT_OFFSET_BYTES);
    }
    *field = (char *)base + head_bytes(k);
    return FDTUNE_OK;
}

void fdtune_field_free(fdtune_kernel *k, void *field)
{
    if (k && field)
        fdtune_free(k->d, (char *)field - head_bytes(k));
}

int fdtune_kernel_check_field(const fdtune_kernel *k, const void *field, char *err,
                              size_t errlen)
{
    enum { sector = 32 };
    if (!k || !field)
        return fail(err, errlen, FDTUNE_ERR_ARG, "no %s given", k ? "field" : "kernel");
    const size_t at = (uintptr_t)field % sector, want = head_bytes(k) % sector;
    if (at == want)
        return FDTUNE_OK;
    const int refused = refused_field(k, (uintptr_t)field);
    return fail(err, errlen, FDTUNE_ERR_LAYOUT, "the field at %p starts %zu bytes past a "
                "%d-byte boundary, the kernel's layout (pitch %d, offset %d) %zu: %s "
                "(fdtune_field_alloc allocates fields in the layout)", field, at, sector,
                fdt_problem_pitch(&k->problem), k->problem.offset, want,
                refused ? "launches on it are refused, since the kernel's whole-vector "
                          "accesses would fault"
                        : "launches compute the right results but slower than measured");
}

const fdtune_kernel_info *fdtune_kernel_get_info(const fdtune_kernel *k)
{
    return &k->info;
}

void fdtune_kernel_close(fdtune_kernel *k)
{
    if (!k)
        return;
    unload(k);
    free(k);
}

double fdtune_laplacian_bytes(const fdtune_problem *p)
{
    fdt_problem q;
    if (problem_from(p, NULL, &q, NULL, 0) != FDTUNE_OK)
        return 0.0;
    return fdt_stencil_ideal_bytes(fdt_stencil_of(&q), &q);
}

/* --- the solver's own functions ------------------------------------------------------ */

int fdtune_function_compile(fdtune_device *d, const char *source, const char *entry,
                            const char *const *defines, int ndefines,
                            const fdtune_kernel_options *o, fdtune_function **out, char *err,
                            size_t errlen)
{
    if (!d || !source || !entry || !out || ndefines < 0 || (ndefines && !defines))
        return fail(err, errlen, FDTUNE_ERR_ARG, "a device, a source, an entry and a place "
                    "for the function are needed");
    *out = NULL;
    fdtune_function *fn = calloc(1, sizeof *fn);
    if (!fn)
        return fail(err, errlen, FDTUNE_ERR_DEVICE, "out of memory");
    char hash[33];
    fdt_source_hash(source, hash);
    const module_src m = {.d = d, .entry = entry, .defines = defines,
                          .ndefines = (size_t)ndefines, .hash = hash, .text = source};
    fdt_module_cache cache;
    fdt_module_cache_open(&cache, o ? o->cache_dir : NULL);
    module_tally tally = {0};
    fdt_error e = {0};
    if (load_module(&m, &cache, &fn->k, &tally, &e) != FDT_OK) {
        free(fn);
        return backend_failure(&e, err, errlen);
    }
    fn->d = d;
    *out = fn;
    return FDTUNE_OK;
}

int fdtune_function_launch(fdtune_function *fn, const int grid[3], const int block[3],
                           void **args, char *err, size_t errlen)
{
    if (!fn || !grid || !block)
        return fail(err, errlen, FDTUNE_ERR_ARG, "a function, a grid and a block are needed");
    for (int i = 0; i < 3; i++)
        if (grid[i] < 1 || block[i] < 1)
            return fail(err, errlen, FDTUNE_ERR_ARG, "grid and block sizes must be positive");
    fdt_error e = {0};
    if (fn->d->ops->launch(fn->d->b, fn->k, dim3_of(grid), dim3_of(block), args, &e) != FDT_OK)
        return backend_failure(&e, err, errlen);
    return FDTUNE_OK;
}

void fdtune_function_free(fdtune_function *fn)
{
    if (!fn)
        return;
    fn->d->ops->unload(fn->d->b, fn->k);
    free(fn);
}

/* --- memory and timing --------------------------------------------------------------- */

int fdtune_alloc(fdtune_device *d, size_t bytes, void **ptr, char *err, size_t errlen)
{
    if (!d || !ptr)
        return fail(err, errlen, FDTUNE_ERR_ARG, "a device and a place for the pointer are "
                    "needed");
    fdt_devptr p = 0;
    fdt_error e = {0};
    if (d->ops->alloc(d->b, bytes, &p, &e) != FDT_OK)
        return backend_failure(&e, err, errlen);
    *ptr = (void *)(uintptr_t)p;
    return FDTUNE_OK;
}

void fdtune_free(fdtune_device *d, void *ptr)
{
    if (d && ptr)
        d->ops->free(d->b, devptr(ptr));
}

int fdtune_upload(fdtune_device *d, void *dst, const void *src, size_t bytes, char *err,
                  size_t errlen)
{
    fdt_error e = {0};
    if (!d)
        return fail(err, errlen, FDTUNE_ERR_ARG, "no device given");
    return d->ops->upload(d->b, devptr(dst), src, bytes, &e) == FDT_OK
               ? FDTUNE_OK : backend_failure(&e, err, errlen);
}

int fdtune_download(fdtune_device *d, void *dst, const void *src, size_t bytes, char *err,
                    size_t errlen)
{
    fdt_error e = {0};
    if (!d)
        return fail(err, errlen, FDTUNE_ERR_ARG, "no device given");
    return d->ops->download(d->b, dst, devptr(src), bytes, &e) == FDT_OK
               ? FDTUNE_OK : backend_failure(&e, err, errlen);
}

int fdtune_synchronize(fdtune_device *d, char *err, size_t errlen)
{
    fdt_error e = {0};
    if (!d)
        return fail(err, errlen, FDTUNE_ERR_ARG, "no device given");
    return d->ops->sync(d->b, &e) == FDT_OK ? FDTUNE_OK : backend_failure(&e, err, errlen);
}

int fdtune_timer_start(fdtune_device *d, char *err, size_t errlen)
{
    fdt_error e = {0};
    if (!d)
        return fail(err, errlen, FDTUNE_ERR_ARG, "no device given");
    return d->ops->timer_start(d->b, &e) == FDT_OK ? FDTUNE_OK
                                                   : backend_failure(&e, err, errlen);
}

int fdtune_timer_stop(fdtune_device *d, double *ms, char *err, size_t errlen)
{
    fdt_error e = {0};
    if (!d || !ms)
        return fail(err, errlen, FDTUNE_ERR_ARG, "a device and a place for the time are needed");
    return d->ops->timer_stop(d->b, WAIT_MS, ms, &e) == FDT_OK
               ? FDTUNE_OK : backend_failure(&e, err, errlen);
}
