/* cuda.c - the NVIDIA backend: NVRTC compiles sources to cubins; the driver API
 * loads, launches and times them on one device's primary context (open()), or on the context
 * a solver's thread already uses (attach()).
 *
 * Both libraries are dlopen'ed (declarations in cuda_api.h), so the build needs no CUDA SDK
 * and a host without a driver gets an error instead of a failed start. NVRTC is loaded once
 * per process, since compile() runs without an open device and from several threads; libcuda
 * is loaded by each open handle. All queued work goes to the handle's stream: for open(), the
 * legacy default stream, so the synchronous copies of upload() and download() (which run
 * there) order after queued kernels, fills and copies. An attached stream gets the same
 * ordering unless it was created non-blocking. */
#include "backends/backend.h"
#include "backends/cuda_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* timer_stop() polls instead of blocking so that a hung kernel cannot hang the tuner;
 * 50 us is small against kernel times and keeps the polling thread mostly asleep. */
#define POLL_NS 50000L

_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "dlsym results are stored as function pointers");

typedef struct symbol {
    const char *name;
    void *slot; /* address of the function pointer to fill */
} symbol;

/* Fills each slot from lib; on a miss returns false with *missing naming the symbol. */
static bool resolve(void *lib, const symbol *syms, size_t n, const char **missing)
{
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(lib, syms[i].name);
        if (!p) {
            *missing = syms[i].name;
            return false;
        }
        /* POSIX lets a dlsym result become a function pointer; memcpy avoids type punning. */
        memcpy(syms[i].slot, &p, sizeof p);
    }
    return true;
}

/* ---- NVRTC: loaded once, shared by every thread that compiles ---- */

typedef struct nvrtc_api {
    nvrtcGetErrorString_fn nvrtcGetErrorString;
    nvrtcVersion_fn nvrtcVersion;
    nvrtcCreateProgram_fn nvrtcCreateProgram;
    nvrtcDestroyProgram_fn nvrtcDestroyProgram;
    nvrtcCompileProgram_fn nvrtcCompileProgram;
    nvrtcGetProgramLogSize_fn nvrtcGetProgramLogSize;
    nvrtcGetProgramLog_fn nvrtcGetProgramLog;
    nvrtcGetCUBINSize_fn nvrtcGetCUBINSize;
    nvrtcGetCUBIN_fn nvrtcGetCUBIN;
} nvrtc_api;

/* Never unloaded: compiles may run until exit, and the library is process-wide anyway. */
static nvrtc_api nvrtc;
static char nvrtc_missing[512]; /* why NVRTC is unusable; empty once loaded */
/* NVRTC 12.4 and later take -minimal: no texture, surface or runtime API declarations for
 * the front end to parse. Our kernels use none of them, and it is most of a compile's time:
 * 17 ms down to 11 ms per zvec variant on the H100's host (bench/results/h100/issue14/nvrtc). */
static int nvrtc_minimal;
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;

