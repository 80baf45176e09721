/* cmd_daemon.h - what the fdtune commands that talk to fdtuned share: their common options
 * and the problem options, one request and its answer with every failure reported the
 * same way, and the human form of a job. */
#ifndef FDT_CMD_DAEMON_H
#define FDT_CMD_DAEMON_H

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>

#include "config.h"
#include "fdtune.h"
#include "table.h"

enum {
    FDT_OPT_SOCKET = 512, FDT_OPT_JSON, FDT_OPT_TIMEOUT, FDT_OPT_HELP,
    FDT_OPT_PRECISION, FDT_OPT_RADIUS, FDT_OPT_CACHE, FDT_OPT_DEVICE, FDT_OPT_SPEC,
    FDT_OPT_PITCH, FDT_OPT_OFFSET,
    FDT_OPT_OWN /* a command's own options are numbered from here */
};

/* Entries of a command's getopt_long table. */
#define FDT_DAEMON_OPTIONS                                  \
    {"socket", required_argument, NULL, FDT_OPT_SOCKET},    \
    {"json", no_argument, NULL, FDT_OPT_JSON},              \
    {"timeout", required_argument, NULL, FDT_OPT_TIMEOUT},  \
    {"help", no_argument, NULL, FDT_OPT_HELP}
#define FDT_PROBLEM_OPTIONS                                     \
    {"precision", required_argument, NULL, FDT_OPT_PRECISION},  \
    {"radius", required_argument, NULL, FDT_OPT_RADIUS},        \
    {"cache", required_argument, NULL, FDT_OPT_CACHE},          \
    {"device", required_argument, NULL, FDT_OPT_DEVICE},        \
    {"spec", required_argument, NULL, FDT_OPT_SPEC},            \
    {"pitch", required_argument, NULL, FDT_OPT_PITCH},          \
    {"offset", required_argument, NULL, FDT_OPT_OFFSET}

/* Their lines of a command's --help. */
#define FDT_PROBLEM_HELP                                                                  \
    "  --precision float|double  element type (default double)\n"                        \
    "  --radius R                stencil radius 1..4; 1 is the 7-point Laplacian (default 1)\n" \
    "  --cache MODE              auto (default): the state the tuner chose for the shape, hot\n" \
    "                            or persist; hot: the same buffers every step, as a solver;\n" \
    "                            persist: also f's row edges held in L2 (NVIDIA sm_80+);\n" \
    "                            cold: not measured yet\n" \
    "  --spec FILE               a stencil spec of your own instead of the Laplacian\n" \
    "                            (docs/stencils.md; its radius is its reach)\n"         \
    "  --device N|any            the daemon's device index; a job also takes any (any\n" \
    "                            device); default: device 0 for a query, any device of\n" \
    "                            device 0's kind for a job\n"                            \
    "  --pitch P|auto            the fields' row pitch in points (default nx: dense rows);\n" \
    "                            auto: the solver may pad, the tuner measures the dense\n" \
    "                            layout and padded ones and answers the fastest\n"       \
    "  --offset O                points from a 256-byte aligned base to point (0,0,0)\n" \
    "                            (default 0)\n"
#define FDT_DAEMON_HELP                                                                   \
    "  --socket PATH             fdtuned's socket (default: $FDTUNE_SOCKET, else the\n"   \
    "                            user's $XDG_RUNTIME_DIR/fdtuned/fdtuned.sock if it exists,\n" \
    "                            else /run/fdtuned/fdtuned.sock)\n"                       \
    "  --json                    print the daemon's answer line as it came\n"             \
    "  --timeout S               seconds to wait for each answer (default 30)\n"

typedef struct fdt_daemon_args {
    const char *socket;      /* --socket, or NULL for the default */
    int json;
    int timeout_ms;
    fdtune_problem problem;  /* the problem options; the shape comes from fdt_parse_shape */
    const char *spec;        /* --spec's JSON text, checked (a buffer of the command's); NULL */
    int radius_given;        /* --radius was given (refused with --spec) */
    char **pos;              /* the positional arguments */
    int npos;
} fdt_daemon_args;

/* Handles one of a command's own options; 0, or -1 after reporting bad usage. */
typedef int (*fdt_own_option_fn)(int opt, const char *arg, void *ctx);

