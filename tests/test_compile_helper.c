/* test_compile_helper.c - compiles handed to helper processes (the real fdtune-worker run
 * as `--compile-helper cpu`, the real host compiler behind it): code comes back and runs,
 * a compile error comes back with the compiler's words, a helper killed from outside is
 * replaced without the variant being blamed, a helper that cannot be started leaves the
 * compile in this process, helpers end when their set is freed or their parent dies, a
 * compiler that stops is killed at the compile deadline with its helper, and an answer
 * whose code frame is bad or cut short is refused, never a crash or a hang. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/compile_helper.h"

static char worker[4096];

/* This process's children, by /proc: the helpers, which the API does not name. */
static int children(pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)) && n < max) {
        char path[300];
        int pid, ppid;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fscanf(f, "%d (%*[^)]) %*c %d", &pid, &ppid) == 2 && ppid == getpid())
            out[n++] = pid;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* A small double problem, and its kernel 1's defines as the pool makes them. */
static const fdt_problem small = {.stencil = "laplacian", .nx = 20, .ny = 18, .nz = 16,
                                  .radius = 1, .precision = FDT_DOUBLE};

static void kernel1_defines(fdt_defines *d)
{
    const fdt_variant v = fdt_variant_kernel1(&small);
    fdt_variant_defines(&v, &small, d);
}

static fdt_status compile_kernel1(fdt_compile_helpers *set, int slot, fdt_code *code,
                                  fdt_error *err)
{
    fdt_defines d;
    kernel1_defines(&d);
    const fdt_variant v = fdt_variant_kernel1(&small);
    return fdt_compile_helpers_compile(set, slot, "host", fdt_family_name(v.family),
                                       fdt_variant_source(&v, &small), "fdt_laplacian", d.list,
                                       d.count, code, err);
}

/* The code a helper sends is the code: it loads and its entry point is found. */
static void test_helpers_compile_code_that_loads(void **state)
{
    (void)state;
    fdt_compile_helpers *set = fdt_compile_helpers_new(worker, "cpu", 2);
    assert_non_null(set);
    fdt_backend *b;
    fdt_error err = {0};
    assert_int_equal(fdt_backend_cpu.open(0, &b, &err), FDT_OK);
    for (int slot = 0; slot < 2; slot++) {
        fdt_code code = {0};
        assert_int_equal(compile_kernel1(set, slot, &code, &err), FDT_OK);
        fdt_kernel *k = NULL;
        assert_int_equal(fdt_backend_cpu.load(b, &code, "fdt_laplacian", &k, &err), FDT_OK);
        fdt_backend_cpu.unload(b, k);
        fdt_code_free(&code);
    }
    pid_t kids[8];
    assert_int_equal(children(kids, 8), 2); /* one helper per slot used, still running */
    fdt_compile_helpers_free(set);
    assert_int_equal(children(kids, 8), 0);
    fdt_backend_cpu.close(b);
}

/* A define the compiler rejects: FDT_COMPILE_ERROR with its log, as in this process. */
static void test_compile_error_comes_back(void **state)
{
    (void)state;
    fdt_compile_helpers *set = fdt_compile_helpers_new(worker, "cpu", 1);
    fdt_defines d;
    kernel1_defines(&d);
    d.list[2] = "FDT_RADIUS=not_a_number"; /* list[2] is the radius: see fdt_variant_defines */
    const fdt_variant v = fdt_variant_kernel1(&small);
    fdt_code code = {0};
    fdt_error err = {0};
    assert_int_equal(fdt_compile_helpers_compile(set, 0, "host", fdt_family_name(v.family),
                                                 fdt_variant_source(&v, &small), "fdt_laplacian",
                                                 d.list, d.count, &code, &err),
                     FDT_COMPILE_ERROR);
    assert_non_null(strstr(err.msg, "not_a_number"));
    assert_null(code.data);
    fdt_compile_helpers_free(set);
}

/* A helper killed between compiles is replaced, and the next compile succeeds. */
static void test_killed_helper_is_replaced(void **state)
{
    (void)state;
    fdt_compile_helpers *set = fdt_compile_helpers_new(worker, "cpu", 1);
    fdt_code code = {0};
    fdt_error err = {0};
    assert_int_equal(compile_kernel1(set, 0, &code, &err), FDT_OK);
    fdt_code_free(&code);
    pid_t kids[8], again[8];
    assert_int_equal(children(kids, 8), 1);
    assert_int_equal(kill(kids[0], SIGKILL), 0);
    assert_int_equal(compile_kernel1(set, 0, &code, &err), FDT_OK);
    fdt_code_free(&code);
    assert_int_equal(children(again, 8), 1);
    assert_int_not_equal(again[0], kids[0]);
    fdt_compile_helpers_free(set);
}

