// The HIP runtime and BLAS names the hip device uses, on either platform.
//
// On AMD (hipcc, ROCm) this is <hip/hip_runtime.h> and <hipblas/hipblas.h>. On NVIDIA the same
// source is compiled by nvcc as CUDA (`-x cu`), and each HIP name below is mapped onto its CUDA
// twin. Debian's HIP headers for the NVIDIA platform (HIP 5.2) do not compile against CUDA 13,
// so the project owns this small mapping instead. Only the names the runtime uses are mapped:
// add a line here when the hip device starts using a new call (docs/devices.md).
#pragma once

#if defined(__HIP_PLATFORM_AMD__) || defined(DQ_HIP_PLATFORM_AMD)

#include <hip/hip_runtime.h>
#include <hipblas/hipblas.h>

#else // NVIDIA: HIP names onto CUDA

#include <cublas_v2.h>
#include <cuda_runtime.h>

// ---- runtime types and constants ----
using hipError_t = cudaError_t;
using hipStream_t = cudaStream_t;
using hipEvent_t = cudaEvent_t;
using hipDeviceProp_t = cudaDeviceProp;
using hipMemcpyKind = cudaMemcpyKind;
#define hipSuccess cudaSuccess
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipMemcpyDefault cudaMemcpyDefault
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipHostMallocMapped cudaHostAllocMapped
#define hipHostMallocDefault cudaHostAllocDefault
#define hipEventDefault cudaEventDefault

// ---- runtime calls ----
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetLastError cudaGetLastError
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipSetDevice cudaSetDevice
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMallocAsync cudaMallocAsync
#define hipFreeAsync cudaFreeAsync
#define hipHostMalloc cudaHostAlloc
#define hipHostFree cudaFreeHost
#define hipHostGetDevicePointer cudaHostGetDevicePointer
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpy2DAsync cudaMemcpy2DAsync
#define hipMemsetAsync cudaMemsetAsync
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipDeviceSynchronize cudaDeviceSynchronize
using hipMemPool_t = cudaMemPool_t;
#define hipDeviceGetDefaultMemPool cudaDeviceGetDefaultMemPool
#define hipMemPoolSetAttribute cudaMemPoolSetAttribute
#define hipMemPoolAttrReleaseThreshold cudaMemPoolAttrReleaseThreshold

// Kernel launch: HIP's macro form, as CUDA's triple-chevron launch (device sources only).
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...)                                                    \
  kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)

// ---- BLAS: hipBLAS names onto cuBLAS ----
using hipblasHandle_t = cublasHandle_t;
using hipblasStatus_t = cublasStatus_t;
using hipblasOperation_t = cublasOperation_t;
using hipblasDatatype_t = cudaDataType_t;
using hipblasComputeType_t = cublasComputeType_t;
#define HIPBLAS_STATUS_SUCCESS CUBLAS_STATUS_SUCCESS
#define HIPBLAS_OP_N CUBLAS_OP_N
#define HIPBLAS_OP_T CUBLAS_OP_T
#define HIPBLAS_R_16F CUDA_R_16F
#define HIPBLAS_R_16B CUDA_R_16BF
#define HIPBLAS_R_32F CUDA_R_32F
#define HIPBLAS_R_64F CUDA_R_64F
#define HIPBLAS_COMPUTE_32F CUBLAS_COMPUTE_32F
#define HIPBLAS_COMPUTE_64F CUBLAS_COMPUTE_64F
#define HIPBLAS_GEMM_DEFAULT CUBLAS_GEMM_DEFAULT
#define hipblasCreate cublasCreate
#define hipblasDestroy cublasDestroy
#define hipblasSetStream cublasSetStream
#define hipblasStatusToString cublasGetStatusString
#define hipblasGemmStridedBatchedEx cublasGemmStridedBatchedEx

/// fp32 stays fp32 on NVIDIA: no TF32 and no reduced-precision fp16 reductions in cuBLAS.
inline hipblasStatus_t dqHipblasStrictFp32(hipblasHandle_t h) {
  return cublasSetMathMode(
      h, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
}

#endif

#if defined(__HIP_PLATFORM_AMD__) || defined(DQ_HIP_PLATFORM_AMD)
/// AMD: hipBLAS computes fp32 GEMMs in fp32 unless asked otherwise (no TF32-like default).
inline hipblasStatus_t dqHipblasStrictFp32(hipblasHandle_t) { return HIPBLAS_STATUS_SUCCESS; }
#endif