static void load_nvrtc(void)
{
    /* The unversioned name first (a dev symlink picks the toolkit a user installed), then
     * the sonames of CUDA 13, 12 and 11 (11.x NVRTC is libnvrtc.so.11.2 from 11.2 on). */
    static const char *const names[] = {
        "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
        "/usr/local/cuda/lib64/libnvrtc.so",
    };
    void *lib = NULL;
    for (size_t i = 0; !lib && i < sizeof names / sizeof names[0]; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(nvrtc_missing, sizeof nvrtc_missing,
                 "libnvrtc not found (tried libnvrtc.so, .so.13, .so.12, .so.11.2 and "
                 "/usr/local/cuda/lib64): %s", dlerror());
        return;
    }
    const symbol syms[] = {
        {"nvrtcGetErrorString", &nvrtc.nvrtcGetErrorString},
        {"nvrtcVersion", &nvrtc.nvrtcVersion},
        {"nvrtcCreateProgram", &nvrtc.nvrtcCreateProgram},
        {"nvrtcDestroyProgram", &nvrtc.nvrtcDestroyProgram},
        {"nvrtcCompileProgram", &nvrtc.nvrtcCompileProgram},
        {"nvrtcGetProgramLogSize", &nvrtc.nvrtcGetProgramLogSize},
        {"nvrtcGetProgramLog", &nvrtc.nvrtcGetProgramLog},
        {"nvrtcGetCUBINSize", &nvrtc.nvrtcGetCUBINSize},
        {"nvrtcGetCUBIN", &nvrtc.nvrtcGetCUBIN},
    };
    const char *missing = NULL;
    if (!resolve(lib, syms, sizeof syms / sizeof syms[0], &missing)) {
        /* nvrtcGetCUBIN arrived in CUDA 11.1, the oldest NVRTC this backend can use. */
        snprintf(nvrtc_missing, sizeof nvrtc_missing,
                 "libnvrtc lacks %s (NVRTC older than 11.1?)", missing);
        dlclose(lib);
        return;
    }
    int major = 0, minor = 0;
    if (nvrtc.nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
        nvrtc_minimal = major > 12 || (major == 12 && minor >= 4);
}

static fdt_status nvrtc_ready(fdt_error *err)
{
    pthread_once(&nvrtc_once, load_nvrtc);
    if (nvrtc_missing[0])
        return fdt_fail(err, FDT_ERROR, "cuda backend: %s", nvrtc_missing);
    return FDT_OK;
}

static fdt_status nvrtc_fail(nvrtcResult r, const char *call, fdt_error *err)
{
    return fdt_fail(err, FDT_ERROR, "cuda backend: %s failed: %s", call,
                    nvrtc.nvrtcGetErrorString(r));
}

static fdt_status cuda_compiler_version(char *out, size_t len, fdt_error *err)
{
    fdt_status st = nvrtc_ready(err);
    if (st != FDT_OK)
        return st;
    int major = 0, minor = 0;
    nvrtcResult r = nvrtc.nvrtcVersion(&major, &minor);
    if (r != NVRTC_SUCCESS)
        return nvrtc_fail(r, "nvrtcVersion", err);
    snprintf(out, len, "NVRTC %d.%d", major, minor);
    return FDT_OK;
}

/* -arch, -std, -minimal where NVRTC has it and one -D per define, pointers and strings in
 * one block for one free(); *count: how many. */
static const char **build_options(const char *arch, const char *const *defines, size_t ndefines,
                                  int *count)
{
    static const char arch_flag[] = "-arch=";
    const size_t fixed = 2 + (size_t)nvrtc_minimal;
    size_t n = ndefines + fixed;
    size_t bytes = n * sizeof(char *) + sizeof arch_flag + strlen(arch);
    for (size_t i = 0; i < ndefines; i++)
        bytes += strlen("-D") + strlen(defines[i]) + 1;
    const char **opts = malloc(bytes);
    if (!opts)
        return NULL;
    char *p = (char *)(opts + n);
    opts[0] = p;
    p += sprintf(p, "%s%s", arch_flag, arch) + 1;
    /* Kernels are extern "C" __global__, so -default-device is not needed; NVRTC optimizes
     * by default and rejects -O3. */
    opts[1] = "-std=c++17";
    if (nvrtc_minimal)
        opts[2] = "-minimal";
    for (size_t i = 0; i < ndefines; i++) {
        opts[i + fixed] = p;
        p += sprintf(p, "-D%s", defines[i]) + 1;
    }
    *count = (int)n;
    return opts;
}

/* The compile failure with as much of the program log as err->msg holds. */
static fdt_status compile_failure(nvrtcProgram prog, const char *arch, nvrtcResult r,
                                  fdt_error *err)
{
    size_t size = 0;
    char *log = NULL;
    if (nvrtc.nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 0)
        log = malloc(size);
    if (log && nvrtc.nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
        log[0] = '\0';
    fdt_status st = fdt_fail(err, FDT_COMPILE_ERROR, "NVRTC (%s): %s\n%s", arch,
                             nvrtc.nvrtcGetErrorString(r), log ? log : "(no log)");
    free(log);
    return st;
}

static fdt_status compile_program(nvrtcProgram prog, const char *arch, const char **opts,
                                  int nopts, fdt_code *out, fdt_error *err)
{
    nvrtcResult r = nvrtc.nvrtcCompileProgram(prog, nopts, opts);
    if (r != NVRTC_SUCCESS)
        return compile_failure(prog, arch, r, err);
    size_t size = 0;
    r = nvrtc.nvrtcGetCUBINSize(prog, &size);
    if (r != NVRTC_SUCCESS)
        return nvrtc_fail(r, "nvrtcGetCUBINSize", err);
    char *cubin = malloc(size);
    if (!cubin)
        return fdt_fail(err, FDT_ERROR, "cuda backend: out of memory for a %zu-byte cubin", size);
    r = nvrtc.nvrtcGetCUBIN(prog, cubin);
    if (r != NVRTC_SUCCESS) {
        free(cubin);
        return nvrtc_fail(r, "nvrtcGetCUBIN", err);
    }
    out->data = cubin;
    out->size = size;
    return FDT_OK;
}

static fdt_status cuda_compile(const char *arch, const char *source, const char *entry,
                               const char *const *defines, size_t ndefines, fdt_code *out,
                               fdt_error *err)
{
    fdt_status st = nvrtc_ready(err);
    if (st != FDT_OK)
        return st;
    /* A virtual compute_XY target would give PTX, not the cubin load() expects. */
    if (strncmp(arch, "sm_", 3) != 0)
        return fdt_fail(err, FDT_ERROR, "cuda backend: arch '%s' is not an sm_XY target", arch);
    int nopts;
    const char **opts = build_options(arch, defines, ndefines, &nopts);
    if (!opts)
        return fdt_fail(err, FDT_ERROR, "cuda backend: out of memory for compile options");
    nvrtcProgram prog;
    /* Named after the entry, so the log's diagnostics say which kernel they are about. */
    nvrtcResult r = nvrtc.nvrtcCreateProgram(&prog, source, entry, 0, NULL, NULL);
    if (r == NVRTC_SUCCESS) {
        st = compile_program(prog, arch, opts, nopts, out, err);
        nvrtc.nvrtcDestroyProgram(&prog);
    } else {
        st = nvrtc_fail(r, "nvrtcCreateProgram", err);
    }
    free(opts);
    return st;
}

/* ---- driver API: one handle per open device ---- */

typedef struct cuda_driver {
    void *lib;
    cuInit_fn cuInit;
    cuDriverGetVersion_fn cuDriverGetVersion;
    cuGetErrorName_fn cuGetErrorName;
    cuGetErrorString_fn cuGetErrorString;
    cuDeviceGet_fn cuDeviceGet;
    cuDeviceGetName_fn cuDeviceGetName;
    cuDeviceGetAttribute_fn cuDeviceGetAttribute;
    cuDeviceTotalMem_v2_fn cuDeviceTotalMem_v2;
    cuDevicePrimaryCtxRetain_fn cuDevicePrimaryCtxRetain;
    cuDevicePrimaryCtxRelease_v2_fn cuDevicePrimaryCtxRelease_v2;
    cuCtxSetCurrent_fn cuCtxSetCurrent;
    cuCtxGetCurrent_fn cuCtxGetCurrent;
    cuCtxGetDevice_fn cuCtxGetDevice;
    cuStreamSynchronize_fn cuStreamSynchronize;
    cuModuleLoadData_fn cuModuleLoadData;
    cuModuleUnload_fn cuModuleUnload;
    cuModuleGetFunction_fn cuModuleGetFunction;
    cuFuncGetAttribute_fn cuFuncGetAttribute;
    cuFuncSetAttribute_fn cuFuncSetAttribute;
    cuModuleGetGlobal_v2_fn cuModuleGetGlobal_v2;
    cuMemAlloc_v2_fn cuMemAlloc_v2;
    cuMemFree_v2_fn cuMemFree_v2;
    cuMemcpyHtoD_v2_fn cuMemcpyHtoD_v2;
    cuMemcpyDtoH_v2_fn cuMemcpyDtoH_v2;
    cuMemcpyDtoDAsync_v2_fn cuMemcpyDtoDAsync_v2;
    cuMemsetD32Async_fn cuMemsetD32Async;
    cuLaunchKernel_fn cuLaunchKernel;
    cuEventCreate_fn cuEventCreate;
    cuEventDestroy_v2_fn cuEventDestroy_v2;
    cuEventRecord_fn cuEventRecord;
    cuEventQuery_fn cuEventQuery;
    cuEventElapsedTime_fn cuEventElapsedTime;
} cuda_driver;

/* The context is current on the thread that opens or attaches; calls are expected there. */
struct fdt_backend {
    cuda_driver cu;
    CUdevice dev;
    CUcontext ctx;   /* retained primary context; NULL until retained, or where borrowed */
    CUstream stream; /* where queued work goes; the plain (not _ptsz) entry points read NULL
                        as the legacy default stream */
    CUevent marks[FDT_TIMER_LAPS + 2]; /* the start, the laps, the end */
    int nmarks;      /* recorded since the start */
    fdt_device_info info;
};

struct fdt_kernel {
    CUmodule module;
    CUfunction fn;
    fdt_resources res; /* read once at load: the attributes cannot change */
    unsigned dynamic_shared; /* bytes every launch gives it (the module's own figure) */
};

/* Faults of a running kernel are sticky: any later call, a copy included, returns them,
 * and they belong to the variant that ran, not to the call that saw them. */
static bool is_kernel_fault(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
        return true;
    default:
        return false;
    }
}

/* FDT_OK for CUDA_SUCCESS; otherwise records status (FDT_LAUNCH_ERROR for a kernel fault)
 * and a message naming the call (fmt) and the CUDA error. */
static fdt_status check(const fdt_backend *b, CUresult r, fdt_status status, fdt_error *err,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static fdt_status check(const fdt_backend *b, CUresult r, fdt_status status, fdt_error *err,
                        const char *fmt, ...)
{
    if (r == CUDA_SUCCESS)
        return FDT_OK;
    char call[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call, sizeof call, fmt, ap);
    va_end(ap);
    /* A driver older than the error code knows neither its name nor its text. */
    char number[32];
    const char *name = NULL, *text = NULL;
    if (b->cu.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name) {
        snprintf(number, sizeof number, "CUresult %d", (int)r);
        name = number;
    }
    if (b->cu.cuGetErrorString(r, &text) != CUDA_SUCCESS || !text)
        text = "no description";
    return fdt_fail(err, is_kernel_fault(r) ? FDT_LAUNCH_ERROR : status,
                    "cuda backend: %s failed: %s (%s)", call, name, text);
}

static fdt_status load_driver(cuda_driver *cu, fdt_error *err)
{
    cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu->lib)
        return fdt_fail(err, FDT_ERROR, "cuda backend: libcuda.so.1 not found: %s", dlerror());
    const symbol syms[] = {
        {"cuInit", &cu->cuInit},
        {"cuDriverGetVersion", &cu->cuDriverGetVersion},
        {"cuGetErrorName", &cu->cuGetErrorName},
        {"cuGetErrorString", &cu->cuGetErrorString},
        {"cuDeviceGet", &cu->cuDeviceGet},
        {"cuDeviceGetName", &cu->cuDeviceGetName},
        {"cuDeviceGetAttribute", &cu->cuDeviceGetAttribute},
        {"cuDeviceTotalMem_v2", &cu->cuDeviceTotalMem_v2},
        {"cuDevicePrimaryCtxRetain", &cu->cuDevicePrimaryCtxRetain},
        {"cuDevicePrimaryCtxRelease_v2", &cu->cuDevicePrimaryCtxRelease_v2},
        {"cuCtxSetCurrent", &cu->cuCtxSetCurrent},
        {"cuCtxGetCurrent", &cu->cuCtxGetCurrent},
        /* Not CUDA 13's cuCtxGetDevice_v2, another function (it takes the context too). */
        {"cuCtxGetDevice", &cu->cuCtxGetDevice},
        {"cuStreamSynchronize", &cu->cuStreamSynchronize},
        {"cuModuleLoadData", &cu->cuModuleLoadData},
        {"cuModuleUnload", &cu->cuModuleUnload},
        {"cuModuleGetFunction", &cu->cuModuleGetFunction},
        {"cuFuncGetAttribute", &cu->cuFuncGetAttribute},
        {"cuFuncSetAttribute", &cu->cuFuncSetAttribute},
        {"cuModuleGetGlobal_v2", &cu->cuModuleGetGlobal_v2},
        {"cuMemAlloc_v2", &cu->cuMemAlloc_v2},
        {"cuMemFree_v2", &cu->cuMemFree_v2},
        {"cuMemcpyHtoD_v2", &cu->cuMemcpyHtoD_v2},
        {"cuMemcpyDtoH_v2", &cu->cuMemcpyDtoH_v2},
        {"cuMemcpyDtoDAsync_v2", &cu->cuMemcpyDtoDAsync_v2},
        {"cuMemsetD32Async", &cu->cuMemsetD32Async},
        {"cuLaunchKernel", &cu->cuLaunchKernel},
        {"cuEventCreate", &cu->cuEventCreate},
        {"cuEventDestroy_v2", &cu->cuEventDestroy_v2},
        {"cuEventRecord", &cu->cuEventRecord},
        {"cuEventQuery", &cu->cuEventQuery},
        /* The original symbol, not CUDA 12.8's _v2 (same signature), so older drivers work. */
        {"cuEventElapsedTime", &cu->cuEventElapsedTime},
    };
    const char *missing = NULL;
    if (!resolve(cu->lib, syms, sizeof syms / sizeof syms[0], &missing))
        return fdt_fail(err, FDT_ERROR, "cuda backend: libcuda.so.1 lacks %s (driver too old?)",
                        missing);
    return FDT_OK;
}

/* How a handle gets its context: open() and attach() differ in this step only. */
typedef fdt_status (*context_fn)(fdt_backend *b, int device, fdt_error *err);

/* open()'s: device's primary context, retained until close() and made current. */
static fdt_status use_primary(fdt_backend *b, int device, fdt_error *err)
{
    fdt_status st = check(b, b->cu.cuDeviceGet(&b->dev, device), FDT_ERROR, err,
                          "cuDeviceGet(%d)", device);
    if (st == FDT_OK)
        st = check(b, b->cu.cuDevicePrimaryCtxRetain(&b->ctx, b->dev), FDT_ERROR, err,
                   "cuDevicePrimaryCtxRetain");
    if (st == FDT_OK)
        st = check(b, b->cu.cuCtxSetCurrent(b->ctx), FDT_ERROR, err, "cuCtxSetCurrent");
    return st;
}

/* attach()'s: the context current on the calling thread where it is on the device asked
 * for (any, with device < 0), borrowed as it is: the solver owns it, so it is neither
 * retained nor released. Without one, open()'s choice, device < 0 standing for 0. */
static fdt_status use_current(fdt_backend *b, int device, fdt_error *err)
{
    CUcontext current = NULL;
    CUdevice current_dev = 0, wanted = 0;
    fdt_status st = check(b, b->cu.cuCtxGetCurrent(&current), FDT_ERROR, err, "cuCtxGetCurrent");
    if (st == FDT_OK && current)
        st = check(b, b->cu.cuCtxGetDevice(&current_dev), FDT_ERROR, err, "cuCtxGetDevice");
    /* A CUdevice is a handle: the ordinal's own comes from cuDeviceGet. */
    if (st == FDT_OK && current && device >= 0)
        st = check(b, b->cu.cuDeviceGet(&wanted, device), FDT_ERROR, err, "cuDeviceGet(%d)",
                   device);
    if (st != FDT_OK)
        return st;
    if (current && (device < 0 || current_dev == wanted)) {
        b->dev = current_dev;
        return FDT_OK;
    }
    return use_primary(b, device < 0 ? 0 : device, err);
}

static fdt_status start_device(fdt_backend *b, int device, context_fn use_context,
                               fdt_error *err)
{
    CUresult r = b->cu.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE)
        return fdt_fail(err, FDT_ERROR, "cuda backend: no CUDA device");
    fdt_status st = check(b, r, FDT_ERROR, err, "cuInit");
    if (st == FDT_OK)
        st = use_context(b, device, err);
    for (int i = 0; st == FDT_OK && i < FDT_TIMER_LAPS + 2; i++)
        st = check(b, b->cu.cuEventCreate(&b->marks[i], CU_EVENT_DEFAULT), FDT_ERROR, err,
                   "cuEventCreate");
    return st;
}

