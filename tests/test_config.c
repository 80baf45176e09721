/* test_config.c - the settings: embedded defaults, the shipped config/fdtuned.conf (which
 * must state every default), every key's parsing and range checks, the INI reader's
 * "FILE:LINE: ..." messages, the refusal of anything but a regular file, and the default
 * socket and database paths. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "engine/measure.h"

/* The shipped file, found from this source file's place in the tree. */
static void shipped_conf(char *out, size_t len)
{
    const char *slash = strrchr(__FILE__, '/');
    const int dir = slash ? (int)(slash - __FILE__) : 1;
    snprintf(out, len, "%.*s/../config/fdtuned.conf", dir, slash ? __FILE__ : ".");
}

static void user_env(void)
{
    setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
    setenv("XDG_STATE_HOME", "/home/ann/.state", 1);
    setenv("HOME", "/home/ann", 1);
}

/* Field by field, so that a failure names the field. */
static void assert_same_config(const fdt_config *a, const fdt_config *b)
{
    assert_int_equal(a->system, b->system);
    assert_string_equal(a->socket, b->socket);
    assert_string_equal(a->db, b->db);
    assert_string_equal(a->backend, b->backend);
    assert_int_equal(a->socket_mode, b->socket_mode);
    assert_string_equal(a->socket_group, b->socket_group);
    assert_string_equal(a->admin_group, b->admin_group);
    assert_int_equal(a->max_line_bytes, b->max_line_bytes);
    assert_int_equal(a->max_clients, b->max_clients);
    assert_int_equal(a->max_clients_per_uid, b->max_clients_per_uid);
    assert_string_equal(a->worker_path, b->worker_path);
    assert_int_equal(a->heartbeat_ms, b->heartbeat_ms);
    assert_int_equal(a->heartbeat_timeout_ms, b->heartbeat_timeout_ms);
    assert_int_equal(a->variant_deadline_ms, b->variant_deadline_ms);
    assert_int_equal(a->worker_nice, b->worker_nice);
    assert_int_equal(a->compile_threads, b->compile_threads);
    assert_int_equal(a->compile_deadline_ms, b->compile_deadline_ms);
    assert_int_equal(a->max_restarts, b->max_restarts);
    assert_int_equal(a->test_families, b->test_families);
    assert_int_equal(a->samples, b->samples);
    assert_true(a->min_sample_ms == b->min_sample_ms);
    assert_true(a->timeout_ms == b->timeout_ms);
    assert_int_equal(a->leaders, b->leaders);
    assert_int_equal(a->leader_samples, b->leader_samples);
    assert_int_equal(a->seed, b->seed);
}

typedef struct setting {
    const char *section, *key, *value;
} setting;

/* One valid value per key, none of them the default. */
static const setting every_key[] = {
    {"daemon", "socket", "/tmp/x/fdtuned.sock"},
    {"daemon", "db", "relative/fdtuned.db"},
    {"daemon", "backend", "cpu"},
    {"daemon", "socket_mode", "0600"},
    {"daemon", "socket_group", "hpc-users"},
    {"daemon", "admin_group", "domain admins@example.org"},
    {"daemon", "max_line_bytes", "4096"},
    {"daemon", "max_clients", "1000000"},
    {"daemon", "max_clients_per_uid", "1"},
    {"worker", "worker_path", "/opt/fdtuned/bin/fdtune-worker"},
    {"worker", "heartbeat_ms", "100"},
    {"worker", "heartbeat_timeout_ms", "86400000"},
    {"worker", "variant_deadline_ms", "1000"},
    {"worker", "worker_nice", "5"},
    {"worker", "compile_threads", "256"},
    {"worker", "compile_deadline_ms", "100"},
    {"worker", "max_restarts", "0"},
    {"worker", "test_families", "yes"},
    {"tuning", "samples", "100000"},
    {"tuning", "min_sample_ms", "0.25"},
    {"tuning", "timeout_ms", "1e3"},
    {"tuning", "leaders", "0"},
    {"tuning", "leader_samples", "1"},
    {"tuning", "max_spread", "0"},
    {"tuning", "seed", "2147483647"},
};

