/* config/config.c - fdtuned's settings: the embedded defaults, the one table of keys, and
 * the INI reader. Every key, from the file or the command line, goes through the table, so
 * each value is parsed and range-checked by the same few functions. */
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"

typedef enum key_kind {
    KIND_TEXT,     /* char[]: a path or a name, at most max characters */
    KIND_GROUP,    /* char[]: a group name, or empty */
    KIND_CHOICE,   /* char[]: one of the key's choices */
    KIND_BOOL,     /* int: 0 or 1 */
    KIND_INT,      /* int, min..max */
    KIND_UNSIGNED, /* unsigned, min..max */
    KIND_SIZE,     /* size_t, min..max */
    KIND_MODE,     /* unsigned, octal permission bits */
    KIND_REAL,     /* double, min..max */
} key_kind;

typedef struct key {
    const char *section;
    const char *name;
    key_kind kind;
    size_t offset;
    size_t size;
    double min, max;
    /* KIND_TEXT: the path an empty value stands for, or NULL when empty is itself valid */
    int (*fallback)(int system, char *out, size_t len);
    const char *const *choices; /* KIND_CHOICE: the values it takes, NULL-terminated */
} key;

#define SOCKET_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)
#define FIELD(f) offsetof(fdt_config, f), sizeof(((fdt_config *)0)->f)
#define NUMBER(sec, f, kind, lo, hi) {sec, #f, kind, FIELD(f), lo, hi, NULL, NULL}
#define TEXT(sec, f, longest, fallback) {sec, #f, KIND_TEXT, FIELD(f), 0, longest, fallback, NULL}
#define OTHER(sec, f, kind) {sec, #f, kind, FIELD(f), 0, 0, NULL, NULL}
#define CHOICE(sec, f, list) {sec, #f, KIND_CHOICE, FIELD(f), 0, 0, NULL, list}

static const char *const backend_names[] = {"auto", "hip", "cuda", "cpu", NULL};
const char *const fdt_config_strategies[] = {"exhaustive", "random", "guided", NULL};
static const char *const compile_in_names[] = {"auto", "processes", "threads", NULL};

static const key keys[] = {
    TEXT("daemon", socket, SOCKET_PATH_MAX, fdt_default_socket),
    TEXT("daemon", db, FDT_PATH_MAX - 1, fdt_default_db),
    TEXT("daemon", site_store, FDT_PATH_MAX - 1, NULL),
    OTHER("daemon", confirm_imported, KIND_BOOL),
    CHOICE("daemon", backend, backend_names),
    NUMBER("daemon", socket_mode, KIND_MODE, 0, 0777),
    OTHER("daemon", socket_group, KIND_GROUP),
    OTHER("daemon", admin_group, KIND_GROUP),
    NUMBER("daemon", max_line_bytes, KIND_SIZE, 4096, 1073741824),
    NUMBER("daemon", max_clients, KIND_INT, 1, 1000000),
    NUMBER("daemon", max_clients_per_uid, KIND_INT, 1, 1000000),
    NUMBER("daemon", cpu_devices, KIND_INT, 1, 64),
    TEXT("worker", worker_path, FDT_PATH_MAX - 1, NULL),
    NUMBER("worker", heartbeat_ms, KIND_INT, 100, 3600000),
    NUMBER("worker", heartbeat_timeout_ms, KIND_INT, 200, 86400000),
    NUMBER("worker", variant_deadline_ms, KIND_INT, 1000, 86400000),
    NUMBER("worker", worker_nice, KIND_INT, 0, 19),
    NUMBER("worker", compile_threads, KIND_INT, 0, 256),
    CHOICE("worker", compile_in, compile_in_names),
    NUMBER("worker", compile_deadline_ms, KIND_INT, 100, 86400000),
    NUMBER("worker", max_restarts, KIND_INT, 0, 1000),
    OTHER("worker", test_families, KIND_BOOL),
    NUMBER("tuning", samples, KIND_INT, 1, 100000),
    NUMBER("tuning", min_sample_ms, KIND_REAL, 0.001, 3600000),
    NUMBER("tuning", timeout_ms, KIND_REAL, 1, 3600000),
    NUMBER("tuning", leaders, KIND_INT, 0, 1000),
    NUMBER("tuning", leader_samples, KIND_INT, 1, 100000),
    NUMBER("tuning", max_spread, KIND_REAL, 0, 1000),
    NUMBER("tuning", remeasure_doubtful_s, KIND_INT, 0, 31536000),
    NUMBER("tuning", seed, KIND_UNSIGNED, 0, 2147483647),
    CHOICE("search", strategy, fdt_config_strategies),
    NUMBER("search", budget, KIND_INT, 0, FDT_SEARCH_EVALS_MAX),
    NUMBER("search", budget_s, KIND_REAL, 0, FDT_SEARCH_SECONDS_MAX),
    NUMBER("search", patience, KIND_INT, 0, FDT_SEARCH_EVALS_MAX),
};