static fdt_status read_attributes(fdt_backend *b, fdt_error *err)
{
    fdt_device_info *in = &b->info;
    int major = 0, minor = 0, l2 = 0, grid[3] = {0};
    const struct {
        CUdevice_attribute attr;
        int *value;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &in->compute_units},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &in->warp_size},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &in->max_threads_per_block},
        /* The static limit (48 KiB); more needs dynamic shared memory and an opt-in. */
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &in->max_shared_per_block},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &grid[0]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &grid[1]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &grid[2]},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        fdt_status st = check(b, b->cu.cuDeviceGetAttribute(attrs[i].value, attrs[i].attr, b->dev),
                              FDT_ERROR, err, "cuDeviceGetAttribute(%d)", (int)attrs[i].attr);
        if (st != FDT_OK)
            return st;
    }
    snprintf(in->arch, sizeof in->arch, "sm_%d%d", major, minor);
    in->l2_persist = major >= 8; /* PTX prefetch.global.L2::evict_last and applypriority */
    in->l2_bytes = (uint64_t)l2;
    for (int i = 0; i < 3; i++)
        in->max_grid[i] = (unsigned)grid[i];
    return FDT_OK;
}

static fdt_status read_info(fdt_backend *b, fdt_error *err)
{
    fdt_device_info *in = &b->info;
    snprintf(in->backend, sizeof in->backend, "cuda");
    snprintf(in->vendor, sizeof in->vendor, "NVIDIA");
    in->block_barriers = 1;
    size_t memory = 0;
    int version = 0;
    fdt_status st = check(b, b->cu.cuDeviceGetName(in->name, (int)sizeof in->name, b->dev),
                          FDT_ERROR, err, "cuDeviceGetName");
    if (st == FDT_OK)
        st = check(b, b->cu.cuDeviceTotalMem_v2(&memory, b->dev), FDT_ERROR, err,
                   "cuDeviceTotalMem_v2");
    if (st == FDT_OK)
        st = check(b, b->cu.cuDriverGetVersion(&version), FDT_ERROR, err, "cuDriverGetVersion");
    if (st == FDT_OK)
        st = read_attributes(b, err);
    if (st != FDT_OK)
        return st;
    in->memory_bytes = memory;
    /* The driver encodes 13.0 as 13000. */
    snprintf(in->driver_version, sizeof in->driver_version, "CUDA driver %d.%d",
             version / 1000, version % 1000 / 10);
    /* A device without NVRTC can still be listed and measured; compile() says why it fails. */
    if (cuda_compiler_version(in->compiler_version, sizeof in->compiler_version, NULL) != FDT_OK)
        snprintf(in->compiler_version, sizeof in->compiler_version, "NVRTC unavailable");
    return FDT_OK;
}

