/* hip_nvidia.c - a test-only HIP platform for NVIDIA GPUs: the HIP runtime and hiprtc entry
 * points that tuner/backends/hip.c looks up (its API list, exactly: exports.map), each mapped
 * onto the CUDA driver API and NVRTC as HIP's own NVIDIA platform maps it (Debian 12's
 * libamdhip64-dev 5.2.3, hip/nvidia_detail/nvidia_hip_runtime_api.h and nvidia_hiprtc.h).
 * Built as libamdhip64.so where CUDA is installed (`make hip-nvidia`; never installed, never
 * in a release) and found first on LD_LIBRARY_PATH, so the hip backend runs unchanged on an
 * NVIDIA GPU: dlopen, symbol lookup, module load, argument packing, launch, events, copies,
 * device properties, errors and faults are our code's own, only the platform under them is
 * NVIDIA's (docs/amd.md says what that run does not cover).
 *
 * Why not those headers themselves: HIP 5.2's NVIDIA headers predate CUDA 12 and do not
 * compile against CUDA 13 (../shared notes: cudaDeviceProp lost clockRate and more), and
 * HIP's AMD types (hipDeviceProp_t's layout, which hip.c reads) and CUDA's runtime vector
 * types cannot share a translation unit. So this file includes the AMD-platform HIP headers
 * (the ABI hip.c was built against) with cuda.h and nvrtc.h alone, and where the reference
 * calls the CUDA runtime it calls the driver API the runtime is built on:
 *
 *   HIP call               reference (nvidia_detail)     here
 *   hipInit                cuInit                        cuInit
 *   hipGetDeviceCount      cudaGetDeviceCount            cuDeviceGetCount
 *   hipSetDevice           cudaSetDevice                 the device's primary context,
 *                                                        retained once, made current
 *   hipGetDevice           cudaGetDevice                 cuCtxGetDevice; 0 with no context
 *                                                        current (cudart's default device)
 *   hipGetDeviceProperties cudaGetDeviceProperties       cuDeviceGetAttribute per field;
 *                          (fields copied; gcnArchName   gcnArchName likewise left alone,
 *                          left alone, gcnArch = 0)      gcnArch = 0
 *   hipDriverGetVersion    cudaDriverGetVersion          cuDriverGetVersion (CUDA numbering)
 *   hipRuntimeGetVersion   cudaRuntimeGetVersion         NVRTC's version, CUDA numbering
 *                                                        (there is no runtime here)
 *   hipMalloc, hipFree     cudaMalloc, cudaFree          cuMemAlloc, cuMemFree, in the
 *                                                        current context or device 0's
 *   hipMemcpyHtoD/DtoH, hipMemcpyDtoDAsync, hipMemsetD32Async, hipModuleLoadData,
 *   hipModuleGetFunction, hipModuleUnload, hipModuleLaunchKernel, hipFuncGetAttribute:
 *                          the cu* call of the same name, as here
 *   hipStreamSynchronize, hipEvent*: cudaStreamSynchronize, cudaEvent*: their cu* calls,
 *                          in the current context or device 0's
 *   hipGetErrorName/String cudaGetErrorName/String       cuGetErrorName/String
 *   hiprtc*                nvrtc* (hiprtcGetCode: PTX)   nvrtc*, PTX; options translated
 *                                                        (translate_option)
 * What the kernels see differs as HIP's NVIDIA platform makes it differ: hiprtc is NVRTC,
 * which defines __CUDACC_RTC__ and not __HIPCC_RTC__, so kernels_src/common.h takes its
 * CUDA branches (nt stores through __stcs, not __builtin_nontemporal_store; CUDA's vector
 * types; FDT_WPE, amdgpu_waves_per_eu, ignored), and the device's warpSize is 32: AMD's
 * 64-wide wavefronts and the AMD branches run nowhere here (CI compiles them for gfx90a and
 * gfx906; docs/amd.md, "What the NVIDIA-platform run does not cover").
 *
 * Errors map by meaning, as the reference maps them, for the errors listed in errors[]
 * below: those a module load, a launch, a copy, an event or a device query can raise; any
 * other becomes hipErrorUnknown (the reference names a few dozen more, which hip.c never
 * tells apart). Names are the driver's (CUDA_ERROR_ILLEGAL_ADDRESS), where the reference
 * gives the runtime's (cudaErrorIllegalAddress). */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include <cuda.h>
#include <nvrtc.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- errors --- */