/* No helper can be started: the compile still happens, here. */
static void test_no_helper_compiles_here(void **state)
{
    (void)state;
    fdt_compile_helpers *set = fdt_compile_helpers_new("/nonexistent/fdtune-worker", "cpu", 1);
    fdt_code code = {0};
    fdt_error err = {0};
    assert_int_equal(compile_kernel1(set, 0, &code, &err), FDT_OK);
    assert_non_null(code.data);
    fdt_code_free(&code);
    pid_t kids[8];
    assert_int_equal(children(kids, 8), 0);
    fdt_compile_helpers_free(set);
}

/* Running: it exists and is not a zombie (one whose new parent does not reap it). */
static int running(pid_t pid)
{
    char path[64], state = 'Z';
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
        state = 'Z';
    if (f)
        fclose(f);
    return f && state != 'Z';
}

/* A worker killed with SIGKILL takes its helpers with it within seconds: the helper of a
 * child killed so is gone soon after. */
static void test_helper_ends_with_its_parent(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        fdt_compile_helpers *set = fdt_compile_helpers_new(worker, "cpu", 1);
        fdt_code code = {0};
        fdt_error err = {0};
        pid_t kids[8] = {0};
        if (compile_kernel1(set, 0, &code, &err) != FDT_OK || children(kids, 8) != 1)
            _exit(1);
        if (write(fds[1], &kids[0], sizeof kids[0]) != sizeof kids[0])
            _exit(1);
        pause();
        _exit(0);
    }
    pid_t helper = 0;
    assert_int_equal(read(fds[0], &helper, sizeof helper), sizeof helper);
    assert_true(running(helper));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    int alive = 1;
    for (int i = 0; i < 50 && alive; i++) {
        usleep(100000);
        alive = running(helper);
    }
    assert_false(alive);
    close(fds[0]);
    close(fds[1]);
}

/* A compiler that stops itself (SIGSTOP: a compiler hung on an NFS include is alike) is
 * killed at the deadline with its helper: the compile is a timeout naming the deadline,
 * nothing stays stopped, and the next compile on the slot runs in a new helper. The alarm
 * ends the test, failed, should the compile never come back. */
static void test_stopped_compiler_meets_the_deadline(void **state)
{
    (void)state;
    char dir[] = "/tmp/fdt-stopcc-XXXXXX", cxx[64], armed[64], stopped[64];
    assert_non_null(mkdtemp(dir));
    snprintf(cxx, sizeof cxx, "%s/cxx", dir);
    snprintf(armed, sizeof armed, "%s/armed", dir);
    snprintf(stopped, sizeof stopped, "%s/stopped", dir);
    FILE *f = fopen(cxx, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\ncase \" $* \" in *\" -o \"*) if mv %s %s.fired 2>/dev/null; then "
            "echo $$ >%s; kill -STOP $$; fi ;; esac\nexec c++ \"$@\"\n", armed, armed, stopped);
    fclose(f);
    assert_int_equal(chmod(cxx, 0755), 0);
    fclose(fopen(armed, "w"));
    const char *was = getenv("CXX");
    char *saved = was ? strdup(was) : NULL;
    setenv("CXX", cxx, 1);
    alarm(120);

    fdt_compile_helpers *set = fdt_compile_helpers_new(worker, "cpu", 1);
    fdt_compile_helpers_set_deadline(set, 1000);
    fdt_code code = {0};
    fdt_error err = {0};
    assert_int_equal(compile_kernel1(set, 0, &code, &err), FDT_TIMEOUT);
    assert_non_null(strstr(err.msg, "compile deadline of 1000 ms"));
    pid_t kids[8], compiler = 0;
    assert_int_equal(children(kids, 8), 0); /* the helper was ended */
    f = fopen(stopped, "r");
    assert_true(f && fscanf(f, "%d", &compiler) == 1);
    fclose(f);
    int alive = 1;
    for (int i = 0; i < 100 && alive; i++) { /* its new parent reaps it */
        alive = running(compiler);
        if (alive)
            usleep(100000);
    }
    assert_false(alive);
    fdt_compile_helpers_set_deadline(set, FDT_COMPILE_DEADLINE_MS);
    assert_int_equal(compile_kernel1(set, 0, &code, &err), FDT_OK);
    fdt_code_free(&code);
    assert_int_equal(children(kids, 8), 1);
    fdt_compile_helpers_free(set);

    alarm(0);
    if (saved)
        setenv("CXX", saved, 1);
    else
        unsetenv("CXX");
    free(saved);
    char fired[80];
    snprintf(fired, sizeof fired, "%s.fired", armed);
    assert_int_equal(unlink(fired) | unlink(stopped) | unlink(cxx) | rmdir(dir), 0);
}

/* A helper that answers the first request with answer (printf's format: \ooo for a byte),
 * then what follows (a shell command: sleep, so that the test sees it ended, or exit). */