static void cuda_close(fdt_backend *b)
{
    for (int i = 0; i < FDT_TIMER_LAPS + 2; i++)
        if (b->marks[i])
            b->cu.cuEventDestroy_v2(b->marks[i]);
    if (b->ctx)
        b->cu.cuDevicePrimaryCtxRelease_v2(b->dev);
    if (b->cu.lib)
        dlclose(b->cu.lib);
    free(b);
}

static fdt_status start(int device, CUstream stream, context_fn use_context, fdt_backend **out,
                        fdt_error *err)
{
    fdt_backend *b = calloc(1, sizeof *b);
    if (!b)
        return fdt_fail(err, FDT_ERROR, "cuda backend: out of memory");
    b->stream = stream;
    fdt_status st = load_driver(&b->cu, err);
    if (st == FDT_OK)
        st = start_device(b, device, use_context, err);
    if (st == FDT_OK)
        st = read_info(b, err);
    if (st != FDT_OK) {
        cuda_close(b);
        return st;
    }
    *out = b;
    return FDT_OK;
}

static fdt_status cuda_open(int device, fdt_backend **out, fdt_error *err)
{
    return start(device, NULL, use_primary, out, err);
}

static fdt_status cuda_attach(int device, void *stream, fdt_backend **out, fdt_error *err)
{
    return start(device, stream, use_current, out, err);
}