static void apply(fdt_config *c, const setting *s, size_t n)
{
    char err[512];
    for (size_t i = 0; i < n; i++)
        if (fdt_config_set(c, s[i].section, s[i].key, s[i].value, err, sizeof err) != 0)
            fail_msg("%s.%s = %s: %s", s[i].section, s[i].key, s[i].value, err);
}

static void defaults_are_documented_values(void **state)
{
    (void)state;
    user_env();
    fdt_config c;
    fdt_config_defaults(&c, 0);
    assert_int_equal(c.system, 0);
    assert_string_equal(c.socket, "/run/user/4242/fdtuned/fdtuned.sock");
    assert_string_equal(c.db, "/home/ann/.state/fdtuned/fdtuned.db");
    assert_string_equal(c.backend, "auto");
    assert_int_equal(c.socket_mode, 0660);
    assert_string_equal(c.socket_group, "");
    assert_string_equal(c.admin_group, "");
    assert_int_equal(c.max_line_bytes, 1048576);
    assert_int_equal(c.max_clients, 1024);
    assert_int_equal(c.max_clients_per_uid, 256);
    assert_string_equal(c.worker_path, "");
    assert_int_equal(c.heartbeat_ms, 1000);
    assert_int_equal(c.heartbeat_timeout_ms, 10000);
    assert_int_equal(c.variant_deadline_ms, 120000);
    assert_int_equal(c.worker_nice, 19);
    assert_int_equal(c.compile_threads, 0);
    assert_int_equal(c.compile_deadline_ms, 120000);
    assert_int_equal(c.max_restarts, 5);
    assert_int_equal(c.test_families, 0);
    assert_int_equal(c.samples, 15);
    assert_true(c.min_sample_ms == 1.0);
    assert_true(c.timeout_ms == 5000.0);
    assert_int_equal(c.leaders, 5);
    assert_int_equal(c.leader_samples, 50);
    assert_true(c.max_spread == FDT_DEFAULT_MAX_SPREAD); /* fdtune bench's bound */
    assert_int_equal(c.seed, 12345);

    char err[512] = "";
    assert_int_equal(fdt_config_check(&c, err, sizeof err), 0);

    fdt_config_defaults(&c, 1);
    assert_int_equal(c.system, 1);
    assert_string_equal(c.socket, "/run/fdtuned/fdtuned.sock");
    assert_string_equal(c.db, "/var/lib/fdtuned/fdtuned.db");
}

/* Every field is first moved off its default, so the file passes only if it names every
 * key, each at the embedded default. */
static void shipped_file_states_every_default(void **state)
{
    (void)state;
    user_env();
    char path[PATH_MAX], err[1024] = "";
    shipped_conf(path, sizeof path);
    for (int system = 0; system <= 1; system++) {
        fdt_config expected, c;
        fdt_config_defaults(&expected, system);
        fdt_config_defaults(&c, system);
        apply(&c, every_key, sizeof every_key / sizeof every_key[0]);
        if (fdt_config_load(&c, path, err, sizeof err) != 0)
            fail_msg("%s", err);
        assert_same_config(&c, &expected);
    }
}

static void every_key_accepts_a_valid_value(void **state)
{
    (void)state;
    user_env();
    fdt_config c;
    fdt_config_defaults(&c, 0);
    apply(&c, every_key, sizeof every_key / sizeof every_key[0]);
    assert_string_equal(c.socket, "/tmp/x/fdtuned.sock");
    assert_string_equal(c.db, "relative/fdtuned.db");
    assert_string_equal(c.backend, "cpu");
    assert_int_equal(c.socket_mode, 0600);
    assert_string_equal(c.socket_group, "hpc-users");
    assert_string_equal(c.admin_group, "domain admins@example.org");
    assert_int_equal(c.max_line_bytes, 4096);
    assert_int_equal(c.max_clients, 1000000);
    assert_int_equal(c.max_clients_per_uid, 1);
    assert_string_equal(c.worker_path, "/opt/fdtuned/bin/fdtune-worker");
    assert_int_equal(c.heartbeat_ms, 100);
    assert_int_equal(c.heartbeat_timeout_ms, 86400000);
    assert_int_equal(c.variant_deadline_ms, 1000);
    assert_int_equal(c.worker_nice, 5);
    assert_int_equal(c.compile_threads, 256);
    assert_int_equal(c.compile_deadline_ms, 100);
    assert_int_equal(c.max_restarts, 0);
    assert_int_equal(c.test_families, 1);
    assert_int_equal(c.samples, 100000);
    assert_true(c.min_sample_ms == 0.25);
    assert_true(c.timeout_ms == 1000.0);
    assert_int_equal(c.leaders, 0);
    assert_int_equal(c.leader_samples, 1);
    assert_true(c.max_spread == 0);
    assert_int_equal(c.seed, 2147483647u);

    /* An empty path goes back to the default of the kind of daemon the config is for. */
    const setting back[] = {{"daemon", "socket", ""}, {"daemon", "db", ""}};
    apply(&c, back, 2);
    assert_string_equal(c.socket, "/run/user/4242/fdtuned/fdtuned.sock");
    assert_string_equal(c.db, "/home/ann/.state/fdtuned/fdtuned.db");
    c.system = 1;
    apply(&c, back, 2);
    assert_string_equal(c.socket, "/run/fdtuned/fdtuned.sock");
    assert_string_equal(c.db, "/var/lib/fdtuned/fdtuned.db");
}

