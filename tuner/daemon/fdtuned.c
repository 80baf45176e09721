/* fdtuned.c - the daemon's main: settings (embedded defaults, the config file, flags), the
 * store, the device probe and the devices' balance, the socket server and the scheduler on
 * one libuv loop, and the signals: SIGTERM/SIGINT stop cleanly, a second one hurries the
 * stop, SIGHUP reloads the config file.
 *
 * Exit statuses: 0 stopped, 1 could not start, 2 bad usage or settings, 3 stopped in a
 * hurry (the store closed all the same). */
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/balance.h"
#include "daemon/daemon.h"
#include "daemon/import.h"
#include "daemon/log.h"
#include "daemon/site.h"
#include "daemon/notify.h"
#include "daemon/query.h"
#include "daemon/scheduler.h"
#include "daemon/server.h"
#include "daemon/supervisor.h"
#include "engine/stencil.h"
#include "paths.h"

/* Read by a system service when no --config is given. */
#define SYSTEM_CONFIG "/etc/fdtuned/fdtuned.conf"

/* A stop that a second SIGTERM or SIGINT cut short: the store was still closed. */
#define EXIT_HURRIED 3

static uv_signal_t sig_term, sig_int, sig_hup;
static int watching_signals;
static int hurried;
static uv_timer_t stop_timer; /* a stop asked for by a request waits for its answer */
static const char *stop_reason;

/* Begins a clean stop (SIGTERM, SIGINT, the shutdown op): the server stops listening, the
 * workers are stopped, jobs left running go back to the queue. The signals stay caught,
 * without holding the loop open: the default action of a second SIGTERM would end the
 * process with the store open. */
static void stop(fdt_daemon *d, const char *why)
{
    if (d->stopping)
        return;
    d->stopping = 1;
    fdt_log_at(FDT_LOG_NOTICE, "stopping: %s", why);
    fdt_notify_stopping();
    fdt_server_close(d);
    fdt_scheduler_stop(d);
    uv_unref((uv_handle_t *)&sig_term);
    uv_unref((uv_handle_t *)&sig_int);
    uv_unref((uv_handle_t *)&sig_hup);
    uv_close((uv_handle_t *)&stop_timer, NULL);
}

/* A second SIGTERM or SIGINT: what the stop still waits for (answers draining to clients
 * that do not read, the exits of killed workers) is abandoned. The jobs were already put
 * back in the queue and the workers killed by the stop; only the store is closed after. */
static void hurry(fdt_daemon *d, const char *why)
{
    if (hurried)
        return;
    hurried = 1;
    fdt_log_at(FDT_LOG_WARNING, "%s while stopping: hurrying, the store is closed now", why);
    uv_stop(d->loop);
}

static void on_stop_timer(uv_timer_t *t)
{
    stop(t->data, stop_reason);
}

static void stop_soon(fdt_daemon *d, const char *why)
{
    stop_timer.data = d;
    stop_reason = why;
    uv_timer_start(&stop_timer, on_stop_timer, 0, 0);
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: fdtuned [--config FILE] [--socket PATH] [--db PATH] [--backend B]\n"
            "               [--cpu-devices N]\n"
            "\n"
            "Tunes GPU stencil kernels and answers solvers over a Unix socket.\n"
            "  --config FILE   settings (INI; config/fdtuned.conf documents every key);\n"
            "                  a system service reads " SYSTEM_CONFIG " if it exists\n"
            "  --socket PATH   overrides [daemon] socket\n"
            "  --db PATH       overrides [daemon] db\n"
            "  --backend B     overrides [daemon] backend: auto, hip, cuda or cpu\n"
            "  --cpu-devices N overrides [daemon] cpu_devices: the cpu backend's devices\n"
            "  -V, --version   prints the version\n"
            "  -h, --help      prints this\n"
            "Without flags a user's daemon lives under $XDG_RUNTIME_DIR and $XDG_STATE_HOME,\n"
            "root's under /run/fdtuned and /var/lib/fdtuned.\n"
            "SIGTERM or SIGINT stops it; a second one hurries the stop.\n"
            "Exit status: 0 stopped, 1 could not start, 2 bad usage or settings,\n"
            "3 stopped in a hurry (the store closed all the same).\n");
}