void fdt_config_defaults(fdt_config *c, int system)
{
    memset(c, 0, sizeof *c);
    c->system = system;
    fdt_default_socket(system, c->socket, sizeof c->socket);
    fdt_default_db(system, c->db, sizeof c->db);
    strcpy(c->backend, "auto");
    /* Owner and group may connect; with socket_group set, that group's members query. */
    c->socket_mode = 0660;
    /* A batch of the protocol's 10000 shapes is about 200 KB: 1 MiB leaves room. */
    c->max_line_bytes = 1048576;
    c->max_clients = 1024;
    /* A quarter: it takes four users to fill the slots, and a node's solver ranks (one
     * connection each) still fit. */
    c->max_clients_per_uid = 256;
    c->cpu_devices = 1;
    c->heartbeat_ms = 1000;
    c->heartbeat_timeout_ms = 10000;
    /* Measuring one variant of a large grid on the cpu backend takes tens of seconds. */
    c->variant_deadline_ms = 120000;
    c->worker_nice = 19;
    c->compile_threads = 0;
    strcpy(c->compile_in, "auto");
    c->compile_deadline_ms = 120000;
    c->max_restarts = 5;
    c->test_families = 0;
    c->samples = 15;
    c->min_sample_ms = 1.0;
    c->timeout_ms = 5000.0;
    c->leaders = 5;
    c->leader_samples = 50;
    c->max_spread = 1.0; /* engine/measure.h's FDT_DEFAULT_MAX_SPREAD, as fdtune bench */
    /* An hour: a busy spell has passed by then. A balance costs seconds to measure again, a
     * doubtful winner one job like its own, once. */
    c->remeasure_doubtful_s = 3600;
    c->seed = 12345;
    strcpy(c->strategy, "guided");
    c->budget = 0;
    c->budget_s = 0;
    /* Replayed on the recorded H100 spaces, 48 evaluations without a 0.5% gain stopped the
     * guided search within 0.3% of the best on every double R=1 problem and within 4.5% on
     * every float and R=4 one (32 left one at 89%; bench/results/README.md). */
    c->patience = 48;
}

static const key *find_key(const char *section, const char *name)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

static int known_section(const char *section)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(keys[i].section, section) == 0)
            return 1;
    return 0;
}

/* Digits only: strtoll alone would also take blanks, signs, "0x" and an empty string. */
static int parse_whole(const char *text, int base, const key *k, long long *out)
{
    const char *allowed = base == 8 ? "01234567" : "0123456789";
    if (text[0] == '\0' || text[strspn(text, allowed)] != '\0')
        return -1;
    errno = 0;
    const long long v = strtoll(text, NULL, base);
    if (errno != 0 || v < (long long)k->min || v > (long long)k->max)
        return -1;
    *out = v;
    return 0;
}

static int parse_real(const char *text, const key *k, double *out)
{
    if (text[0] == '\0' || strchr("+-.0123456789", text[0]) == NULL)
        return -1;
    char *end;
    errno = 0;
    const double v = strtod(text, &end);
    if (*end != '\0' || errno != 0 || !(v >= k->min && v <= k->max))
        return -1;
    *out = v;
    return 0;
}