static void booleans_and_octal_spellings(void **state)
{
    (void)state;
    static const char *const yes[] = {"true", "yes", "on", "1", "TRUE", "Yes", "On"};
    static const char *const no[] = {"false", "no", "off", "0", "FALSE", "No", "OFF"};
    fdt_config c;
    fdt_config_defaults(&c, 0);
    char err[512];
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        c.test_families = 0;
        assert_int_equal(fdt_config_set(&c, "worker", "test_families", yes[i], err, sizeof err), 0);
        assert_int_equal(c.test_families, 1);
        assert_int_equal(fdt_config_set(&c, "worker", "test_families", no[i], err, sizeof err), 0);
        assert_int_equal(c.test_families, 0);
    }
    static const struct { const char *text; unsigned mode; } modes[] = {
        {"0", 0}, {"0000", 0}, {"777", 0777}, {"0777", 0777}, {"0640", 0640}, {"660", 0660},
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        assert_int_equal(fdt_config_set(&c, "daemon", "socket_mode", modes[i].text, err,
                                        sizeof err), 0);
        assert_int_equal(c.socket_mode, modes[i].mode);
    }
    static const char *const backends[] = {"auto", "hip", "cuda", "cpu"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(fdt_config_set(&c, "daemon", "backend", backends[i], err, sizeof err), 0);
        assert_string_equal(c.backend, backends[i]);
    }
}

typedef struct bad {
    const char *section, *key, *value, *expected;
} bad;

