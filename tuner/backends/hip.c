/* hip.c - the hip backend: AMD GPUs through the HIP runtime and hiprtc, both loaded
 * with dlopen on first use, so fdtuned builds and runs where ROCm is absent. Debian's ROCm 5.2
 * headers give the types; every call goes through the function pointers in api. A handle's
 * queued work goes to its stream: the null stream for open(), the solver's for attach(). */
#define __HIP_PLATFORM_AMD__ 1
#include <amd_comgr.h>
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include "backends/amdgpu_codeobj.h"
#include "backends/backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ROCm 6 headers rename hipGetDeviceProperties to a versioned symbol with another struct
 * layout; the unversioned symbol loaded here keeps the ROCm 5 layout of Debian's headers. */
#ifdef hipGetDeviceProperties
#error "build with ROCm 5 (Debian) headers: hipDeviceProp_t must match hipGetDeviceProperties"
#endif

/* --- the libraries --- */

enum group { RUNTIME, RTC, COMGR, GROUPS };

#define API(X)                                                                                \
    X(RUNTIME, hipGetErrorName) X(RUNTIME, hipGetErrorString) X(RUNTIME, hipInit)             \
    X(RUNTIME, hipGetDeviceCount) X(RUNTIME, hipSetDevice) X(RUNTIME, hipGetDevice)           \
    X(RUNTIME, hipGetDeviceProperties) X(RUNTIME, hipStreamSynchronize)                       \
    X(RUNTIME, hipDriverGetVersion) X(RUNTIME, hipRuntimeGetVersion)                          \
    X(RUNTIME, hipModuleLoadData) X(RUNTIME, hipModuleGetFunction) X(RUNTIME, hipModuleUnload) \
    X(RUNTIME, hipFuncGetAttribute)                                                           \
    X(RUNTIME, hipMalloc) X(RUNTIME, hipFree) X(RUNTIME, hipMemcpyHtoD)                       \
    X(RUNTIME, hipMemcpyDtoH) X(RUNTIME, hipMemsetD32Async) X(RUNTIME, hipMemcpyDtoDAsync)    \
    X(RUNTIME, hipModuleLaunchKernel) X(RUNTIME, hipEventCreate) X(RUNTIME, hipEventDestroy)  \
    X(RUNTIME, hipEventRecord) X(RUNTIME, hipEventQuery) X(RUNTIME, hipEventElapsedTime)      \
    X(RTC, hiprtcGetErrorString) X(RTC, hiprtcVersion) X(RTC, hiprtcCreateProgram)            \
    X(RTC, hiprtcCompileProgram) X(RTC, hiprtcDestroyProgram) X(RTC, hiprtcGetProgramLogSize) \
    X(RTC, hiprtcGetProgramLog) X(RTC, hiprtcGetCodeSize) X(RTC, hiprtcGetCode)               \
    X(COMGR, amd_comgr_create_action_info) X(COMGR, amd_comgr_action_info_set_isa_name)       \
    X(COMGR, amd_comgr_destroy_action_info)

#define MEMBER(group, f) __typeof__(&f) f;
static struct {
    API(MEMBER)
} api;