static const fdt_device_info *cuda_info(fdt_backend *b)
{
    return &b->info;
}

static fdt_status read_resources(fdt_backend *b, fdt_kernel *k, fdt_error *err)
{
    const struct {
        CUfunction_attribute attr;
        int *value;
    } attrs[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &k->res.vgprs},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &k->res.scratch_bytes},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &k->res.shared_bytes},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &k->res.max_threads},
    };
    k->res.sgprs = -1; /* NVIDIA has no scalar register file */
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        fdt_status st = check(b, b->cu.cuFuncGetAttribute(attrs[i].value, attrs[i].attr, k->fn),
                              FDT_ERROR, err, "cuFuncGetAttribute(%d)", (int)attrs[i].attr);
        if (st != FDT_OK)
            return st;
    }
    return FDT_OK;
}

/* Every module the tuner builds declares fdt_dynamic_shared (kernels_src/common.h): the
 * dynamic shared memory its launches must give, 0 but for the ring, whose function must opt
 * in past 48 KB. The figure comes from the module itself, so every loader (the worker,
 * libfdtune) launches it alike; a module without it (a solver's own, or one compiled before
 * it existed) gives none. Its resources count it with the static bytes. */
static fdt_status opt_in_dynamic_shared(fdt_backend *b, fdt_kernel *k, fdt_error *err)
{
    CUdeviceptr at;
    size_t size;
    unsigned bytes = 0;
    const CUresult found = b->cu.cuModuleGetGlobal_v2(&at, &size, k->module,
                                                      "fdt_dynamic_shared");
    if (found == CUDA_ERROR_NOT_FOUND)
        return FDT_OK;
    fdt_status st = check(b, found, FDT_ERROR, err, "cuModuleGetGlobal_v2(fdt_dynamic_shared)");
    if (st == FDT_OK && size != sizeof bytes)
        st = fdt_fail(err, FDT_ERROR, "cuda backend: fdt_dynamic_shared is %zu bytes, not %zu",
                      size, sizeof bytes);
    if (st == FDT_OK)
        st = check(b, b->cu.cuMemcpyDtoH_v2(&bytes, at, sizeof bytes), FDT_ERROR, err,
                   "cuMemcpyDtoH_v2(fdt_dynamic_shared)");
    if (st == FDT_OK && bytes > 0)
        st = check(b,
                   b->cu.cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            (int)bytes),
                   FDT_ERROR, err, "cuFuncSetAttribute(%u bytes of dynamic shared memory)", bytes);
    if (st == FDT_OK) {
        k->dynamic_shared = bytes;
        k->res.shared_bytes += (int)bytes;
    }
    return st;
}