static const struct {
    CUresult cu;
    hipError_t hip;
} errors[] = {
    {CUDA_SUCCESS, hipSuccess},
    {CUDA_ERROR_INVALID_VALUE, hipErrorInvalidValue},
    {CUDA_ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory},
    {CUDA_ERROR_NOT_INITIALIZED, hipErrorNotInitialized},
    {CUDA_ERROR_DEINITIALIZED, hipErrorDeinitialized},
    {CUDA_ERROR_NO_DEVICE, hipErrorNoDevice},
    {CUDA_ERROR_INVALID_DEVICE, hipErrorInvalidDevice},
    {CUDA_ERROR_INVALID_IMAGE, hipErrorInvalidImage},
    {CUDA_ERROR_INVALID_CONTEXT, hipErrorInvalidContext},
    {CUDA_ERROR_CONTEXT_ALREADY_CURRENT, hipErrorContextAlreadyCurrent},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, hipErrorNoBinaryForGpu},
    {CUDA_ERROR_INVALID_PTX, hipErrorInvalidKernelFile},
    {CUDA_ERROR_INVALID_SOURCE, hipErrorInvalidSource},
    {CUDA_ERROR_FILE_NOT_FOUND, hipErrorFileNotFound},
    {CUDA_ERROR_INVALID_HANDLE, hipErrorInvalidHandle},
    {CUDA_ERROR_NOT_FOUND, hipErrorNotFound},
    {CUDA_ERROR_NOT_READY, hipErrorNotReady},
    {CUDA_ERROR_ILLEGAL_ADDRESS, hipErrorIllegalAddress},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, hipErrorLaunchOutOfResources},
    {CUDA_ERROR_LAUNCH_TIMEOUT, hipErrorLaunchTimeOut},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, hipErrorContextIsDestroyed},
    {CUDA_ERROR_ASSERT, hipErrorAssert},
    {CUDA_ERROR_LAUNCH_FAILED, hipErrorLaunchFailure},
    {CUDA_ERROR_NOT_SUPPORTED, hipErrorNotSupported},
    {CUDA_ERROR_UNKNOWN, hipErrorUnknown},
};
#define NERRORS (sizeof errors / sizeof errors[0])

static hipError_t from_cu(CUresult r)
{
    for (size_t i = 0; i < NERRORS; i++)
        if (errors[i].cu == r)
            return errors[i].hip;
    return hipErrorUnknown;
}

static CUresult to_cu(hipError_t e)
{
    for (size_t i = 0; i < NERRORS; i++)
        if (errors[i].hip == e)
            return errors[i].cu;
    return CUDA_ERROR_UNKNOWN;
}

const char *hipGetErrorName(hipError_t e)
{
    const char *s = NULL;
    return cuGetErrorName(to_cu(e), &s) == CUDA_SUCCESS && s ? s : "unrecognized error";
}

const char *hipGetErrorString(hipError_t e)
{
    const char *s = NULL;
    return cuGetErrorString(to_cu(e), &s) == CUDA_SUCCESS && s ? s : "unrecognized error";
}

/* --- devices and contexts --- */

/* cudaSetDevice retains a device's primary context once per process; so does this. */
static struct {
    pthread_mutex_t lock;
    int count;
    CUcontext *primary;
} devices = {.lock = PTHREAD_MUTEX_INITIALIZER};

static CUresult primary_context(int device, CUcontext *out)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&devices.lock);
    if (!devices.primary) {
        r = cuDeviceGetCount(&devices.count);
        if (r == CUDA_SUCCESS && !(devices.primary = calloc((size_t)devices.count + 1,
                                                            sizeof *devices.primary)))
            r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (r == CUDA_SUCCESS && (device < 0 || device >= devices.count))
        r = CUDA_ERROR_INVALID_DEVICE;
    if (r == CUDA_SUCCESS && !devices.primary[device]) {
        CUdevice d;
        r = cuDeviceGet(&d, device);
        if (r == CUDA_SUCCESS)
            r = cuDevicePrimaryCtxRetain(&devices.primary[device], d);
    }
    if (r == CUDA_SUCCESS)
        *out = devices.primary[device];
    pthread_mutex_unlock(&devices.lock);
    return r;
}

static CUresult set_device(int device)
{
    CUcontext ctx;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS)
        r = primary_context(device, &ctx);
    return r == CUDA_SUCCESS ? cuCtxSetCurrent(ctx) : r;
}

/* The CUDA runtime's calls start device 0's primary context in a thread that has none. */
static CUresult runtime_context(void)
{
    CUcontext ctx = NULL;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS)
        r = cuCtxGetCurrent(&ctx);
    return r == CUDA_SUCCESS && !ctx ? set_device(0) : r;
}

hipError_t hipInit(unsigned int flags)
{
    return from_cu(cuInit(flags));
}