static const bad bad_values[] = {
    {"worker", "heartbeat_ms", "abc", "a whole number from 100 to 3600000"},
    {"worker", "heartbeat_ms", "99", "a whole number from 100 to 3600000"},
    {"worker", "heartbeat_ms", "3600001", "a whole number from 100 to 3600000"},
    {"worker", "heartbeat_ms", "", "a whole number"},
    {"worker", "heartbeat_ms", " 500", "a whole number"},
    {"worker", "heartbeat_ms", "+500", "a whole number"},
    {"worker", "heartbeat_ms", "500ms", "a whole number"},
    {"worker", "heartbeat_ms", "0x200", "a whole number"},
    {"worker", "heartbeat_ms", "99999999999999999999999", "a whole number"},
    {"worker", "worker_nice", "-5", "a whole number from 0 to 19"},
    {"worker", "heartbeat_timeout_ms", "199", "from 200 to 86400000"},
    {"worker", "variant_deadline_ms", "86400001", "from 1000 to 86400000"},
    {"worker", "compile_deadline_ms", "99", "from 100 to 86400000"},
    {"worker", "compile_threads", "257", "from 0 to 256"},
    {"worker", "max_restarts", "1001", "from 0 to 1000"},
    {"daemon", "max_clients", "0", "from 1 to 1000000"},
    {"daemon", "max_clients_per_uid", "0", "from 1 to 1000000"},
    {"daemon", "max_clients_per_uid", "1000001", "from 1 to 1000000"},
    {"daemon", "max_line_bytes", "4095", "from 4096 to 1073741824"},
    {"daemon", "max_line_bytes", "1073741825", "from 4096 to 1073741824"},
    {"tuning", "samples", "0", "from 1 to 100000"},
    {"tuning", "leaders", "1001", "from 0 to 1000"},
    {"tuning", "leader_samples", "0", "from 1 to 100000"},
    {"tuning", "max_spread", "-0.5", "a number from 0 to 1000"},
    {"tuning", "seed", "2147483648", "from 0 to 2147483647"},
    {"tuning", "seed", "-1", "from 0 to 2147483647"},
    {"tuning", "min_sample_ms", "0", "a number from 0.001 to 3600000"},
    {"tuning", "min_sample_ms", "fast", "a number from"},
    {"tuning", "min_sample_ms", "nan", "a number from"},
    {"tuning", "timeout_ms", "inf", "a number from 1 to"},
    {"tuning", "timeout_ms", "-5", "a number from 1 to"},
    {"tuning", "timeout_ms", "1e400", "a number from 1 to"},
    {"tuning", "timeout_ms", "5000 ms", "a number from 1 to"},
    {"daemon", "socket_mode", "0800", "an octal mode from 0000 to 0777"},
    {"daemon", "socket_mode", "01000", "an octal mode from 0000 to 0777"},
    {"daemon", "socket_mode", "rw-rw----", "an octal mode"},
    {"daemon", "socket_mode", "", "an octal mode"},
    {"daemon", "backend", "gpu", "auto, hip, cuda or cpu"},
    {"daemon", "backend", "CUDA", "auto, hip, cuda or cpu"},
    {"search", "strategy", "annealing", "exhaustive, random or guided"},
    {"worker", "compile_in", "process", "auto, processes or threads"},
    {"search", "patience", "-1", "a whole number from 0 to 100000000"},
    {"search", "budget_s", "1e9", "a number from 0 to 31536000"},
    {"worker", "test_families", "maybe", "true or false"},
    {"worker", "test_families", "", "true or false"},
    {"daemon", "socket_group", "a:b", "a group name"},
    {"daemon", "admin_group", "-x", "a group name"},
    {"daemon", "admin_group", "tab\there", "a group name"},
    {"daemon", "admin_group", "0123456789012345678901234567890123456789012345678901234567890123",
     "at most 63 characters"},
};

static void bad_values_name_the_key_and_change_nothing(void **state)
{
    (void)state;
    user_env();
    fdt_config c, before;
    fdt_config_defaults(&c, 0);
    before = c;
    char err[512];
    for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
        const bad *b = &bad_values[i];
        strcpy(err, "untouched");
        if (fdt_config_set(&c, b->section, b->key, b->value, err, sizeof err) != -1)
            fail_msg("%s = '%s' was accepted", b->key, b->value);
        char tail[128];
        snprintf(tail, sizeof tail, "' for %s: expected ", b->key);
        if (strncmp(err, "bad value '", 11) != 0 || !strstr(err, tail) || !strstr(err, b->expected))
            fail_msg("%s = '%s': message '%s'", b->key, b->value, err);
        assert_memory_equal(&c, &before, sizeof c);
    }
    assert_int_equal(fdt_config_set(&c, "worker", "heartbeat_ms", "abc", err, sizeof err), -1);
    assert_string_equal(err, "bad value 'abc' for heartbeat_ms: expected a whole number from "
                             "100 to 3600000");
}

static void long_paths_are_refused_not_cut(void **state)
{
    (void)state;
    fdt_config c, before;
    fdt_config_defaults(&c, 0);
    before = c;
    char err[512], path[FDT_PATH_MAX + 1];
    /* 107 characters fit a sockaddr_un; 108 do not. */
    memset(path, 'a', 107);
    path[0] = '/';
    path[107] = '\0';
    assert_int_equal(fdt_config_set(&c, "daemon", "socket", path, err, sizeof err), 0);
    assert_int_equal(strlen(c.socket), 107);
    c = before;
    strcat(path, "b");
    assert_int_equal(fdt_config_set(&c, "daemon", "socket", path, err, sizeof err), -1);
    assert_non_null(strstr(err, "for socket: expected a path of at most 107 characters"));
    memset(path, 'a', FDT_PATH_MAX);
    path[0] = '/';
    path[FDT_PATH_MAX] = '\0';
    const char *path_keys[][2] = {{"daemon", "db"}, {"worker", "worker_path"}};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fdt_config_set(&c, path_keys[i][0], path_keys[i][1], path, err,
                                        sizeof err), -1);
        /* The value is shown in part so that the rest of the message fits. */
        assert_non_null(strstr(err, "bad value '/aaaaaaaaa"));
        assert_non_null(strstr(err, "aaa...' for "));
        assert_non_null(strstr(err, "at most 4095 characters"));
    }
    assert_memory_equal(&c, &before, sizeof c);
    path[FDT_PATH_MAX - 1] = '\0';
    assert_int_equal(fdt_config_set(&c, "daemon", "db", path, err, sizeof err), 0);
    assert_int_equal(strlen(c.db), FDT_PATH_MAX - 1);
}