#define LOAD(group, f)                                                                        \
    if (g == group && !(api.f = (__typeof__(api.f))dlsym(lib, #f)))                           \
        return #f;

/* Fills the functions of group g from lib; returns the first one lib lacks, or NULL. */
static const char *load_group(enum group g, void *lib)
{
    API(LOAD)
    return NULL;
}

#define MAX_NAMES 8

static const struct {
    const char *what;
    const char *names[MAX_NAMES];
} libraries[GROUPS] = {
    [RUNTIME] = {"the HIP runtime", {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                                     "libamdhip64.so.5"}},
    /* ROCm 5 (Debian 12's) has hiprtc inside the runtime library. */
    [RTC] = {"hiprtc", {"libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so.5",
                        "libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                        "libamdhip64.so.5"}},
    [COMGR] = {"comgr", {"libamd_comgr.so", "libamd_comgr.so.3", "libamd_comgr.so.2"}},
};

static struct {
    bool loaded[GROUPS];
    char error[GROUPS][1024];
    pthread_mutex_t rtc_lock; /* hiprtc 5.2 is not documented as thread-safe */
} libs = {.rtc_lock = PTHREAD_MUTEX_INITIALIZER};

static void load_library(enum group g)
{
    char tried[256] = "", why[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < MAX_NAMES && libraries[g].names[i]; i++) {
        const char *name = libraries[g].names[i];
        used += (size_t)snprintf(tried + used, sizeof tried - used, "%s%s", i ? ", " : "", name);
        void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(why, sizeof why, "%s", dlerror());
            continue;
        }
        const char *missing = load_group(g, lib);
        if (!missing) {
            libs.loaded[g] = true;
            return;
        }
        snprintf(why, sizeof why, "%s lacks %s", name, missing);
        dlclose(lib);
    }
    snprintf(libs.error[g], sizeof libs.error[g], "hip backend: cannot load %s (tried %s): %s",
             libraries[g].what, tried, why);
}

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load_libraries(void)
{
    for (int g = 0; g < GROUPS; g++)
        load_library((enum group)g);
}

static fdt_status need(enum group g, fdt_error *err)
{
    pthread_once(&load_once, load_libraries);
    return libs.loaded[g] ? FDT_OK : fdt_fail(err, FDT_ERROR, "%s", libs.error[g]);
}

/* HIP on AMD numbers versions major * 10^7 + minor * 10^5 + patch; HIP's NVIDIA platform
 * passes CUDA's numbers through (major * 1000 + minor * 10), which stay under 10^7. */
static void format_version(const char *prefix, int v, char *out, size_t len)
{
    if (v >= 10000000)
        snprintf(out, len, "%s%d.%d.%d", prefix, v / 10000000, v / 100000 % 100, v % 100000);
    else
        snprintf(out, len, "%s%d.%d", prefix, v / 1000, v % 1000 / 10);
}

/* --- compiling --- */

static fdt_status hip_compiler_version(char *out, size_t len, fdt_error *err)
{
    int v, major, minor;
    fdt_status s = need(RTC, err);
    if (s != FDT_OK)
        return s;
    /* hiprtc 5.2's own hiprtcVersion answers 9.0; the runtime's version names the release. */
    if (libs.loaded[RUNTIME] && api.hipRuntimeGetVersion(&v) == hipSuccess)
        format_version("hiprtc ", v, out, len);
    else if (api.hiprtcVersion(&major, &minor) == HIPRTC_SUCCESS)
        snprintf(out, len, "hiprtc %d.%d", major, minor);
    else
        return fdt_fail(err, FDT_ERROR, "hip backend: hiprtc reports no version");
    return FDT_OK;
}

/* hiprtc's options in one allocation: the target, -O3, C++17 and one -D per define. */
static const char **compile_options(const char *arch, const char *const *defines, size_t n)
{
    size_t bytes = (n + 3) * sizeof(char *) + sizeof "--offload-arch=" + strlen(arch);
    for (size_t i = 0; i < n; i++)
        bytes += sizeof "-D" + strlen(defines[i]);
    const char **opt = malloc(bytes);
    if (!opt)
        return NULL;
    char *p = (char *)(opt + n + 3);
    opt[0] = p;
    p += sprintf(p, "--offload-arch=%s", arch) + 1;
    opt[1] = "-O3";
    opt[2] = "-std=c++17";
    for (size_t i = 0; i < n; i++) {
        opt[3 + i] = p;
        p += sprintf(p, "-D%s", defines[i]) + 1;
    }
    return opt;
}

/* hiprtc 5.2 aborts the process when comgr rejects the target, so comgr is asked first.
 * Without a comgr by a known name the check is left to hiprtc. */
static fdt_status check_arch(const char *arch, fdt_error *err)
{
    char isa[256];
    amd_comgr_action_info_t info;
    if (!libs.loaded[COMGR])
        return FDT_OK;
    if ((size_t)snprintf(isa, sizeof isa, "amdgcn-amd-amdhsa--%s", arch) >= sizeof isa)
        return fdt_fail(err, FDT_ERROR, "hip backend: target name too long");
    if (api.amd_comgr_create_action_info(&info) != AMD_COMGR_STATUS_SUCCESS)
        return fdt_fail(err, FDT_ERROR, "hip backend: comgr cannot create an action info");
    amd_comgr_status_t st = api.amd_comgr_action_info_set_isa_name(info, isa);
    api.amd_comgr_destroy_action_info(info);
    if (st != AMD_COMGR_STATUS_SUCCESS)
        return fdt_fail(err, FDT_ERROR, "hip backend: unknown target '%s' (comgr rejects %s)",
                        arch, isa);
    return FDT_OK;
}

static fdt_status rtc_fail(hiprtcResult r, const char *call, fdt_error *err)
{
    return fdt_fail(err, FDT_ERROR, "hip backend: %s failed: %s", call,
                    api.hiprtcGetErrorString(r));
}

/* hiprtc 5.2 leaves the log unterminated, and garbage when its size is 0 or 1. */
static fdt_status compile_log(hiprtcProgram prog, hiprtcResult r, fdt_error *err)
{
    size_t size = 0;
    char *log = NULL;
    fdt_status s;
    if (api.hiprtcGetProgramLogSize(prog, &size) == HIPRTC_SUCCESS && size > 1 &&
        (log = malloc(size + 1)) && api.hiprtcGetProgramLog(prog, log) == HIPRTC_SUCCESS) {
        log[size] = '\0';
        s = fdt_fail(err, FDT_COMPILE_ERROR, "%s", log);
    } else {
        s = fdt_fail(err, FDT_COMPILE_ERROR, "hiprtc: %s (no log)", api.hiprtcGetErrorString(r));
    }
    free(log);
    return s;
}

static fdt_status take_code(hiprtcProgram prog, fdt_code *out, fdt_error *err)
{
    size_t size = 0;
    hiprtcResult r = api.hiprtcGetCodeSize(prog, &size);
    if (r != HIPRTC_SUCCESS)
        return rtc_fail(r, "hiprtcGetCodeSize", err);
    if (size == 0)
        return fdt_fail(err, FDT_ERROR, "hip backend: hiprtc returned an empty code object");
    char *code = malloc(size);
    if (!code)
        return fdt_fail(err, FDT_ERROR, "hip backend: out of memory");
    r = api.hiprtcGetCode(prog, code);
    if (r != HIPRTC_SUCCESS) {
        free(code);
        return rtc_fail(r, "hiprtcGetCode", err);
    }
    out->data = code;
    out->size = size;
    return FDT_OK;
}

static fdt_status run_hiprtc(const char *source, const char **opts, size_t nopts,
                             fdt_code *out, fdt_error *err)
{
    hiprtcProgram prog;
    hiprtcResult r = api.hiprtcCreateProgram(&prog, source, "fdt_kernel.hip", 0, NULL, NULL);
    if (r != HIPRTC_SUCCESS)
        return rtc_fail(r, "hiprtcCreateProgram", err);
    r = api.hiprtcCompileProgram(prog, (int)nopts, opts);
    fdt_status s = r == HIPRTC_SUCCESS ? take_code(prog, out, err) : compile_log(prog, r, err);
    api.hiprtcDestroyProgram(&prog);
    return s;
}

/* Keeps only the code object for arch where hiprtc returned an offload bundle. */
static fdt_status keep_code_object(const char *arch, fdt_code *code, fdt_error *err)
{
    const void *elf;
    size_t size;
    fdt_status s = fdt_amdgpu_unbundle(code->data, code->size, arch, &elf, &size, err);
    if (s != FDT_OK) {
        fdt_code_free(code);
        return s;
    }
    memmove(code->data, elf, size);
    code->size = size;
    return FDT_OK;
}

/* entry goes unused: kernels are extern "C", and load() finds them by that name. */
static fdt_status hip_compile(const char *arch, const char *source, const char *entry,
                              const char *const *defines, size_t ndefines, fdt_code *out,
                              fdt_error *err)
{
    (void)entry;
    fdt_status s = need(RTC, err);
    if (s != FDT_OK)
        return s;
    const char **opts = compile_options(arch, defines, ndefines);
    if (!opts)
        return fdt_fail(err, FDT_ERROR, "hip backend: out of memory");
    pthread_mutex_lock(&libs.rtc_lock);
    s = check_arch(arch, err);
    if (s == FDT_OK)
        s = run_hiprtc(source, opts, ndefines + 3, out, err);
    pthread_mutex_unlock(&libs.rtc_lock);
    free(opts);
    return s == FDT_OK ? keep_code_object(arch, out, err) : s;
}

/* --- the device --- */

struct fdt_backend {
    int device;
    int borrowed;       /* attach()'s: the calling thread's device, never switched */
    hipStream_t stream; /* where launches, fills, copies and events go; NULL: the null stream */
    fdt_device_info info;
    hipEvent_t marks[FDT_TIMER_LAPS + 2]; /* the start, the laps, the end */
    int nmarks;         /* recorded since the start */
};

struct fdt_kernel {
    hipModule_t module;
    hipFunction_t function;
    fdt_resources resources;
};

static void describe(hipError_t e, char *out, size_t len)
{
    const char *name = api.hipGetErrorName(e), *text = api.hipGetErrorString(e);
    /* HIP 5 describes errors by their names; say it once. */
    if (strcmp(name, text) == 0)
        snprintf(out, len, "%s", name);
    else
        snprintf(out, len, "%s (%s)", name, text);
}

static fdt_status check(hipError_t e, fdt_status status, const char *call, fdt_error *err)
{
    char what[256];
    if (e == hipSuccess)
        return FDT_OK;
    describe(e, what, sizeof what);
    return fdt_fail(err, status, "hip backend: %s failed: %s", call, what);
}

/* HIP's current device belongs to the calling thread, and an opened backend may be used
 * from a thread other than the one that opened it. An attached one is the solver's: its
 * thread's device is left as the solver set it (fdtune_kernel.h asks for calls from a
 * thread on that device), or the solver's next hipMalloc would land on ours. */
static fdt_status use_device(fdt_backend *b, fdt_error *err)
{
    if (b->borrowed)
        return FDT_OK;
    return check(api.hipSetDevice(b->device), FDT_ERROR, "hipSetDevice", err);
}

static void *dev(fdt_devptr p)
{
    return (void *)(uintptr_t)p;
}

static fdt_status find_device(int device, fdt_error *err)
{
    char what[256];
    int count = 0;
    const char *call = "hipInit";
    hipError_t e = api.hipInit(0);
    if (e == hipSuccess) {
        call = "hipGetDeviceCount";
        e = api.hipGetDeviceCount(&count);
    }
    if (e != hipSuccess) {
        describe(e, what, sizeof what);
        return fdt_fail(err, FDT_ERROR, "hip backend: no HIP device (%s failed: %s)", call, what);
    }
    if (device < 0 || device >= count)
        return fdt_fail(err, FDT_ERROR, "hip backend: no HIP device %d (%d found)", device,
                        count);
    return FDT_OK;
}

/* Makes device, which must exist, the calling thread's current device: open()'s choice. */
static fdt_status select_device(int device, fdt_error *err)
{
    fdt_status s = find_device(device, err);
    if (s == FDT_OK)
        s = check(api.hipSetDevice(device), FDT_ERROR, "hipSetDevice", err);
    return s;
}

/* The device the calling thread (a solver's) uses, left current as it is. */
static fdt_status thread_device(int *device, fdt_error *err)
{
    fdt_status s = check(api.hipInit(0), FDT_ERROR, "hipInit", err);
    if (s == FDT_OK)
        s = check(api.hipGetDevice(device), FDT_ERROR, "hipGetDevice", err);
    return s;
}

/* The vendor and the target hiprtc compiles for. On AMD gcnArchName names the target with
 * its features ("gfx90a:sramecc+:xnack-"); code compiled for the bare processor runs with
 * either setting. HIP's NVIDIA platform leaves gcnArchName unset (the caller's zeros) and
 * gcnArch 0, and its hiprtc is NVRTC, whose target is sm_<major><minor>. */
static void fill_target(fdt_device_info *in, const hipDeviceProp_t *p)
{
    if (p->gcnArchName[0] == '\0') {
        snprintf(in->vendor, sizeof in->vendor, "NVIDIA");
        snprintf(in->arch, sizeof in->arch, "sm_%d%d", p->major, p->minor);
        return;
    }
    snprintf(in->vendor, sizeof in->vendor, "AMD");
    snprintf(in->arch, sizeof in->arch, "%.*s", (int)strcspn(p->gcnArchName, ":"),
             p->gcnArchName);
}

static void fill_info(fdt_device_info *in, hipDeviceProp_t *p, int driver)
{
    p->name[sizeof p->name - 1] = p->gcnArchName[sizeof p->gcnArchName - 1] = '\0';
    snprintf(in->backend, sizeof in->backend, "hip");
    snprintf(in->name, sizeof in->name, "%.*s", (int)sizeof in->name - 1, p->name);
    fill_target(in, p);
    in->compute_units = p->multiProcessorCount;
    in->memory_bytes = p->totalGlobalMem;
    in->l2_bytes = (uint64_t)p->l2CacheSize;
    format_version("", driver, in->driver_version, sizeof in->driver_version);
    if (hip_compiler_version(in->compiler_version, sizeof in->compiler_version, NULL) != FDT_OK)
        snprintf(in->compiler_version, sizeof in->compiler_version, "unavailable");
    in->warp_size = p->warpSize;
    in->max_threads_per_block = p->maxThreadsPerBlock;
    in->max_shared_per_block = (int)p->sharedMemPerBlock;
    for (int i = 0; i < 3; i++)
        in->max_grid[i] = (unsigned)p->maxGridSize[i];
    in->block_barriers = 1;
}

static fdt_status read_info(fdt_backend *b, fdt_error *err)
{
    hipDeviceProp_t p = {0}; /* fields a platform leaves unset read as zero (fill_target) */
    int driver = 0;
    fdt_status s = check(api.hipGetDeviceProperties(&p, b->device), FDT_ERROR,
                         "hipGetDeviceProperties", err);
    if (s == FDT_OK)
        s = check(api.hipDriverGetVersion(&driver), FDT_ERROR, "hipDriverGetVersion", err);
    if (s == FDT_OK)
        fill_info(&b->info, &p, driver);
    return s;
}

static void hip_close(fdt_backend *b)
{
    use_device(b, NULL);
    for (int i = 0; i < FDT_TIMER_LAPS + 2; i++)
        if (b->marks[i])
            api.hipEventDestroy(b->marks[i]);
    free(b);
}

/* A handle on device, already the calling thread's current device, queuing on stream. */
static fdt_status start(int device, hipStream_t stream, int borrowed, fdt_backend **out,
                        fdt_error *err)
{
    fdt_backend *b = calloc(1, sizeof *b);
    if (!b)
        return fdt_fail(err, FDT_ERROR, "hip backend: out of memory");
    b->device = device;
    b->stream = stream;
    b->borrowed = borrowed;
    fdt_status s = read_info(b, err);
    for (int i = 0; s == FDT_OK && i < FDT_TIMER_LAPS + 2; i++)
        s = check(api.hipEventCreate(&b->marks[i]), FDT_ERROR, "hipEventCreate", err);
    if (s != FDT_OK) {
        hip_close(b);
        return s;
    }
    *out = b;
    return FDT_OK;
}

static fdt_status hip_open(int device, fdt_backend **out, fdt_error *err)
{
    fdt_status s = need(RUNTIME, err);
    if (s == FDT_OK)
        s = select_device(device, err);
    return s == FDT_OK ? start(device, NULL, 0, out, err) : s;
}

static fdt_status hip_attach(int device, void *stream, fdt_backend **out, fdt_error *err)
{
    fdt_status s = need(RUNTIME, err);
    if (s == FDT_OK)
        s = device >= 0 ? select_device(device, err) : thread_device(&device, err);
    return s == FDT_OK ? start(device, stream, 1, out, err) : s;
}

static const fdt_device_info *hip_info(fdt_backend *b)
{
    return &b->info;
}

/* --- kernels --- */

/* A loaded function's resources as the runtime reports them: on HIP's NVIDIA platform,
 * whose code objects are PTX, which the AMDGPU reader cannot read. No scalar registers. */
static fdt_status function_resources(hipFunction_t f, fdt_resources *out, fdt_error *err)
{
    static const struct {
        hipFunction_attribute attribute;
        size_t offset;
    } asked[] = {
        {HIP_FUNC_ATTRIBUTE_NUM_REGS, offsetof(fdt_resources, vgprs)},
        {HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, offsetof(fdt_resources, scratch_bytes)},
        {HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, offsetof(fdt_resources, shared_bytes)},
        {HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(fdt_resources, max_threads)},
    };
    fdt_status s = FDT_OK;
    out->sgprs = -1;
    for (size_t i = 0; s == FDT_OK && i < sizeof asked / sizeof asked[0]; i++)
        s = check(api.hipFuncGetAttribute((int *)((char *)out + asked[i].offset),
                                          asked[i].attribute, f),
                  FDT_ERROR, "hipFuncGetAttribute", err);
    return s;
}

static fdt_status hip_load(fdt_backend *b, const fdt_code *code, const char *entry,
                           fdt_kernel **out, fdt_error *err)
{
    fdt_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return fdt_fail(err, FDT_ERROR, "hip backend: out of memory");
    /* On AMD the code object's own note, read before anything loads it: a damaged one is
     * refused with the reader's message. */
    const int amdgpu = strcmp(b->info.vendor, "NVIDIA") != 0;
    fdt_status s = amdgpu ? fdt_amdgpu_resources(code->data, code->size, entry, &k->resources,
                                                 err)
                          : FDT_OK;
    if (s == FDT_OK)
        s = use_device(b, err);
    if (s == FDT_OK)
        s = check(api.hipModuleLoadData(&k->module, code->data), FDT_LAUNCH_ERROR,
                  "hipModuleLoadData", err);
    if (s == FDT_OK) {
        s = check(api.hipModuleGetFunction(&k->function, k->module, entry), FDT_LAUNCH_ERROR,
                  "hipModuleGetFunction", err);
        if (s == FDT_OK && !amdgpu)
            s = function_resources(k->function, &k->resources, err);
        if (s != FDT_OK)
            api.hipModuleUnload(k->module);
    }
    if (s != FDT_OK) {
        free(k);
        return s;
    }
    *out = k;
    return FDT_OK;
}

static void hip_unload(fdt_backend *b, fdt_kernel *k)
{
    use_device(b, NULL);
    api.hipModuleUnload(k->module);
    free(k);
}

static void hip_resources(fdt_kernel *k, fdt_resources *out)
{
    *out = k->resources;
}

static fdt_status hip_launch(fdt_backend *b, fdt_kernel *k, fdt_dim3 grid, fdt_dim3 block,
                             void **args, fdt_error *err)
{
    fdt_status s = use_device(b, err);
    if (s == FDT_OK)
        s = check(api.hipModuleLaunchKernel(k->function, grid.x, grid.y, grid.z, block.x,
                                            block.y, block.z, 0, b->stream, args, NULL),
                  FDT_LAUNCH_ERROR, "hipModuleLaunchKernel", err);
    return s;
}

static fdt_status hip_sync(fdt_backend *b, fdt_error *err)
{
    fdt_status s = use_device(b, err);
    if (s == FDT_OK)
        s = check(api.hipStreamSynchronize(b->stream), FDT_LAUNCH_ERROR, "hipStreamSynchronize",
                  err);
    return s;
}

/* --- memory --- */

static fdt_status hip_alloc(fdt_backend *b, size_t bytes, fdt_devptr *out, fdt_error *err)
{
    void *p = NULL;
    fdt_status s = use_device(b, err);
    if (s == FDT_OK)
        s = check(api.hipMalloc(&p, bytes), FDT_ERROR, "hipMalloc", err);
    *out = (fdt_devptr)(uintptr_t)p;
    return s;
}

static void hip_free(fdt_backend *b, fdt_devptr p)
{
    use_device(b, NULL);
    api.hipFree(dev(p));
}

static fdt_status hip_upload(fdt_backend *b, fdt_devptr dst, const void *src, size_t bytes,
                             fdt_error *err)
{
    fdt_status s = use_device(b, err);
    if (s == FDT_OK) /* the HIP prototype lacks the const */
        s = check(api.hipMemcpyHtoD(dev(dst), (void *)src, bytes), FDT_ERROR, "hipMemcpyHtoD",
                  err);
    return s;
}

static fdt_status hip_download(fdt_backend *b, void *dst, fdt_devptr src, size_t bytes,
                               fdt_error *err)
{
    fdt_status s = use_device(b, err);
    if (s == FDT_OK)
        s = check(api.hipMemcpyDtoH(dst, dev(src), bytes), FDT_ERROR, "hipMemcpyDtoH", err);
    return s;
}

static fdt_status hip_fill32(fdt_backend *b, fdt_devptr dst, uint32_t value, size_t count,
                             fdt_error *err)
{
    fdt_status s = use_device(b, err);
    if (s == FDT_OK)
        s = check(api.hipMemsetD32Async(dev(dst), (int)value, count, b->stream), FDT_ERROR,
                  "hipMemsetD32Async", err);
    return s;
}

static fdt_status hip_copy(fdt_backend *b, fdt_devptr dst, fdt_devptr src, size_t bytes,
                           fdt_error *err)
{
    fdt_status s = use_device(b, err);
    if (s == FDT_OK)
        s = check(api.hipMemcpyDtoDAsync(dev(dst), dev(src), bytes, b->stream), FDT_ERROR,
                  "hipMemcpyDtoDAsync", err);
    return s;
}

/* --- timing --- */

/* Records the next boundary; the start is boundary 0. */
static fdt_status mark(fdt_backend *b, fdt_error *err)
{
    fdt_status s = use_device(b, err);
    if (s == FDT_OK && b->nmarks >= FDT_TIMER_LAPS + 2)
        s = fdt_fail(err, FDT_ERROR, "hip backend: more than %d laps", FDT_TIMER_LAPS);
    if (s == FDT_OK)
        s = check(api.hipEventRecord(b->marks[b->nmarks++], b->stream), FDT_LAUNCH_ERROR,
                  "hipEventRecord", err);
    return s;
}

static fdt_status hip_timer_start(fdt_backend *b, fdt_error *err)
{
    b->nmarks = 0;
    return mark(b, err);
}

static fdt_status hip_timer_lap(fdt_backend *b, fdt_error *err)
{
    return b->nmarks < FDT_TIMER_LAPS + 1
               ? mark(b, err)
               : fdt_fail(err, FDT_ERROR, "hip backend: more than %d laps", FDT_TIMER_LAPS);
}

/* Polls rather than hipEventSynchronize, which would wait for good on a hung kernel. */
static fdt_status wait_event(hipEvent_t event, double timeout_ms, fdt_error *err)
{
    const struct timespec pause = {0, 50 * 1000};
    const uint64_t start = fdt_monotonic_ns();
    for (;;) {
        hipError_t e = api.hipEventQuery(event);
        if (e != hipErrorNotReady)
            return check(e, FDT_LAUNCH_ERROR, "hipEventQuery", err);
        if ((double)(fdt_monotonic_ns() - start) / 1e6 > timeout_ms)
            return fdt_fail(err, FDT_TIMEOUT, "hip backend: kernel still running after %.0f ms",
                            timeout_ms);
        nanosleep(&pause, NULL);
    }
}

static fdt_status elapsed(fdt_backend *b, int from, int to, double *ms, fdt_error *err)
{
    float f = 0;
    if (from < 0 || to >= b->nmarks)
        return fdt_fail(err, FDT_ERROR, "hip backend: no split %d", from);
    fdt_status s = check(api.hipEventElapsedTime(&f, b->marks[from], b->marks[to]),
                         FDT_LAUNCH_ERROR, "hipEventElapsedTime", err);
    *ms = f;
    return s;
}

static fdt_status hip_timer_stop(fdt_backend *b, double timeout_ms, double *elapsed_ms,
                                 fdt_error *err)
{
    fdt_status s = b->nmarks > 0 ? mark(b, err)
                                 : fdt_fail(err, FDT_ERROR, "hip backend: timer not started");
    if (s == FDT_OK)
        s = wait_event(b->marks[b->nmarks - 1], timeout_ms, err);
    if (s == FDT_OK)
        s = elapsed(b, 0, b->nmarks - 1, elapsed_ms, err);
    return s;
}

static fdt_status hip_timer_split(fdt_backend *b, int i, double *ms, fdt_error *err)
{
    return elapsed(b, i, i + 1, ms, err);
}

const fdt_backend_ops fdt_backend_hip = {
    .name = "hip",
    .compiler_version = hip_compiler_version,
    .compile = hip_compile,
    /* Measured with Debian 12's hiprtc on a 2-core host (test_hip_variants, 1164 compiles):
     * two threads kept one core busy, 679 s; two helper processes, 323 s. */
    .compiles_one_at_a_time = 1,
    .open = hip_open,
    .attach = hip_attach,
    .close = hip_close,
    .info = hip_info,
    .load = hip_load,
    .unload = hip_unload,
    .resources = hip_resources,
    .alloc = hip_alloc,
    .free = hip_free,
    .upload = hip_upload,
    .download = hip_download,
    .fill32 = hip_fill32,
    .copy = hip_copy,
    .launch = hip_launch,
    .sync = hip_sync,
    .timer_start = hip_timer_start,
    .timer_lap = hip_timer_lap,
    .timer_stop = hip_timer_stop,
    .timer_split = hip_timer_split,
};