hipError_t hipGetDeviceCount(int *count)
{
    CUresult r = cuInit(0);
    return from_cu(r == CUDA_SUCCESS ? cuDeviceGetCount(count) : r);
}

hipError_t hipSetDevice(int device)
{
    return from_cu(set_device(device));
}

hipError_t hipGetDevice(int *device)
{
    CUcontext ctx = NULL;
    CUdevice d = 0;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS)
        r = cuCtxGetCurrent(&ctx);
    if (r == CUDA_SUCCESS && ctx)
        r = cuCtxGetDevice(&d);
    if (r == CUDA_SUCCESS)
        *device = d;
    return from_cu(r);
}

static CUresult attribute(int *out, CUdevice_attribute a, CUdevice d, CUresult r)
{
    return r == CUDA_SUCCESS ? cuDeviceGetAttribute(out, a, d) : r;
}

/* The fields the reference fills, of those CUDA 13 still has; the others keep what the
 * caller's struct held, as there (the reference never writes gcnArchName). */
hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int device)
{
    CUdevice d;
    int shared = 0, l2 = 0;
    size_t memory = 0;
    if (!p)
        return hipErrorInvalidValue;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGet(&d, device);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGetName(p->name, (int)sizeof p->name, d);
    if (r == CUDA_SUCCESS)
        r = cuDeviceTotalMem(&memory, d);
    r = attribute(&shared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, d, r);
    r = attribute(&p->regsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, d, r);
    r = attribute(&p->warpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE, d, r);
    r = attribute(&p->maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d, r);
    r = attribute(&p->maxThreadsDim[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, d, r);
    r = attribute(&p->maxThreadsDim[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, d, r);
    r = attribute(&p->maxThreadsDim[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, d, r);
    r = attribute(&p->maxGridSize[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, d, r);
    r = attribute(&p->maxGridSize[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, d, r);
    r = attribute(&p->maxGridSize[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, d, r);
    r = attribute(&p->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d, r);
    r = attribute(&p->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d, r);
    r = attribute(&p->multiProcessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d, r);
    r = attribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d, r);
    if (r == CUDA_SUCCESS) {
        p->totalGlobalMem = memory;
        p->sharedMemPerBlock = (size_t)shared;
        p->l2CacheSize = l2;
        p->gcnArch = 0; /* "Not a GCN arch" */
    }
    return from_cu(r);
}

hipError_t hipDriverGetVersion(int *version)
{
    return from_cu(cuDriverGetVersion(version));
}

hipError_t hipRuntimeGetVersion(int *version)
{
    int major, minor;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return hipErrorUnknown;
    *version = major * 1000 + minor * 10;
    return hipSuccess;
}

/* --- memory --- */

static CUdeviceptr dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

hipError_t hipMalloc(void **ptr, size_t size)
{
    CUdeviceptr p = 0;
    CUresult r = runtime_context();
    if (r == CUDA_SUCCESS)
        r = cuMemAlloc(&p, size);
    *ptr = (void *)(uintptr_t)p;
    return from_cu(r);
}

hipError_t hipFree(void *ptr)
{
    CUresult r = runtime_context();
    return from_cu(r == CUDA_SUCCESS && ptr ? cuMemFree(dptr(ptr)) : r);
}

hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t size)
{
    return from_cu(cuMemcpyHtoD(dptr(dst), src, size));
}

hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t size)
{
    return from_cu(cuMemcpyDtoH(dst, dptr(src), size));
}

hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t size,
                                     hipStream_t stream)
{
    return from_cu(cuMemcpyDtoDAsync(dptr(dst), dptr(src), size, (CUstream)stream));
}

hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count,
                                    hipStream_t stream)
{
    return from_cu(cuMemsetD32Async(dptr(dst), (unsigned int)value, count, (CUstream)stream));
}

/* --- modules and launches --- */

hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
    return from_cu(cuModuleLoadData((CUmodule *)module, image));
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module,
                                       const char *name)
{
    return from_cu(cuModuleGetFunction((CUfunction *)function, (CUmodule)module, name));
}

hipError_t hipModuleUnload(hipModule_t module)
{
    return from_cu(cuModuleUnload((CUmodule)module));
}

/* hipFunction_attribute lists its values in CUfunction_attribute's order, from 0. */
hipError_t hipFuncGetAttribute(int *value, hipFunction_attribute attribute,
                                      hipFunction_t function)
{
    return from_cu(cuFuncGetAttribute(value, (CUfunction_attribute)attribute,
                                      (CUfunction)function));
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy,
                                        unsigned int gz, unsigned int bx, unsigned int by,
                                        unsigned int bz, unsigned int shared_bytes,
                                        hipStream_t stream, void **params, void **extra)
{
    return from_cu(cuLaunchKernel((CUfunction)f, gx, gy, gz, bx, by, bz, shared_bytes,
                                  (CUstream)stream, params, extra));
}

