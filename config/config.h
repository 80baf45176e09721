/* config.h - fdtuned's settings: the embedded defaults, the INI file (config/fdtuned.conf
 * documents every key), and command-line overrides, all checked by the same code. */
#ifndef FDT_CONFIG_H
#define FDT_CONFIG_H

#include <stddef.h>
#include <sys/types.h>

#define FDT_PATH_MAX 4096
/* The largest search budgets a job may have: evaluations (and patience), and seconds (a
 * year); the settings file, fdtune and the daemon's requests are held to them alike. */
#define FDT_SEARCH_EVALS_MAX 100000000
#define FDT_SEARCH_SECONDS_MAX 31536000

typedef struct fdt_config {
    int system;               /* what an empty socket or db means: a system service's paths */
    /* [daemon] */
    char socket[FDT_PATH_MAX]; /* at most 107 bytes: a sockaddr_un holds no more */
    char db[FDT_PATH_MAX];
    char site_store[FDT_PATH_MAX]; /* a site's merged results, read only; empty: none */
    int confirm_imported;     /* an imported winner of a device here is timed here first */
    char backend[8];          /* auto hip cuda cpu */
    unsigned socket_mode;     /* permission bits of the socket file */
    char socket_group[64];    /* group owning the socket, or empty */
    char admin_group[64];     /* members may tune, batch, cancel, shut down; or empty */
    size_t max_line_bytes;    /* longest request line */
    int max_clients;          /* of the peers not trusted; trusted ones have as many again */
    int max_clients_per_uid;
    int cpu_devices;          /* devices the cpu backend presents, all of one kind */  /* of one uid among those not trusted */
    /* [worker] */
    char worker_path[FDT_PATH_MAX]; /* fdtune-worker; empty: next to fdtuned */
    int heartbeat_ms;
    int heartbeat_timeout_ms;
    int variant_deadline_ms;
    int worker_nice;
    int compile_threads;      /* 0: the worker's share of the CPUs */
    char compile_in[16];      /* auto processes threads: where those threads compile */
    int compile_deadline_ms;  /* a compile in a helper process past it is killed */
    int max_restarts;         /* crashes in a row without progress before a job fails */
    int test_families;        /* offer the test-only families (fault, spin, broken) */
    /* [tuning] */
    int samples;
    double min_sample_ms;
    double timeout_ms;        /* a sample past this (times its estimate) is hung */
    int leaders;
    int leader_samples;
    double max_spread;        /* a spread wider is measured again, then stored noisy; 0: no bound */
    int remeasure_doubtful_s; /* a doubt of the host's, measured again when idle after; 0: never */
    unsigned seed;
    /* [search]: how jobs that do not say search their space, and when they stop */
    char strategy[16];        /* exhaustive random guided */
    int budget;               /* evaluations; 0: no limit */
    double budget_s;          /* seconds of measuring; 0: no limit */
    int patience;             /* evaluations without a 0.5% gain; 0: never stop early */
} fdt_config;

/* The strategies [search] strategy takes, NULL-terminated: tuner/search/'s, which this
 * layer cannot include (test_search checks that the two lists agree). */
extern const char *const fdt_config_strategies[];

/* The embedded defaults. system: the paths of a system service (/run/fdtuned,
 * /var/lib/fdtuned) rather than a user's ($XDG_RUNTIME_DIR, $XDG_STATE_HOME). */
void fdt_config_defaults(fdt_config *c, int system);

/* Sets one key as the file would (section "daemon", key "socket_mode", value "0660");
 * 0, or -1 with a message naming the key in err, c unchanged. Only the syntax and range of
 * one value are checked (groups are looked up by the daemon at start). An empty socket or
 * db stands for the default path of c->system. */
int fdt_config_set(fdt_config *c, const char *section, const char *key, const char *value,
                   char *err, size_t errlen);

/* Reads an INI file over c; 0, or -1 with "FILE:LINE: ..." naming the key in err, the first
 * error found, and c unchanged. A missing file is an error (the user named it), and so is
 * anything but a regular file (a symlink to one is followed): a FIFO or a device is refused
 * at once, never waited on. inih reads
 * lines of at most 198 characters; a longer one is an error, never cut short. */
int fdt_config_load(fdt_config *c, const char *path, char *err, size_t errlen);

/* What no single key can say: the rules between keys, checked once the file and the
 * command line are both applied (heartbeat_timeout_ms at least two heartbeats; default
 * paths that fit). 0, or -1 with a message naming the keys. */
int fdt_config_check(const fdt_config *c, char *err, size_t errlen);

/* The default socket and database paths (no directories are created); 0, or -1 with out
 * empty when the path does not fit in len:
 * system: /run/fdtuned/fdtuned.sock, /var/lib/fdtuned/fdtuned.db;
 * user: $XDG_RUNTIME_DIR/fdtuned/fdtuned.sock (else /tmp/fdtuned-UID/fdtuned.sock),
 *       $XDG_STATE_HOME/fdtuned/fdtuned.db (else ~/.local/state/fdtuned/fdtuned.db, else
 *       /tmp/fdtuned-UID/fdtuned.db with no HOME). Relative XDG values are ignored.
 * Shared with the client library, which looks for the socket the same way. */
int fdt_default_socket(int system, char *out, size_t len);
int fdt_default_db(int system, char *out, size_t len);

/* libfdtune's module cache: $FDTUNE_CACHE_DIR, else $XDG_CACHE_HOME/fdtune, else
 * ~/.cache/fdtune; empty with none of them, or when the path does not fit in len. */
int fdt_default_cache_dir(char *out, size_t len);

/* Creates path and the directories above it that do not exist yet (mode, before umask).
 * 0, or -1 with the reason. */
int fdt_make_dirs(const char *path, mode_t mode, char *err, size_t errlen);

#endif
