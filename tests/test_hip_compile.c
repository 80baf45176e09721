/* test_hip_compile.c - the hip backend's compile path and the AMDGPU code object reader,
 * on a host without a GPU: hiprtc compiles for gfx90a and gfx906, the resources read back
 * are plausible (the largest block too, with launch bounds and without), compiler errors
 * and unknown targets come back as statuses, and damaged code objects give FDT_ERROR rather
 * than a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "backends/amdgpu_codeobj.h"
#include "backends/backend.h"

#define ENTRY "fdt_test"

/* Shared memory of a known size, and a private array indexed at run time, which cannot live
 * in registers: the reader must find LDS and scratch where the compiler put them. */
static const char kernel_src[] =
    "extern \"C\" __global__ BOUNDS void fdt_test(float *a, int n)\n"
    "{\n"
    "    __shared__ float tile[256];\n"
    "    float priv[256];\n"
    "    for (int i = 0; i < 256; i++)\n"
    "        priv[i] = a[i * n + threadIdx.x];\n"
    "    tile[threadIdx.x] = priv[(n + threadIdx.x) & 255] * SCALE;\n"
    "    __syncthreads();\n"
    "    a[threadIdx.x] = tile[255 - threadIdx.x];\n"
    "}\n";

static const char *const defines[] = {"SCALE=2.0f", "BOUNDS="};
static const char *const bounded[] = {"SCALE=2.0f", "BOUNDS=__launch_bounds__(128)"};
#define NDEFINES (sizeof defines / sizeof defines[0])

static fdt_code compile_with(const char *arch, const char *const *with)
{
    fdt_code code = {0};
    fdt_error err = {0};
    fdt_status s = fdt_backend_hip.compile(arch, kernel_src, ENTRY, with, NDEFINES, &code, &err);
    if (s != FDT_OK)
        fail_msg("compile for %s: %s: %s", arch, fdt_status_name(s), err.msg);
    assert_non_null(code.data);
    assert_true(code.size > 0);
    return code;
}

static fdt_code compile_ok(const char *arch)
{
    return compile_with(arch, defines);
}

static void assert_plausible(const fdt_code *code)
{
    fdt_resources r;
    fdt_error err = {0};
    fdt_status s = fdt_amdgpu_resources(code->data, code->size, ENTRY, &r, &err);
    if (s != FDT_OK)
        fail_msg("resources: %s", err.msg);
    assert_true(r.vgprs > 0);
    assert_true(r.sgprs > 0);
    assert_true(r.scratch_bytes > 0);
    assert_int_equal(r.shared_bytes, 256 * sizeof(float));
    assert_int_equal(r.max_threads, 1024); /* HIP's default without launch bounds */
}

/* The session refuses a block larger than this before launching it (fdt_variant_check_compiled). */
static void test_launch_bounds_limit_the_block(void **state)
{
    (void)state;
    fdt_code code = compile_with("gfx90a", bounded);
    fdt_resources r;
    fdt_error err = {0};
    assert_int_equal(fdt_amdgpu_resources(code.data, code.size, ENTRY, &r, &err), FDT_OK);
    assert_int_equal(r.max_threads, 128);
    fdt_code_free(&code);
}

static void test_compile_gfx90a(void **state)
{
    (void)state;
    uint64_t t0 = uv_hrtime();
    fdt_code code = compile_ok("gfx90a");
    print_message("compile for gfx90a: %.3f s\n", (double)(uv_hrtime() - t0) / 1e9);
    assert_plausible(&code);
    fdt_code_free(&code);
}

static void test_compile_gfx906(void **state)
{
    (void)state;
    fdt_code code = compile_ok("gfx906");
    assert_plausible(&code);
    fdt_code_free(&code);
}

static void test_syntax_error(void **state)
{
    (void)state;
    fdt_code code = {0};
    fdt_error err = {0};
    const char *src = "extern \"C\" __global__ void fdt_test(float *a) { a[0] = 1.0f }\n";
    assert_int_equal(fdt_backend_hip.compile("gfx90a", src, ENTRY, NULL, 0, &code, &err),
                     FDT_COMPILE_ERROR);
    assert_int_equal(err.status, FDT_COMPILE_ERROR);
    assert_non_null(strstr(err.msg, "error"));
    assert_null(code.data);
}

/* hiprtc 5.2 aborts the process on a target comgr does not know: the backend must not. */
static void test_unknown_target(void **state)
{
    (void)state;
    const char *const targets[] = {"gfx9999", "sm_90", "", "gfx90a:bogus+"};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        fdt_code code = {0};
        fdt_error err = {0};
        assert_int_equal(fdt_backend_hip.compile(targets[i], kernel_src, ENTRY, defines, NDEFINES,
                                                 &code, &err),
                         FDT_ERROR);
        assert_non_null(strstr(err.msg, "unknown target"));
    }
}

/* compile() is documented thread-safe: four threads at once must all succeed. */
static void compile_in_thread(void *arg)
{
    fdt_error err = {0};
    fdt_code code = {0};
    *(fdt_status *)arg =
        fdt_backend_hip.compile("gfx90a", kernel_src, ENTRY, defines, NDEFINES, &code, &err);
    fdt_code_free(&code);
}

