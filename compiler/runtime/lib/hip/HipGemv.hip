// Decode GEMV: y[N] = x[K] . W[K, N] for one row of activations and a row-major weight.
//
// A decode step multiplies one activation row by each weight matrix: the work is reading W once,
// so what matters is bandwidth and one cheap launch. Each block owns a tile of columns (one warp
// width of 16-byte vectors) and a chunk of K; its 8 warps stride over the chunk's rows, each lane
// accumulating its vector of columns in fp32. The warps' sums meet in shared memory. With more
// than one K chunk the blocks write fp32 partials, and the last block of a column tile to finish
// (an atomic count per tile) adds them in chunk order, so the result does not depend on timing.
#include "HipElements.h"

namespace dq::rt::hipk {
namespace {

constexpr int kGemvWarps = 8;
constexpr int kWarp = 32;

template <typename T> struct Lanes;
template <> struct Lanes<float> {
  static constexpr int kVec = 4;
  __device__ static float get(const uint4 &v, int j) { return floatOf((&v.x)[j]); }
  __device__ static float one(const void *p, int64_t i) { return static_cast<const float *>(p)[i]; }
  __device__ static void put(void *p, int64_t i, float f) { static_cast<float *>(p)[i] = f; }
};
struct Half {};
struct BFloat {};
// f16 -> f32 without branches: the f16 bits shifted into an f32's place, scaled by 2^112, give
// every finite f16 exactly (normals and subnormals alike); only Inf/NaN need their own bits.
// halfToFloat's branches made the GEMV compute-bound.
__device__ inline float halfBitsToFloat(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, body = (h & 0x7FFFu) << 13;
  const float finite = floatOf(body) * 0x1p112f;
  return floatOf(sign | ((h & 0x7C00u) == 0x7C00u ? (0x7F800000u | body) : bitsOf(finite)));
}
template <> struct Lanes<Half> {
  static constexpr int kVec = 8;
  __device__ static float get(const uint4 &v, int j) {
    return halfBitsToFloat(((&v.x)[j / 2] >> (16 * (j % 2))) & 0xFFFFu);
  }
  __device__ static float one(const void *p, int64_t i) { return halfBitsToFloat(static_cast<const uint16_t *>(p)[i]); }
  __device__ static void put(void *p, int64_t i, float f) { static_cast<uint16_t *>(p)[i] = floatToHalf(f); }
};
template <> struct Lanes<BFloat> {
  static constexpr int kVec = 8;
  __device__ static float get(const uint4 &v, int j) {
    return bf16ToFloat(static_cast<uint16_t>((&v.x)[j / 2] >> (16 * (j % 2))));
  }
  __device__ static float one(const void *p, int64_t i) { return bf16ToFloat(static_cast<const uint16_t *>(p)[i]); }
  __device__ static void put(void *p, int64_t i, float f) { static_cast<uint16_t *>(p)[i] = floatToBF16(f); }
};

// grid: (column tiles, K chunks); block: kGemvWarps warps. N is a multiple of kVec, W's row
// stride ldw a multiple of kVec and W 16-byte aligned (checked on the host).
template <typename T>
__global__ void kGemv(const void *x, int64_t xStride, const char *w, int64_t ldw, void *y, int64_t K, int64_t N,
                      int64_t kChunk, float *partials, unsigned *counters) {
  constexpr int V = Lanes<T>::kVec;
  constexpr int64_t tileCols = kWarp * V;
  __shared__ float sums[kGemvWarps][kWarp * V];
  __shared__ bool lastBlock;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int64_t col = blockIdx.x * tileCols + lane * V;
  const int64_t k0 = blockIdx.y * kChunk, k1 = k0 + kChunk < K ? k0 + kChunk : K;
  const int esize = V == 8 ? 2 : 4;
  float acc[V];
  for (int j = 0; j < V; ++j)
    acc[j] = 0.f;
  if (col < N) {
    const char *wc = w + col * esize;
    int64_t k = k0 + warp;
    // Four rows in flight per iteration keep enough loads outstanding to cover memory latency.
    constexpr int kRows = 4;
    for (; k + (kRows - 1) * kGemvWarps < k1; k += kRows * kGemvWarps) {
      uint4 r[kRows];
      float xr[kRows];
      for (int i = 0; i < kRows; ++i) {
        r[i] = *reinterpret_cast<const uint4 *>(wc + (k + i * kGemvWarps) * ldw * esize);
        xr[i] = Lanes<T>::one(x, (k + i * kGemvWarps) * xStride);
      }
      for (int i = 0; i < kRows; ++i)
        for (int j = 0; j < V; ++j)
          acc[j] = fmaf(xr[i], Lanes<T>::get(r[i], j), acc[j]);
    }
    for (; k < k1; k += kGemvWarps) {
      const uint4 a = *reinterpret_cast<const uint4 *>(wc + k * ldw * esize);
      const float xa = Lanes<T>::one(x, k * xStride);
      for (int j = 0; j < V; ++j)
        acc[j] = fmaf(xa, Lanes<T>::get(a, j), acc[j]);
    }
  }
  for (int j = 0; j < V; ++j)
    sums[warp][lane * V + j] = acc[j];
  __syncthreads();
  // Thread t of the block finishes column t of the tile (tileCols <= block size).
  const int t = threadIdx.x;
  const int64_t c = blockIdx.x * tileCols + t;
  float s = 0.f;
  if (t < tileCols)
    for (int wi = 0; wi < kGemvWarps; ++wi)
      s += sums[wi][t];
  if (gridDim.y == 1) {
    if (t < tileCols && c < N) Lanes<T>::put(y, c, s);
    return;
  }
  if (t < tileCols && c < N) partials[blockIdx.y * N + c] = s;
  __threadfence();
  __syncthreads();
  if (t == 0) lastBlock = atomicAdd(&counters[blockIdx.x], 1u) == gridDim.y - 1;
  __syncthreads();
  if (!lastBlock) return;
  __threadfence();
  if (t < tileCols && c < N) {
    const volatile float *p = partials;
    float total = 0.f;
    for (unsigned ch = 0; ch < gridDim.y; ++ch)
      total += p[ch * N + c];
    Lanes<T>::put(y, c, total);
  }
  if (t == 0) counters[blockIdx.x] = 0; // ready for the next launch on the stream
}

} // namespace

int gemvVectorWidth(int dtype) { return dtype == kF32 ? 4 : 8; }

GemvPlan gemvPlan(int dtype, int64_t K, int64_t N, int multiprocessors) {
  GemvPlan p;
  const int64_t tileCols = kWarp * static_cast<int64_t>(gemvVectorWidth(dtype));
  p.tiles = (N + tileCols - 1) / tileCols;
  // About four blocks per multiprocessor, and at least 16 rows of K per block.
  const int64_t want = 4 * static_cast<int64_t>(multiprocessors > 0 ? multiprocessors : 1);
  int64_t chunks = (want + p.tiles - 1) / p.tiles;
  const int64_t maxChunks = (K + 15) / 16;
  if (chunks > maxChunks) chunks = maxChunks;
  if (chunks < 1) chunks = 1;
  p.kChunk = (K + chunks - 1) / chunks;
  p.kChunk = (p.kChunk + kGemvWarps - 1) / kGemvWarps * kGemvWarps;
  p.chunks = (K + p.kChunk - 1) / p.kChunk;
  p.partialFloats = p.chunks > 1 ? p.chunks * N : 0;
  return p;
}

hipError_t gemv(hipStream_t s, int dtype, const void *x, int64_t xStride, const void *w, int64_t ldw, void *y,
                int64_t K, int64_t N, const GemvPlan &plan, float *partials, unsigned *counters) {
  const dim3 grid(static_cast<unsigned>(plan.tiles), static_cast<unsigned>(plan.chunks));
  const dim3 block(kGemvWarps * kWarp);
  const char *wb = static_cast<const char *>(w);
  switch (dtype) {
  case kF32:
    hipLaunchKernelGGL(kGemv<float>, grid, block, 0, s, x, xStride, wb, ldw, y, K, N, plan.kChunk, partials, counters);
    break;
  case kF16:
    hipLaunchKernelGGL(kGemv<Half>, grid, block, 0, s, x, xStride, wb, ldw, y, K, N, plan.kChunk, partials, counters);
    break;
  case kBF16:
    hipLaunchKernelGGL(kGemv<BFloat>, grid, block, 0, s, x, xStride, wb, ldw, y, K, N, plan.kChunk, partials, counters);
    break;
  default:
    return hipErrorInvalidValue;
  }
  return hipGetLastError();
}

} // namespace dq::rt::hipk