hipError_t hipStreamSynchronize(hipStream_t stream)
{
    CUresult r = runtime_context();
    return from_cu(r == CUDA_SUCCESS ? cuStreamSynchronize((CUstream)stream) : r);
}

/* --- events --- */

hipError_t hipEventCreate(hipEvent_t *event)
{
    CUresult r = runtime_context();
    return from_cu(r == CUDA_SUCCESS ? cuEventCreate((CUevent *)event, CU_EVENT_DEFAULT) : r);
}

hipError_t hipEventDestroy(hipEvent_t event)
{
    CUresult r = runtime_context();
    return from_cu(r == CUDA_SUCCESS ? cuEventDestroy((CUevent)event) : r);
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
    CUresult r = runtime_context();
    return from_cu(r == CUDA_SUCCESS ? cuEventRecord((CUevent)event, (CUstream)stream) : r);
}

hipError_t hipEventQuery(hipEvent_t event)
{
    CUresult r = runtime_context();
    return from_cu(r == CUDA_SUCCESS ? cuEventQuery((CUevent)event) : r);
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
    CUresult r = runtime_context();
    return from_cu(r == CUDA_SUCCESS ? cuEventElapsedTime(ms, (CUevent)start, (CUevent)stop) : r);
}

/* --- hiprtc --- */

static hiprtcResult from_nvrtc(nvrtcResult r)
{
    /* hiprtcResult numbers its values as nvrtcResult does, 0 to 11 (nvidia_hiprtc.h). */
    return r <= NVRTC_ERROR_INTERNAL_ERROR ? (hiprtcResult)r : HIPRTC_ERROR_INTERNAL_ERROR;
}

const char *hiprtcGetErrorString(hiprtcResult r)
{
    return nvrtcGetErrorString((nvrtcResult)r);
}

hiprtcResult hiprtcVersion(int *major, int *minor)
{
    return from_nvrtc(nvrtcVersion(major, minor));
}

hiprtcResult hiprtcCreateProgram(hiprtcProgram *prog, const char *src, const char *name,
                                        int nheaders, const char **headers,
                                        const char **include_names)
{
    return from_nvrtc(nvrtcCreateProgram((nvrtcProgram *)prog, src, name, nheaders, headers,
                                         include_names));
}

hiprtcResult hiprtcDestroyProgram(hiprtcProgram *prog)
{
    return from_nvrtc(nvrtcDestroyProgram((nvrtcProgram *)prog));
}

/* The reference hands hiprtc's options to NVRTC as they are, which would reject the ones a
 * program written for AMD passes. The AMD target becomes NVRTC's (--offload-arch=sm_90 ->
 * -arch=sm_90: hip.c names the target the device reports, here an sm_ one); -O3 is
 * dropped, since NVRTC rejects it and optimizes fully by default; the rest pass unchanged. */
static const char *translate_option(const char *opt, char *buf, size_t len)
{
    static const char target[] = "--offload-arch=";
    if (strncmp(opt, target, sizeof target - 1) == 0) {
        snprintf(buf, len, "-arch=%s", opt + sizeof target - 1);
        return buf;
    }
    return strcmp(opt, "-O3") == 0 ? NULL : opt;
}

hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int nopts, const char **opts)
{
    char target[64];
    const char **kept = calloc(nopts > 0 ? (size_t)nopts : 1, sizeof *kept);
    int n = 0;
    if (!kept)
        return HIPRTC_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < nopts; i++) {
        const char *o = translate_option(opts[i], target, sizeof target);
        if (o)
            kept[n++] = o;
    }
    hiprtcResult r = from_nvrtc(nvrtcCompileProgram((nvrtcProgram)prog, n, kept));
    free(kept);
    return r;
}

hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram prog, size_t *size)
{
    return from_nvrtc(nvrtcGetProgramLogSize((nvrtcProgram)prog, size));
}

hiprtcResult hiprtcGetProgramLog(hiprtcProgram prog, char *log)
{
    return from_nvrtc(nvrtcGetProgramLog((nvrtcProgram)prog, log));
}

hiprtcResult hiprtcGetCodeSize(hiprtcProgram prog, size_t *size)
{
    return from_nvrtc(nvrtcGetPTXSize((nvrtcProgram)prog, size));
}

hiprtcResult hiprtcGetCode(hiprtcProgram prog, char *code)
{
    return from_nvrtc(nvrtcGetPTX((nvrtcProgram)prog, code));
}