static void test_concurrent_compiles(void **state)
{
    (void)state;
    uv_thread_t threads[4];
    fdt_status status[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(uv_thread_create(&threads[i], compile_in_thread, &status[i]), 0);
    for (int i = 0; i < 4; i++) {
        uv_thread_join(&threads[i]);
        assert_int_equal(status[i], FDT_OK);
    }
}

static void test_compiler_version(void **state)
{
    (void)state;
    char version[48];
    fdt_error err = {0};
    assert_int_equal(fdt_backend_hip.compiler_version(version, sizeof version, &err), FDT_OK);
    assert_int_equal(strncmp(version, "hiprtc ", 7), 0);
}

/* Without a GPU open() reports why; with one it opens and closes. */
static void test_open_is_clean(void **state)
{
    (void)state;
    fdt_backend *b = NULL;
    fdt_error err = {0};
    if (fdt_backend_hip.open(0, &b, &err) == FDT_OK) {
        assert_string_equal(fdt_backend_hip.info(b)->backend, "hip");
        fdt_backend_hip.close(b);
    } else {
        assert_int_equal(err.status, FDT_ERROR);
        assert_int_equal(strncmp(err.msg, "hip backend: ", 13), 0);
    }
}

static void assert_rejected(const void *data, size_t size, const char *entry)
{
    fdt_resources r;
    fdt_error err = {0};
    assert_int_equal(fdt_amdgpu_resources(data, size, entry, &r, &err), FDT_ERROR);
    assert_int_equal(err.status, FDT_ERROR);
    assert_true(err.msg[0] != '\0');
}

static void test_garbage(void **state)
{
    (void)state;
    unsigned char junk[4096];
    srand(1);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)rand();
    assert_rejected(junk, sizeof junk, ENTRY);
    memcpy(junk, "\177ELF\2\1\1", 7); /* a plausible start, then noise */
    assert_rejected(junk, sizeof junk, ENTRY);
    assert_rejected(junk, 0, ENTRY);
}

/* The section headers come last in the file, so every cut loses them. */
static void test_truncated(void **state)
{
    fdt_code *code = *state;
    for (size_t len = 0; len < code->size; len++)
        assert_rejected(code->data, len, ENTRY);
}

static void test_unknown_entry(void **state)
{
    fdt_code *code = *state;
    assert_rejected(code->data, code->size, "no_such_kernel");
    assert_rejected(code->data, code->size, "");
}

/* Every byte of a real code object overwritten in turn, with values that flip every bit or
 * turn a msgpack header into a 32-bit array or map count: never a crash, never a huge
 * allocation. */
static void test_mutations(void **state)
{
    fdt_code *code = *state;
    static const int values[] = {-1, 0xdd, 0xdf};
    unsigned char *copy = malloc(code->size);
    assert_non_null(copy);
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
        for (size_t i = 0; i < code->size; i++) {
            fdt_resources r;
            memcpy(copy, code->data, code->size);
            copy[i] = values[v] < 0 ? (unsigned char)~copy[i] : (unsigned char)values[v];
            fdt_status s = fdt_amdgpu_resources(copy, code->size, ENTRY, &r, NULL);
            assert_true(s == FDT_OK || s == FDT_ERROR);
        }
    }
    free(copy);
}

static size_t put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    return 8;
}

static size_t put_entry(unsigned char *p, uint64_t off, uint64_t size, const char *id)
{
    size_t n = put_u64(p, off);
    n += put_u64(p + n, size);
    n += put_u64(p + n, strlen(id));
    memcpy(p + n, id, strlen(id));
    return n + strlen(id);
}

/* A bundle as clang-offload-bundler lays it out: a host entry, then the gfx90a code object. */
static void test_unbundle(void **state)
{
    fdt_code *code = *state;
    static const char host_id[] = "host-x86_64-unknown-linux-gnu-";
    static const char gpu_id[] = "hipv4-amdgcn-amd-amdhsa--gfx90a";
    size_t header = 24 + 8 + 2 * 24 + strlen(host_id) + strlen(gpu_id);
    unsigned char *bundle = calloc(1, header + code->size);
    assert_non_null(bundle);
    memcpy(bundle, "__CLANG_OFFLOAD_BUNDLE__", 24);
    size_t n = 24 + put_u64(bundle + 24, 2);
    n += put_entry(bundle + n, header, 0, host_id);
    n += put_entry(bundle + n, header, code->size, gpu_id);
    memcpy(bundle + header, code->data, code->size);

    const void *elf;
    size_t size;
    fdt_error err = {0};
    assert_int_equal(fdt_amdgpu_unbundle(bundle, header + code->size, "gfx90a", &elf, &size,
                                         &err), FDT_OK);
    assert_int_equal(size, code->size);
    assert_memory_equal(elf, code->data, size);
    assert_int_equal(fdt_amdgpu_unbundle(bundle, header + code->size, "gfx906", &elf, &size,
                                         &err), FDT_ERROR);
    assert_int_equal(fdt_amdgpu_unbundle(bundle, header - 1, "gfx90a", &elf, &size, &err),
                     FDT_ERROR);
    assert_int_equal(fdt_amdgpu_unbundle(code->data, code->size, "gfx90a", &elf, &size, &err),
                     FDT_OK);
    assert_ptr_equal(elf, code->data);
    free(bundle);
}

static int compile_fixture(void **state)
{
    static fdt_code code;
    fdt_error err = {0};
    if (fdt_backend_hip.compile("gfx90a", kernel_src, ENTRY, defines, NDEFINES, &code,
                                &err) != FDT_OK)
        return -1;
    *state = &code;
    return 0;
}

static int free_fixture(void **state)
{
    fdt_code_free(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_gfx90a),
        cmocka_unit_test(test_compile_gfx906),
        cmocka_unit_test(test_launch_bounds_limit_the_block),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_unknown_target),
        cmocka_unit_test(test_concurrent_compiles),
        cmocka_unit_test(test_compiler_version),
        cmocka_unit_test(test_open_is_clean),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_unknown_entry),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_unbundle),
    };
    return cmocka_run_group_tests(tests, compile_fixture, free_fixture);
}