static void fake_helper(char *dir, char *path, size_t len, const char *answer, const char *then)
{
    assert_non_null(mkdtemp(dir));
    snprintf(path, len, "%s/helper", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\nread -r request\nprintf '%s'\n%s\n", answer, then);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
}

/* An answer whose code frame is not what its line said is refused with what was wrong:
 * the helper is ended (its channel cannot be read on), the compile fails at once, without
 * a second try, and nothing hangs (the alarm fails the test should a read never end). */
static void test_bad_frames_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *answer, *why;
    } cases[] = {
        {"{\"status\":0,\"bytes\":300000000}\n",
         "a frame of 300000000 bytes is over the limit of 268435456"},
        {"{\"status\":0,\"bytes\":3}\n\\243abc", "first byte is 0xa3"},
        {"{\"status\":0,\"bytes\":3}\n\\304\\005abc", "runs past the 3 bytes its line announced"},
        {"{\"status\":0,\"bytes\":1}\n\\304\\001xjunk", "bytes after its code frame"},
        {"{\"status\":0,\"bytes\":\"3\"}\n", "'bytes' must be the size"},
        {"{\"status\":0}\n", "answered with no code frame"},
    };
    alarm(60);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[] = "/tmp/fdt-badframe-XXXXXX", path[64];
        fake_helper(dir, path, sizeof path, cases[i].answer, "exec sleep 60");
        fdt_compile_helpers *set = fdt_compile_helpers_new(path, "cpu", 1);
        fdt_code code = {0};
        fdt_error err = {0};
        assert_int_equal(compile_kernel1(set, 0, &code, &err), FDT_ERROR);
        if (!strstr(err.msg, cases[i].why))
            fail_msg("case %zu: '%s' does not say '%s'", i, err.msg, cases[i].why);
        assert_null(code.data);
        pid_t kids[8];
        /* the last case's answer is whole, so its helper is kept; the others' ended */
        assert_int_equal(children(kids, 8), i + 1 == sizeof cases / sizeof cases[0]);
        fdt_compile_helpers_free(set);
        assert_int_equal(unlink(path) | rmdir(dir), 0);
    }
    alarm(0);
}

/* A helper that dies partway through its code frame is a helper gone, as one killed from
 * outside: tried again in a new one, then the compile fails saying where it ended. */
static void test_truncated_frame_is_a_helper_gone(void **state)
{
    (void)state;
    char dir[] = "/tmp/fdt-cutframe-XXXXXX", path[64];
    fake_helper(dir, path, sizeof path, "{\"status\":0,\"bytes\":100}\n\\304\\144abcdefghij",
                "exit 0");
    alarm(60);
    fdt_compile_helpers *set = fdt_compile_helpers_new(path, "cpu", 1);
    fdt_code code = {0};
    fdt_error err = {0};
    assert_int_equal(compile_kernel1(set, 0, &code, &err), FDT_COMPILE_ERROR);
    assert_non_null(strstr(err.msg, "ended during the compile, 2 times in a row (the last: "
                           "exit status 0, partway through its code frame (12 of its bytes "
                           "read, for a code object of 100))"));
    assert_null(code.data);
    fdt_compile_helpers_free(set);
    alarm(0);
    assert_int_equal(unlink(path) | rmdir(dir), 0);
}

static void test_compile_modes(void **state)
{
    (void)state;
    fdt_compile_mode m;
    assert_true(fdt_compile_mode_parse("processes", &m));
    assert_int_equal(m, FDT_COMPILE_PROCESSES);
    assert_false(fdt_compile_mode_parse("process", &m));
    assert_true(fdt_compile_in_processes(FDT_COMPILE_AUTO, &fdt_backend_cuda));
    assert_false(fdt_compile_in_processes(FDT_COMPILE_AUTO, &fdt_backend_cpu));
    assert_true(fdt_compile_in_processes(FDT_COMPILE_PROCESSES, &fdt_backend_cpu));
    assert_false(fdt_compile_in_processes(FDT_COMPILE_THREADS, &fdt_backend_cuda));
}

int main(void)
{
    const char *build = getenv("FDT_BUILD");
    snprintf(worker, sizeof worker, "%s/fdtune-worker", build ? build : "build");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helpers_compile_code_that_loads),
        cmocka_unit_test(test_compile_error_comes_back),
        cmocka_unit_test(test_killed_helper_is_replaced),
        cmocka_unit_test(test_no_helper_compiles_here),
        cmocka_unit_test(test_helper_ends_with_its_parent),
        cmocka_unit_test(test_stopped_compiler_meets_the_deadline),
        cmocka_unit_test(test_bad_frames_are_refused),
        cmocka_unit_test(test_truncated_frame_is_a_helper_gone),
        cmocka_unit_test(test_compile_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