static void unknown_keys_and_sections(void **state)
{
    (void)state;
    fdt_config c;
    fdt_config_defaults(&c, 0);
    char err[512];
    assert_int_equal(fdt_config_set(&c, "daemon", "heartbeat_ms", "1000", err, sizeof err), -1);
    assert_string_equal(err, "unknown key 'heartbeat_ms' in [daemon]");
    assert_int_equal(fdt_config_set(&c, "gpu", "samples", "3", err, sizeof err), -1);
    assert_string_equal(err, "unknown section [gpu] (key 'samples')");
}

static void cross_key_rules(void **state)
{
    (void)state;
    user_env();
    fdt_config c;
    fdt_config_defaults(&c, 0);
    char err[512];
    c.heartbeat_ms = 5000;
    c.heartbeat_timeout_ms = 9999;
    assert_int_equal(fdt_config_check(&c, err, sizeof err), -1);
    assert_string_equal(err, "heartbeat_timeout_ms (9999) must be at least twice heartbeat_ms (5000)");
    c.heartbeat_timeout_ms = 10000;
    assert_int_equal(fdt_config_check(&c, err, sizeof err), 0);

    /* A runtime directory so deep that the socket cannot be bound. */
    char deep[160] = "/run/user/";
    memset(deep + 10, 'd', 100);
    setenv("XDG_RUNTIME_DIR", deep, 1);
    fdt_config_defaults(&c, 0);
    assert_int_equal(fdt_config_check(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "socket: the default path"));
    assert_non_null(strstr(err, "107 characters"));
}

/* --- the file ------------------------------------------------------------------------ */

typedef struct dir {
    char path[64];
    char file[128];
} dir;

static int make_dir(void **state)
{
    dir *d = calloc(1, sizeof *d);
    strcpy(d->path, "/tmp/test_config.XXXXXX");
    if (!mkdtemp(d->path))
        return -1;
    snprintf(d->file, sizeof d->file, "%s/fdtuned.conf", d->path);
    *state = d;
    return 0;
}

static int remove_dir(void **state)
{
    dir *d = *state;
    unlink(d->file);
    rmdir(d->path);
    free(d);
    return 0;
}