static int parse_bool(const char *text, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(text, yes[i]) == 0)
            return *out = 1, 0;
        if (strcasecmp(text, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

/* Syntax only: whether the group exists is the daemon's question at start. ':' and control
 * characters cannot be in any group database; sssd names may hold spaces and '@'. */
static int valid_group(const char *text, size_t size)
{
    if (strlen(text) >= size || text[0] == '-')
        return 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == ':')
            return 0;
    return 1;
}

static int set_text(fdt_config *c, const key *k, const char *value)
{
    char *field = (char *)c + k->offset;
    if (value[0] == '\0' && k->fallback) {
        char path[FDT_PATH_MAX];
        if (k->fallback(c->system, path, sizeof path) != 0 || strlen(path) > k->max)
            return -1;
        strcpy(field, path);
        return 0;
    }
    if (strlen(value) > k->max)
        return -1;
    strcpy(field, value);
    return 0;
}

static int set_choice(fdt_config *c, const key *k, const char *value)
{
    for (size_t i = 0; k->choices[i]; i++)
        if (strcmp(value, k->choices[i]) == 0) {
            snprintf((char *)c + k->offset, k->size, "%s", value);
            return 0;
        }
    return -1;
}

/* Parses value as k says and stores it; -1 leaves c as it was. */
static int set_value(fdt_config *c, const key *k, const char *value)
{
    void *field = (char *)c + k->offset;
    long long whole;
    double real;
    int flag;
    switch (k->kind) {
    case KIND_TEXT: return set_text(c, k, value);
    case KIND_CHOICE: return set_choice(c, k, value);
    case KIND_GROUP:
        if (!valid_group(value, k->size))
            return -1;
        strcpy(field, value);
        return 0;
    case KIND_BOOL:
        if (parse_bool(value, &flag))
            return -1;
        *(int *)field = flag;
        return 0;
    case KIND_INT:
        if (parse_whole(value, 10, k, &whole))
            return -1;
        *(int *)field = (int)whole;
        return 0;
    case KIND_UNSIGNED:
    case KIND_MODE:
        if (parse_whole(value, k->kind == KIND_MODE ? 8 : 10, k, &whole))
            return -1;
        *(unsigned *)field = (unsigned)whole;
        return 0;
    case KIND_SIZE:
        if (parse_whole(value, 10, k, &whole))
            return -1;
        *(size_t *)field = (size_t)whole;
        return 0;
    case KIND_REAL:
        if (parse_real(value, k, &real))
            return -1;
        *(double *)field = real;
        return 0;
    }
    return -1;
}

/* The "expected ..." half of a bad-value message. */
static void describe(const key *k, char *out, size_t len)
{
    switch (k->kind) {
    case KIND_TEXT:
        snprintf(out, len, "a path of at most %.0f characters%s", k->max,
                 k->fallback ? ", or empty for the default" : "");
        return;
    case KIND_GROUP:
        snprintf(out, len, "a group name of at most %zu characters without ':', or empty",
                 k->size - 1);
        return;
    case KIND_CHOICE: /* "a, b or c" */
        out[0] = '\0';
        for (size_t i = 0; k->choices[i]; i++)
            snprintf(out + strlen(out), len - strlen(out), "%s%s", i == 0 ? ""
                     : k->choices[i + 1] ? ", " : " or ", k->choices[i]);
        return;
    case KIND_BOOL: snprintf(out, len, "true or false (yes/no, on/off, 1/0)"); return;
    case KIND_MODE: snprintf(out, len, "an octal mode from 0000 to %04o", (unsigned)k->max); return;
    case KIND_REAL: snprintf(out, len, "a number from %.15g to %.15g", k->min, k->max); return;
    case KIND_INT:
    case KIND_UNSIGNED:
    case KIND_SIZE:
        snprintf(out, len, "a whole number from %.0f to %.0f", k->min, k->max);
        return;
    }
}

int fdt_config_set(fdt_config *c, const char *section, const char *name, const char *value,
                   char *err, size_t errlen)
{
    if (!known_section(section)) {
        snprintf(err, errlen, "unknown section [%s] (key '%s')", section, name);
        return -1;
    }
    const key *k = find_key(section, name);
    if (!k) {
        snprintf(err, errlen, "unknown key '%s' in [%s]", name, section);
        return -1;
    }
    if (set_value(c, k, value) != 0) {
        char expected[128];
        describe(k, expected, sizeof expected);
        /* A long value is shown in part, so that the message still says what was expected. */
        const int shown = strlen(value) > 60 ? 60 : (int)strlen(value);
        snprintf(err, errlen, "bad value '%.*s%s' for %s: expected %s", shown, value,
                 value[shown] ? "..." : "", name, expected);
        return -1;
    }
    return 0;
}

int fdt_config_check(const fdt_config *c, char *err, size_t errlen)
{
    /* An explicit path was checked as it was set; a default one comes from the environment. */
    if (c->socket[0] == '\0' || strlen(c->socket) > SOCKET_PATH_MAX) {
        snprintf(err, errlen, "socket: the default path '%s' is empty or longer than the %zu "
                 "characters a Unix socket allows; set socket", c->socket, SOCKET_PATH_MAX);
        return -1;
    }
    if (c->db[0] == '\0') {
        snprintf(err, errlen, "db: the default path does not fit in %d characters; set db",
                 FDT_PATH_MAX - 1);
        return -1;
    }
    /* One late beat from a busy host must not cost a worker and the variant it runs. */
    if ((long long)c->heartbeat_timeout_ms < 2LL * c->heartbeat_ms) {
        snprintf(err, errlen, "heartbeat_timeout_ms (%d) must be at least twice heartbeat_ms (%d)",
                 c->heartbeat_timeout_ms, c->heartbeat_ms);
        return -1;
    }
    return 0;
}

/* inih's handler sees no line numbers: this reader counts them, so that an error names its
 * line, and it stops at the first error. */
typedef struct loader {
    fdt_config work;
    const char *path;
    FILE *file;
    char *line;
    size_t cap;
    int lineno;
    int error_line;    /* the line of the message in error; 0: none yet */
    int read_errno;
    char error[FDT_PATH_MAX + 512];
} loader;

static void fail_at(loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail_at(loader *l, const char *fmt, ...)
{
    if (l->error_line)
        return;
    l->error_line = l->lineno;
    const int n = snprintf(l->error, sizeof l->error, "%s:%d: ", l->path, l->lineno);
    if (n < 0 || (size_t)n >= sizeof l->error)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->error + n, sizeof l->error - (size_t)n, fmt, ap);
    va_end(ap);
}

static char *read_line(char *out, int room, void *stream)
{
    loader *l = stream;
    if (l->error_line)
        return NULL;
    errno = 0;
    const ssize_t n = getline(&l->line, &l->cap, l->file);
    if (n < 0) {
        l->read_errno = errno;
        return NULL;
    }
    l->lineno++;
    /* inih's buffer holds room - 1 bytes and the newline; a longer line would be split in
     * two and its tail read as a line of its own. */
    const ssize_t text = n - (l->line[n - 1] == '\n');
    if (text > room - 2) {
        fail_at(l, "line longer than %d characters", room - 2);
        return NULL;
    }
    if (memchr(l->line, '\0', (size_t)n)) {
        fail_at(l, "syntax error (a NUL byte)");
        return NULL;
    }
    memcpy(out, l->line, (size_t)n + 1);
    return out;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    loader *l = user;
    char why[400];
    if (section[0] == '\0') {
        fail_at(l, "key '%s' outside any section", name);
        return 0;
    }
    if (fdt_config_set(&l->work, section, name, value, why, sizeof why) != 0) {
        fail_at(l, "%s", why);
        return 0;
    }
    return 1;
}

/* Opens the settings file for reading, refusing anything but a regular file: a FIFO with
 * no writer or a device would block the daemon at start or inside its SIGHUP handler.
 * O_NONBLOCK makes the open itself return at once for those; a symlink is followed (a
 * linked config is legitimate) and what it leads to is judged by fstat. NULL with err. */
static FILE *open_regular(const char *path, char *err, size_t errlen)
{
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "cannot read %s: not a regular file (a settings file must be "
                              "one, not a FIFO, device, directory or socket)", path);
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int fdt_config_load(fdt_config *c, const char *path, char *err, size_t errlen)
{
    loader *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "cannot read %s: out of memory", path);
        return -1;
    }
    l->work = *c;
    l->path = path;
    l->file = open_regular(path, err, errlen);
    if (!l->file) {
        free(l);
        return -1;
    }
    const int bad_line = ini_parse_stream(read_line, l, on_key, l);
    int rc = -1;
    if (ferror(l->file))
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(l->read_errno));
    else if (l->error_line && (bad_line <= 0 || bad_line >= l->error_line))
        snprintf(err, errlen, "%s", l->error);
    else if (bad_line > 0)
        snprintf(err, errlen, "%s:%d: syntax error", path, bad_line);
    else if (bad_line < 0)
        snprintf(err, errlen, "cannot read %s: out of memory", path);
    else {
        *c = l->work;
        rc = 0;
    }
    fclose(l->file);
    free(l->line);
    free(l);
    return rc;
}
