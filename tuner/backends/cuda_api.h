/* cuda_api.h - the slice of the CUDA driver API and NVRTC that cuda.c calls.
 *
 * fdtuned must build on hosts with no CUDA SDK, and libcuda/libnvrtc are dlopen'ed at run
 * time, so no SDK header is included: this file restates the types, the enum values and the
 * signatures used, copied from cuda.h and nvrtc.h (checked against CUDA 13.0). Only
 * ABI-stable entry points appear, each under the symbol the driver exports (the _v2 names
 * where cuda.h maps the plain name to one), so a pointer fetched with dlsym matches the
 * typedef it is stored in. Enum values are the SDK's own; they never change between
 * releases, and a wrong one would be a silent bug. */
#ifndef FDT_CUDA_API_H
#define FDT_CUDA_API_H

#include <stddef.h>

/* ---- driver API (libcuda.so.1) ---- */

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    /* Faults raised by a running kernel; they poison the context and surface at any later call. */
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_ASSERT = 710,
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    CUDA_ERROR_INVALID_PC = 718,
    CUDA_ERROR_LAUNCH_FAILED = 719
} CUresult;

typedef enum CUdevice_attribute_enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
} CUdevice_attribute;

typedef enum CUfunction_attribute_enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
} CUfunction_attribute;

typedef enum CUevent_flags_enum {
    CU_EVENT_DEFAULT = 0
} CUevent_flags;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* 64-bit hosts only, as cuda.h since CUDA 3.2 */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;

typedef CUresult (*cuInit_fn)(unsigned int flags);
typedef CUresult (*cuDriverGetVersion_fn)(int *version);
typedef CUresult (*cuGetErrorName_fn)(CUresult error, const char **str);
typedef CUresult (*cuGetErrorString_fn)(CUresult error, const char **str);

typedef CUresult (*cuDeviceGet_fn)(CUdevice *device, int ordinal);
typedef CUresult (*cuDeviceGetName_fn)(char *name, int len, CUdevice dev);
typedef CUresult (*cuDeviceGetAttribute_fn)(int *value, CUdevice_attribute attrib, CUdevice dev);
typedef CUresult (*cuDeviceTotalMem_v2_fn)(size_t *bytes, CUdevice dev);

typedef CUresult (*cuDevicePrimaryCtxRetain_fn)(CUcontext *ctx, CUdevice dev);
typedef CUresult (*cuDevicePrimaryCtxRelease_v2_fn)(CUdevice dev);
typedef CUresult (*cuCtxSetCurrent_fn)(CUcontext ctx);
typedef CUresult (*cuCtxGetCurrent_fn)(CUcontext *ctx);
typedef CUresult (*cuCtxGetDevice_fn)(CUdevice *device);

typedef CUresult (*cuModuleLoadData_fn)(CUmodule *module, const void *image);
typedef CUresult (*cuModuleUnload_fn)(CUmodule module);
typedef CUresult (*cuModuleGetFunction_fn)(CUfunction *fn, CUmodule module, const char *name);
typedef CUresult (*cuFuncGetAttribute_fn)(int *value, CUfunction_attribute attrib,
                                          CUfunction fn);
typedef CUresult (*cuFuncSetAttribute_fn)(CUfunction fn, CUfunction_attribute attrib,
                                          int value);
typedef CUresult (*cuModuleGetGlobal_v2_fn)(CUdeviceptr *ptr, size_t *bytes, CUmodule module,
                                            const char *name);

typedef CUresult (*cuMemAlloc_v2_fn)(CUdeviceptr *ptr, size_t bytes);
typedef CUresult (*cuMemFree_v2_fn)(CUdeviceptr ptr);
typedef CUresult (*cuMemcpyHtoD_v2_fn)(CUdeviceptr dst, const void *src, size_t bytes);
typedef CUresult (*cuMemcpyDtoH_v2_fn)(void *dst, CUdeviceptr src, size_t bytes);
typedef CUresult (*cuMemcpyDtoDAsync_v2_fn)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                            CUstream stream);
typedef CUresult (*cuMemsetD32Async_fn)(CUdeviceptr dst, unsigned int value, size_t count,
                                        CUstream stream);

typedef CUresult (*cuLaunchKernel_fn)(CUfunction fn, unsigned int grid_x, unsigned int grid_y,
                                      unsigned int grid_z, unsigned int block_x,
                                      unsigned int block_y, unsigned int block_z,
                                      unsigned int shared_bytes, CUstream stream,
                                      void **params, void **extra);

typedef CUresult (*cuStreamSynchronize_fn)(CUstream stream);

typedef CUresult (*cuEventCreate_fn)(CUevent *event, unsigned int flags);
typedef CUresult (*cuEventDestroy_v2_fn)(CUevent event);
typedef CUresult (*cuEventRecord_fn)(CUevent event, CUstream stream);
typedef CUresult (*cuEventQuery_fn)(CUevent event);
typedef CUresult (*cuEventElapsedTime_fn)(float *ms, CUevent start, CUevent end);

/* ---- NVRTC (libnvrtc.so) ---- */

typedef enum {
    NVRTC_SUCCESS = 0
} nvrtcResult;

typedef struct _nvrtcProgram *nvrtcProgram;

typedef const char *(*nvrtcGetErrorString_fn)(nvrtcResult result);
typedef nvrtcResult (*nvrtcVersion_fn)(int *major, int *minor);
typedef nvrtcResult (*nvrtcCreateProgram_fn)(nvrtcProgram *prog, const char *src,
                                             const char *name, int num_headers,
                                             const char *const *headers,
                                             const char *const *include_names);
typedef nvrtcResult (*nvrtcDestroyProgram_fn)(nvrtcProgram *prog);
typedef nvrtcResult (*nvrtcCompileProgram_fn)(nvrtcProgram prog, int num_options,
                                              const char *const *options);
typedef nvrtcResult (*nvrtcGetProgramLogSize_fn)(nvrtcProgram prog, size_t *size);
typedef nvrtcResult (*nvrtcGetProgramLog_fn)(nvrtcProgram prog, char *log);
typedef nvrtcResult (*nvrtcGetCUBINSize_fn)(nvrtcProgram prog, size_t *size);
typedef nvrtcResult (*nvrtcGetCUBIN_fn)(nvrtcProgram prog, char *cubin);

#endif