static void cuda_unload(fdt_backend *b, fdt_kernel *k)
{
    if (k->module)
        b->cu.cuModuleUnload(k->module);
    free(k);
}

static fdt_status cuda_load(fdt_backend *b, const fdt_code *code, const char *entry,
                            fdt_kernel **out, fdt_error *err)
{
    fdt_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return fdt_fail(err, FDT_ERROR, "cuda backend: out of memory");
    fdt_status st = check(b, b->cu.cuModuleLoadData(&k->module, code->data), FDT_ERROR, err,
                          "cuModuleLoadData (%zu-byte cubin)", code->size);
    if (st == FDT_OK)
        st = check(b, b->cu.cuModuleGetFunction(&k->fn, k->module, entry), FDT_ERROR, err,
                   "cuModuleGetFunction(%s)", entry);
    if (st == FDT_OK)
        st = read_resources(b, k, err);
    if (st == FDT_OK)
        st = opt_in_dynamic_shared(b, k, err);
    if (st != FDT_OK) {
        cuda_unload(b, k);
        return st;
    }
    *out = k;
    return FDT_OK;
}

static void cuda_resources(fdt_kernel *k, fdt_resources *out)
{
    *out = k->res;
}

static fdt_status cuda_alloc(fdt_backend *b, size_t bytes, fdt_devptr *out, fdt_error *err)
{
    CUdeviceptr p = 0;
    fdt_status st = check(b, b->cu.cuMemAlloc_v2(&p, bytes), FDT_ERROR, err,
                          "cuMemAlloc_v2(%zu bytes)", bytes);
    if (st == FDT_OK)
        *out = p;
    return st;
}