/* Parses argv (argv[0] is the command's name) with getopt_long over shortopts ("h" and the
 * command's own) and options, handling the common and problem options here and passing
 * any other to own (NULL when the command has none). Returns 0 when parsed, 1 when help
 * was printed, -1 after reporting bad usage. */
int fdt_daemon_parse(int argc, char **argv, const char *shortopts,
                     const struct option *options, const char *help, fdt_own_option_fn own,
                     void *ctx, fdt_daemon_args *a);

/* The request of op for a's problem (with its shape when with_shape), --spec's included. */
json_t *fdt_problem_request(const fdt_daemon_args *a, const char *op, int with_shape);

/* Reports bad usage of command cmd and returns FDT_EXIT_USAGE. */
int fdt_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses NX NY NZ into p, checking them against p's radius; 0, or -1 when reported. */
int fdt_parse_shape(char *const *text, fdtune_problem *p);
/* Checks a whole problem as the daemon would; NULL, or why not. */
const char *fdt_check_problem(const fdtune_problem *p);

typedef struct fdt_client {
    const char *cmd;      /* the command, for messages */
    char socket[FDT_PATH_MAX]; /* the daemon's socket, as connected to */
    fdtune_conn *conn;
    int json;
    char *line;           /* the last answer line, as it came */
} fdt_client;

/* Connects: FDT_EXIT_OK, or FDT_EXIT_UNREACHABLE after saying which socket could not be
 * reached and how to start fdtuned. */
int fdt_client_open(fdt_client *c, const char *cmd, const fdt_daemon_args *a);
void fdt_client_close(fdt_client *c);

/* Sends req (the call takes it) and reads the answer. FDT_EXIT_OK with the answer in
 * *answer (the caller releases it), or the exit code of the failure, reported: the
 * daemon's error (FDT_EXIT_FAILED, FDT_EXIT_FORBIDDEN) or the connection's
 * (FDT_EXIT_UNREACHABLE). With --json, the answer line is printed as it came, whatever it
 * says; fdt_client_poll never prints it (a request repeated while waiting). */
int fdt_client_call(fdt_client *c, json_t *req, json_t **answer);
int fdt_client_poll(fdt_client *c, json_t *req, json_t **answer);

/* Handles one page of an export's answer (docs/protocol.md, "export"); 0, or -1 after
 * reporting why not. */
typedef int (*fdt_page_fn)(const json_t *answer, void *ctx);

/* Asks for the export of what ("best" or "results") in format ("json" or "csv") page after
 * page on c, each starting where the last ended ("next"), and hands each answer to page
 * (unless NULL) as it arrives: the rows are never all in memory, here or in the daemon.
 * FDT_EXIT_OK, or the exit code of the first failure, reported: the daemon's or the
 * connection's (fdt_client_call), or page's (FDT_EXIT_FAILED). */
int fdt_client_export(fdt_client *c, const char *what, const char *format, fdt_page_fn page,
                      void *ctx);

/* Prints a successful answer in the human form (not called under --json); returns the
 * command's exit code. */
typedef int (*fdt_show_fn)(const json_t *answer, void *ctx);

/* One request, its answer shown by show: the whole of most commands. */
int fdt_client_run(const char *cmd, const fdt_daemon_args *a, json_t *req, fdt_show_fn show,
                   void *ctx);

/* {"v":1,"op":op} */
json_t *fdt_request(const char *op);

/* Fields of an answer, "" or 0 when absent or of another type. */
const char *fdt_jstr(const json_t *o, const char *key);
double fdt_jnum(const json_t *o, const char *key);
long long fdt_jint(const json_t *o, const char *key);

/* A job object (docs/protocol.md): in full, as a row of the jobs table (fdt_jobs_table's
 * columns), and as the one-line outcome of a finished job. */
void fdt_print_job(const json_t *job);
fdt_table *fdt_jobs_table(void);
void fdt_jobs_table_row(fdt_table *t, const json_t *job);
void fdt_print_job_outcome(const json_t *job);
/* Whether a job state is final (done, failed, cancelled). */
int fdt_job_finished(const json_t *job);

#endif