typedef struct flags {
    const char *config, *socket, *db, *backend, *cpu_devices;
} flags;

/* 0 to go on, 1 to exit 0 (help, version), 2 for bad usage. */
static int parse_flags(int argc, char **argv, flags *f)
{
    static const struct option options[] = {
        {"config", required_argument, NULL, 'c'}, {"socket", required_argument, NULL, 's'},
        {"db", required_argument, NULL, 'd'},     {"backend", required_argument, NULL, 'b'},
        {"cpu-devices", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},         {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "hV", options, NULL)) != -1) {
        switch (opt) {
        case 'c': f->config = optarg; break;
        case 's': f->socket = optarg; break;
        case 'd': f->db = optarg; break;
        case 'b': f->backend = optarg; break;
        case 'n': f->cpu_devices = optarg; break;
        case 'h': usage(stdout); return 1;
        case 'V': printf("fdtuned %s\n", FDT_VERSION); return 1;
        default:
            fprintf(stderr, "fdtuned: unknown option or missing value: '%s'\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "fdtuned: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    return 0;
}

/* The command line's settings, which override the file's at start and at each SIGHUP. */
static flags given;

/* The flags over c's settings: 0, or -1 with the reason in err. */
static int apply_flags(fdt_config *c, const flags *f, char *err, size_t len)
{
    const char *keys[] = {"socket", "db", "backend", "cpu_devices"};
    const char *values[] = {f->socket, f->db, f->backend, f->cpu_devices};
    for (int i = 0; i < 4; i++)
        if (values[i] && fdt_config_set(c, "daemon", keys[i], values[i], err, len) != 0) {
            char why[256];
            snprintf(why, sizeof why, "%s", err);
            snprintf(err, len, "--%s: %s", keys[i], why);
            return -1;
        }
    return 0;
}

/* Defaults, then the file, then the flags: each later source wins. */
static int load_settings(fdt_config *c, const flags *f, const char **path)
{
    char err[512];
    const int system = getuid() == 0;
    fdt_config_defaults(c, system);
    *path = f->config;
    if (!*path && system && access(SYSTEM_CONFIG, F_OK) == 0)
        *path = SYSTEM_CONFIG;
    if (*path && fdt_config_load(c, *path, err, sizeof err) != 0) {
        fprintf(stderr, "fdtuned: %s\n", err);
        return -1;
    }
    if (apply_flags(c, f, err, sizeof err) != 0 || fdt_config_check(c, err, sizeof err) != 0) {
        fprintf(stderr, "fdtuned: %s\n", err);
        return -1;
    }
    return 0;
}

static int resolve_admin_group(fdt_daemon *d)
{
    d->has_admin_gid = 0;
    if (!d->config.admin_group[0])
        return 0;
    struct group *g = getgrnam(d->config.admin_group);
    if (!g) {
        fprintf(stderr, "fdtuned: admin_group '%s' does not exist\n", d->config.admin_group);
        return -1;
    }
    d->admin_gid = g->gr_gid;
    d->has_admin_gid = 1;
    return 0;
}

/* The site store read again, and the queries' rows with it; a file that cannot be read
 * leaves the rows in force. */
static void reload_site(fdt_daemon *d)
{
    char err[512];
    if (fdt_site_load(d, err, sizeof err) != 0) {
        fdt_log_at(FDT_LOG_WARNING, "SIGHUP: site store: %s; keeping the rows in force", err);
        return;
    }
    fdt_query_cache_free(d);
    if (fdt_query_cache_load(d, err, sizeof err) != 0) {
        fdt_log_at(FDT_LOG_ERR, "SIGHUP: %s; stopping", err);
        d->stop_soon(d, "the tuned shapes could not be read again");
        return;
    }
    if (d->site)
        fdt_log_at(FDT_LOG_NOTICE, "site store %s: %zu winners on %zu devices", d->site->path,
                   d->site->nbest, d->site->ndevices);
}

/* SIGHUP: what can change while running does; the socket, the store and the backend are
 * fixed for the life of the process and need a restart. */
static void reload(fdt_daemon *d)
{
    fdt_config fresh = d->config;
    char err[512];
    if (!d->config_path) {
        fdt_log_at(FDT_LOG_WARNING, "SIGHUP: no config file to reload");
        return;
    }
    if (fdt_config_load(&fresh, d->config_path, err, sizeof err) != 0 ||
        apply_flags(&fresh, &given, err, sizeof err) != 0 ||
        fdt_config_check(&fresh, err, sizeof err) != 0) {
        fdt_log_at(FDT_LOG_WARNING, "SIGHUP: %s; keeping the settings in force", err);
        return;
    }
    if (strcmp(fresh.socket, d->config.socket) != 0 || strcmp(fresh.db, d->config.db) != 0 ||
        strcmp(fresh.backend, d->config.backend) != 0)
        fdt_log_at(FDT_LOG_WARNING,
                   "SIGHUP: socket, db and backend changes take effect at the next start");
    memcpy(fresh.socket, d->config.socket, sizeof fresh.socket);
    memcpy(fresh.db, d->config.db, sizeof fresh.db);
    memcpy(fresh.backend, d->config.backend, sizeof fresh.backend);
    fresh.cpu_devices = d->config.cpu_devices; /* the devices were found at start */
    const fdt_config old = d->config;
    d->config = fresh;
    if (resolve_admin_group(d) != 0) {
        d->config = old;
        resolve_admin_group(d);
        fdt_log_at(FDT_LOG_WARNING, "SIGHUP: keeping the settings in force");
        return;
    }
    fdt_log_at(FDT_LOG_NOTICE, "SIGHUP: reloaded %s", d->config_path);
    reload_site(d);
}

static void on_signal(uv_signal_t *h, int signum)
{
    fdt_daemon *d = h->data;
    const char *name = signum == SIGTERM ? "SIGTERM" : "SIGINT";
    if (signum == SIGHUP)
        reload(d);
    else if (d->stopping)
        hurry(d, name);
    else
        stop(d, name);
}

static void watch_signals_and_stop_requests(fdt_daemon *d)
{
    uv_signal_t *handles[] = {&sig_term, &sig_int, &sig_hup};
    const int signums[] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(d->loop, handles[i]);
        handles[i]->data = d;
        uv_signal_start(handles[i], on_signal, signums[i]);
    }
    watching_signals = 1;
    uv_timer_init(d->loop, &stop_timer);
}

/* Once the store is closed a signal's default action loses nothing. */
static void unwatch_signals(fdt_daemon *d)
{
    if (!watching_signals)
        return;
    uv_close((uv_handle_t *)&sig_term, NULL);
    uv_close((uv_handle_t *)&sig_int, NULL);
    uv_close((uv_handle_t *)&sig_hup, NULL);
    uv_run(d->loop, UV_RUN_DEFAULT);
}

static void log_devices(const fdt_daemon *d)
{
    for (size_t i = 0; i < d->ndevices; i++) {
        const fdt_device_slot *slot = &d->devices[i];
        char balance[160];
        fdt_balance_describe(slot, balance, sizeof balance);
        fdt_log("device %zu: %s %s (%s), fingerprint %s; %s", i, d->backend, slot->info.name,
                slot->info.arch, slot->fingerprint, balance);
    }
}

/* One stored spec made a row again; a spec this build no longer takes is logged and left
 * in the store (its jobs then fail with the reason, its answers are not served). A spec
 * this build names otherwise (its pattern's hash changed: FNV-1a became XXH3) is renamed in
 * every row, before any query or job reads them, so that its answers are served at once,
 * whether or not it is ever queued again; a store that refuses the rename leaves it
 * unserved, as before. */
static int know_stencil(void *ctx, const char *name, const char *spec)
{
    fdt_store *store = ctx;
    char why[256];
    const fdt_stencil *st = fdt_stencil_from_text(spec, strlen(spec), why, sizeof why);
    if (!st) {
        fdt_log_at(FDT_LOG_WARNING, "stored stencil %s: %s; its jobs and answers are not served",
                   name, why);
        return 0;
    }
    if (strcmp(st->name, name) == 0)
        return 0;
    if (fdt_store_stencil_rename(store, name, st->name) == 0)
        fdt_log_at(FDT_LOG_NOTICE, "stored stencil %s is the pattern of %s in this build: its "
                   "jobs, results and answers are renamed to it", name, st->name);
    else
        fdt_log_at(FDT_LOG_WARNING,
                   "stored stencil %s is the pattern of %s in this build and cannot be renamed "
                   "(%s); its jobs and answers are not served",
                   name, st->name, fdt_store_error(store));
    return 0;
}

static int start(fdt_daemon *d)
{
    char err[512];
    if (gethostname(d->host, sizeof d->host) != 0)
        fdt_copy_text(d->host, sizeof d->host, "localhost");
    d->host[sizeof d->host - 1] = '\0';
    if (resolve_admin_group(d) != 0)
        return -1;
    /* The store's directory is held to the socket's rules: another user who could write it
     * could replace the store, its -wal or its lock file between two opens. */
    int created;
    const int dir = fdt_open_private_parent(d->config.db, 0700, &created, err, sizeof err);
    if (dir < 0) {
        fprintf(stderr, "fdtuned: %s\n", err);
        return -1;
    }
    close(dir);
    d->store = fdt_store_open(d->config.db, err, sizeof err);
    if (!d->store) {
        fprintf(stderr, "fdtuned: %s\n", err);
        return -1;
    }
    if (fdt_store_stencils_each(d->store, know_stencil, d->store) != 0) {
        fprintf(stderr, "fdtuned: %s\n", fdt_store_error(d->store));
        return -1;
    }
    if (fdt_worker_probe(d, err, sizeof err) != 0) {
        fprintf(stderr, "fdtuned: %s\n", err);
        return -1;
    }
    fdt_balance_measure_missing(d);
    if (fdt_site_load(d, err, sizeof err) != 0)
        fdt_log_at(FDT_LOG_WARNING, "site store: %s; serving without it", err);
    else if (d->site)
        fdt_log_at(FDT_LOG_NOTICE, "site store %s: %zu winners on %zu devices", d->site->path,
                   d->site->nbest, d->site->ndevices);
    if (fdt_query_cache_load(d, err, sizeof err) != 0 ||
        fdt_scheduler_init(d, err, sizeof err) != 0 || fdt_server_start(d, err, sizeof err) != 0) {
        fprintf(stderr, "fdtuned: %s\n", err);
        return -1;
    }
    watch_signals_and_stop_requests(d);
    log_devices(d);
    fdt_log("serving %s, store %s", d->config.socket, d->config.db);
    fdt_notify_ready(d->loop, "serving; no job running");
    fdt_scheduler_kick(d);
    return 0;
}

/* Whatever start() left open is closed here, in the order the parts depend on each other. */
static void finish(fdt_daemon *d)
{
    if (!d->stopping) {
        fdt_server_close(d);
        if (d->scheduler)
            fdt_scheduler_stop(d);
    }
    uv_run(d->loop, UV_RUN_DEFAULT);
    fdt_scheduler_free(d);
    fdt_server_free(d);
    fdt_query_cache_free(d);
    fdt_imports_free(d);
    fdt_site_free(d);
    fdt_store_close(d->store);
    free(d->devices);
    unwatch_signals(d);
    uv_loop_close(d->loop);
}

/* The hurried end: the store alone is closed (its WAL checkpointed). The handles still
 * open, and the memory they use, are left to the exit; the workers die with the daemon
 * (their parent-death signal) if the stop's SIGKILL has not already ended them. */
static void finish_hurried(fdt_daemon *d)
{
    fdt_store_close(d->store);
}

int main(int argc, char **argv)
{
    const int usage_rc = parse_flags(argc, argv, &given);
    if (usage_rc)
        return usage_rc == 1 ? 0 : 2;
    static fdt_daemon d;
    if (load_settings(&d.config, &given, &d.config_path) != 0)
        return 2;
    /* A client that hangs up mid-answer must not kill the daemon. */
    signal(SIGPIPE, SIG_IGN);
    d.loop = uv_default_loop();
    d.start_ns = uv_hrtime();
    d.stop_soon = stop_soon;
    int rc = start(&d) == 0 ? 0 : 1;
    if (rc == 0)
        uv_run(d.loop, UV_RUN_DEFAULT);
    if (hurried) {
        finish_hurried(&d);
        rc = EXIT_HURRIED;
    } else
        finish(&d);
    fdt_log_at(FDT_LOG_NOTICE, hurried ? "stopped in a hurry" : "stopped");
    return rc;
}