static void cuda_free(fdt_backend *b, fdt_devptr p)
{
    if (p)
        b->cu.cuMemFree_v2(p);
}

static fdt_status cuda_upload(fdt_backend *b, fdt_devptr dst, const void *src, size_t bytes,
                              fdt_error *err)
{
    return check(b, b->cu.cuMemcpyHtoD_v2(dst, src, bytes), FDT_ERROR, err,
                 "cuMemcpyHtoD_v2(%zu bytes)", bytes);
}

static fdt_status cuda_download(fdt_backend *b, void *dst, fdt_devptr src, size_t bytes,
                                fdt_error *err)
{
    return check(b, b->cu.cuMemcpyDtoH_v2(dst, src, bytes), FDT_ERROR, err,
                 "cuMemcpyDtoH_v2(%zu bytes)", bytes);
}

static fdt_status cuda_fill32(fdt_backend *b, fdt_devptr dst, uint32_t value, size_t count,
                              fdt_error *err)
{
    return check(b, b->cu.cuMemsetD32Async(dst, value, count, b->stream), FDT_ERROR, err,
                 "cuMemsetD32Async(%zu words)", count);
}

static fdt_status cuda_copy(fdt_backend *b, fdt_devptr dst, fdt_devptr src, size_t bytes,
                            fdt_error *err)
{
    return check(b, b->cu.cuMemcpyDtoDAsync_v2(dst, src, bytes, b->stream), FDT_ERROR, err,
                 "cuMemcpyDtoDAsync_v2(%zu bytes)", bytes);
}