static void write_file(const dir *d, const char *text, size_t len)
{
    FILE *f = fopen(d->file, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Loads text; expected: NULL for success, else the message after "FILE:". */
static void load_text(const dir *d, fdt_config *c, const char *text, const char *expected)
{
    write_file(d, text, strlen(text));
    char err[1024] = "", want[1024];
    const fdt_config before = *c;
    const int rc = fdt_config_load(c, d->file, err, sizeof err);
    if (!expected) {
        if (rc != 0)
            fail_msg("%s", err);
        return;
    }
    snprintf(want, sizeof want, "%s:%s", d->file, expected);
    assert_int_equal(rc, -1);
    assert_string_equal(err, want);
    assert_memory_equal(c, &before, sizeof *c);
}

static void file_errors_name_file_line_and_key(void **state)
{
    const dir *d = *state;
    fdt_config c;
    fdt_config_defaults(&c, 0);
    load_text(d, &c, "[daemon]\nsocket_mode = 0600\nfoo = 1\n", "3: unknown key 'foo' in [daemon]");
    load_text(d, &c, "# fdtuned\n[daemon]\n[gpu]\nsamples = 3\n",
              "4: unknown section [gpu] (key 'samples')");
    load_text(d, &c, "samples = 3\n[tuning]\n", "1: key 'samples' outside any section");
    load_text(d, &c, "\n[worker]\nheartbeat_ms = abc\n",
              "3: bad value 'abc' for heartbeat_ms: expected a whole number from 100 to 3600000");
    load_text(d, &c, "[tuning]\nseed = 12345 # the seed\n",
              "2: bad value '12345 # the seed' for seed: expected a whole number from 0 to "
              "2147483647");
    load_text(d, &c, "[daemon]\nthis line has no equals sign\n", "2: syntax error");
    load_text(d, &c, "[daemon\nbackend = cpu\n", "1: syntax error");
    /* The first error wins, whichever kind comes first. */
    load_text(d, &c, "[tuning]\nsyntax error here\nsamples = 0\n", "2: syntax error");
    load_text(d, &c, "[tuning]\nsamples = 0\nsyntax error here\nleaders = x\n",
              "2: bad value '0' for samples: expected a whole number from 1 to 100000");
}

static void long_lines_and_nul_bytes_are_errors(void **state)
{
    const dir *d = *state;
    fdt_config c;
    fdt_config_defaults(&c, 0);
    /* 198 characters is the longest line inih reads whole. */
    char text[512] = "[worker]\nworker_path = /";
    const size_t start = strlen(text), key_len = strlen("worker_path = /");
    memset(text + start, 'x', 198 - key_len);
    strcpy(text + start + 198 - key_len, "\n");
    load_text(d, &c, text, NULL);
    assert_int_equal(strlen(c.worker_path), 198 - key_len + 1);
    /* One more character, and the line is refused rather than read in two pieces. */
    fdt_config_defaults(&c, 0);
    strcpy(text + start + 198 - key_len, "y\n");
    load_text(d, &c, text, "2: line longer than 198 characters");

    static const char nul[] = "[tuning]\nsamples = 3\0junk\n";
    write_file(d, nul, sizeof nul - 1);
    char err[512];
    assert_int_equal(fdt_config_load(&c, d->file, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: syntax error"));
}

static void later_lines_override_earlier(void **state)
{
    const dir *d = *state;
    fdt_config c;
    fdt_config_defaults(&c, 0);
    load_text(d, &c,
              "; a comment\n"
              "[tuning]\r\n"
              "samples = 3\r\n"
              "[worker]\n"
              "heartbeat_ms=200\n"
              "[tuning]\n"
              "samples = 7 ; inline comment\n"
              "leaders : 2\n"
              "[worker]\n"
              "heartbeat_ms = 300\n",
              NULL);
    assert_int_equal(c.samples, 7);
    assert_int_equal(c.heartbeat_ms, 300);
    assert_int_equal(c.leaders, 2);
    assert_int_equal(c.seed, 12345);
    /* A file only changes what it names. */
    load_text(d, &c, "[daemon]\nbackend = hip\n", NULL);
    assert_int_equal(c.samples, 7);
    assert_string_equal(c.backend, "hip");
}

static void unreadable_files(void **state)
{
    const dir *d = *state;
    fdt_config c;
    fdt_config_defaults(&c, 0);
    char err[512], want[512], missing[256];
    snprintf(missing, sizeof missing, "%s/none.conf", d->path);
    assert_int_equal(fdt_config_load(&c, missing, err, sizeof err), -1);
    snprintf(want, sizeof want, "cannot read %s: No such file or directory", missing);
    assert_string_equal(err, want);
    write_file(d, "", 0);
    assert_int_equal(fdt_config_load(&c, d->file, err, sizeof err), 0);
}

/* Anything but a regular file is refused at once with the same message, c unchanged. */
static void assert_not_regular(const char *path)
{
    fdt_config c, before;
    fdt_config_defaults(&c, 0);
    before = c;
    char err[512], want[512];
    assert_int_equal(fdt_config_load(&c, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "cannot read %s: not a regular file (a settings file must be "
                                "one, not a FIFO, device, directory or socket)", path);
    assert_string_equal(err, want);
    assert_memory_equal(&c, &before, sizeof c);
}

/* A FIFO with no writer would block the open, and a read from it, for ever: the test
 * itself would hang if the refusal were not made before any read. */
static void only_regular_files_are_read(void **state)
{
    const dir *d = *state;
    char fifo[300], link[300];
    snprintf(fifo, sizeof fifo, "%s/fifo.conf", d->path);
    snprintf(link, sizeof link, "%s/link.conf", d->path);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_not_regular(fifo);
    assert_not_regular("/dev/null");
    assert_not_regular(d->path);
    /* A symlink is followed: to a FIFO it is refused, to a regular file it is read. */
    assert_int_equal(symlink(fifo, link), 0);
    assert_not_regular(link);
    assert_int_equal(unlink(link), 0);
    write_file(d, "[tuning]\nsamples = 9\n", strlen("[tuning]\nsamples = 9\n"));
    assert_int_equal(symlink(d->file, link), 0);
    fdt_config c;
    fdt_config_defaults(&c, 0);
    char err[512];
    if (fdt_config_load(&c, link, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(c.samples, 9);
    unlink(link);
    unlink(fifo);
}

/* --- default paths ------------------------------------------------------------------- */

static void default_paths(void **state)
{
    (void)state;
    char out[FDT_PATH_MAX], want[128];
    const unsigned uid = (unsigned)getuid();

    user_env();
    assert_int_equal(fdt_default_socket(0, out, sizeof out), 0);
    assert_string_equal(out, "/run/user/4242/fdtuned/fdtuned.sock");
    assert_int_equal(fdt_default_db(0, out, sizeof out), 0);
    assert_string_equal(out, "/home/ann/.state/fdtuned/fdtuned.db");

    /* Without XDG variables, or with relative ones the spec says to ignore. */
    for (int relative = 0; relative <= 1; relative++) {
        if (relative) {
            setenv("XDG_RUNTIME_DIR", "run", 1);
            setenv("XDG_STATE_HOME", "", 1);
        } else {
            unsetenv("XDG_RUNTIME_DIR");
            unsetenv("XDG_STATE_HOME");
        }
        assert_int_equal(fdt_default_socket(0, out, sizeof out), 0);
        snprintf(want, sizeof want, "/tmp/fdtuned-%u/fdtuned.sock", uid);
        assert_string_equal(out, want);
        assert_int_equal(fdt_default_db(0, out, sizeof out), 0);
        assert_string_equal(out, "/home/ann/.local/state/fdtuned/fdtuned.db");
    }
    unsetenv("HOME");
    assert_int_equal(fdt_default_db(0, out, sizeof out), 0);
    snprintf(want, sizeof want, "/tmp/fdtuned-%u/fdtuned.db", uid);
    assert_string_equal(out, want);

    /* The system service ignores the environment. */
    user_env();
    assert_int_equal(fdt_default_socket(1, out, sizeof out), 0);
    assert_string_equal(out, "/run/fdtuned/fdtuned.sock");
    assert_int_equal(fdt_default_db(1, out, sizeof out), 0);
    assert_string_equal(out, "/var/lib/fdtuned/fdtuned.db");
}

static void default_paths_never_cut_short(void **state)
{
    (void)state;
    user_env();
    const char *sock = "/run/user/4242/fdtuned/fdtuned.sock";
    char out[64];
    memset(out, 'z', sizeof out);
    assert_int_equal(fdt_default_socket(0, out, strlen(sock) + 1), 0);
    assert_string_equal(out, sock);
    memset(out, 'z', sizeof out);
    assert_int_equal(fdt_default_socket(0, out, strlen(sock)), -1);
    assert_string_equal(out, "");
    assert_int_equal(fdt_default_db(1, out, 8), -1);
    assert_string_equal(out, "");
    assert_int_equal(fdt_default_socket(1, out, 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_are_documented_values),
        cmocka_unit_test(shipped_file_states_every_default),
        cmocka_unit_test(every_key_accepts_a_valid_value),
        cmocka_unit_test(booleans_and_octal_spellings),
        cmocka_unit_test(bad_values_name_the_key_and_change_nothing),
        cmocka_unit_test(long_paths_are_refused_not_cut),
        cmocka_unit_test(unknown_keys_and_sections),
        cmocka_unit_test(cross_key_rules),
        cmocka_unit_test_setup_teardown(file_errors_name_file_line_and_key, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(long_lines_and_nul_bytes_are_errors, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(later_lines_override_earlier, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(unreadable_files, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(only_regular_files_are_read, make_dir, remove_dir),
        cmocka_unit_test(default_paths),
        cmocka_unit_test(default_paths_never_cut_short),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