static fdt_status cuda_launch(fdt_backend *b, fdt_kernel *k, fdt_dim3 grid, fdt_dim3 block,
                              void **args, fdt_error *err)
{
    CUresult r = b->cu.cuLaunchKernel(k->fn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                      k->dynamic_shared, b->stream, args, NULL);
    return check(b, r, FDT_LAUNCH_ERROR, err, "cuLaunchKernel(grid %ux%ux%u, block %ux%ux%u)",
                 grid.x, grid.y, grid.z, block.x, block.y, block.z);
}

static fdt_status cuda_sync(fdt_backend *b, fdt_error *err)
{
    return check(b, b->cu.cuStreamSynchronize(b->stream), FDT_ERROR, err, "cuStreamSynchronize");
}

/* Records the next boundary; the start is boundary 0. */
static fdt_status mark(fdt_backend *b, fdt_error *err)
{
    if (b->nmarks >= FDT_TIMER_LAPS + 2)
        return fdt_fail(err, FDT_ERROR, "cuda backend: more than %d laps", FDT_TIMER_LAPS);
    return check(b, b->cu.cuEventRecord(b->marks[b->nmarks++], b->stream), FDT_ERROR, err,
                 "cuEventRecord");
}

static fdt_status cuda_timer_start(fdt_backend *b, fdt_error *err)
{
    b->nmarks = 0;
    return mark(b, err);
}

static fdt_status cuda_timer_lap(fdt_backend *b, fdt_error *err)
{
    return b->nmarks < FDT_TIMER_LAPS + 1
               ? mark(b, err)
               : fdt_fail(err, FDT_ERROR, "cuda backend: more than %d laps", FDT_TIMER_LAPS);
}

/* Waits for ev at most timeout_ms; a fault of the work before it is a launch error. */
static fdt_status wait_event(fdt_backend *b, CUevent ev, double timeout_ms, fdt_error *err)
{
    const struct timespec pause = {0, POLL_NS};
    double deadline_ns = (double)fdt_monotonic_ns() + timeout_ms * 1e6;
    for (;;) {
        CUresult r = b->cu.cuEventQuery(ev);
        if (r != CUDA_ERROR_NOT_READY)
            return check(b, r, FDT_LAUNCH_ERROR, err, "cuEventQuery(end)");
        if ((double)fdt_monotonic_ns() >= deadline_ns)
            return fdt_fail(err, FDT_TIMEOUT,
                            "cuda backend: queued work still running after %g ms", timeout_ms);
        nanosleep(&pause, NULL);
    }
}

static fdt_status elapsed(fdt_backend *b, int from, int to, double *ms, fdt_error *err)
{
    float f = 0.0f;
    if (from < 0 || to >= b->nmarks)
        return fdt_fail(err, FDT_ERROR, "cuda backend: no split %d", from);
    fdt_status st = check(b, b->cu.cuEventElapsedTime(&f, b->marks[from], b->marks[to]),
                          FDT_ERROR, err, "cuEventElapsedTime");
    if (st == FDT_OK)
        *ms = f;
    return st;
}

static fdt_status cuda_timer_stop(fdt_backend *b, double timeout_ms, double *elapsed_ms,
                                  fdt_error *err)
{
    fdt_status st = b->nmarks > 0 ? mark(b, err)
                                  : fdt_fail(err, FDT_ERROR, "cuda backend: timer not started");
    if (st == FDT_OK)
        st = wait_event(b, b->marks[b->nmarks - 1], timeout_ms, err);
    if (st == FDT_OK)
        st = elapsed(b, 0, b->nmarks - 1, elapsed_ms, err);
    return st;
}

static fdt_status cuda_timer_split(fdt_backend *b, int i, double *ms, fdt_error *err)
{
    return elapsed(b, i, i + 1, ms, err);
}

const fdt_backend_ops fdt_backend_cuda = {
    .name = "cuda",
    .compiler_version = cuda_compiler_version,
    .compile = cuda_compile,
    /* Measured: 16 threads of one process compile no faster than one. */
    .compiles_one_at_a_time = 1,
    .open = cuda_open,
    .attach = cuda_attach,
    .close = cuda_close,
    .info = cuda_info,
    .load = cuda_load,
    .unload = cuda_unload,
    .resources = cuda_resources,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .fill32 = cuda_fill32,
    .copy = cuda_copy,
    .launch = cuda_launch,
    .sync = cuda_sync,
    .timer_start = cuda_timer_start,
    .timer_lap = cuda_timer_lap,
    .timer_stop = cuda_timer_stop,
    .timer_split = cuda_timer_split,
};
