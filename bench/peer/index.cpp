// CUDA pairs of the scatters: index_add_, scatter_reduce_ "sum" and scatter_add_ of 16M fp32
// values along a 1-D self of 1024 elements (long runs of repeated indices) and of 16M (about one
// value each), against libtorch's in the same run. anatomy sorts the values by target and
// combines each target's run in a fixed order (Note [Sorted scatter on CUDA]); torch adds with
// atomics. Device time between CUDA events; bytes are the indices and values read and the
// targets read and written. Each call accumulates into the same self on both sides (checked
// after one call each). Each row is skipped unless anatomy has its CUDA backend and both
// libraries see a GPU.
#include "peer.h"

namespace peer {
namespace {

const anatomy::Device kCuda(anatomy::DeviceType::CUDA);  // the current device
constexpr int64_t kValues = int64_t{1} << 24;            // 16M fp32 values, 64 MiB

template <int64_t kTargets>
struct ScatterCase : CaseDefaults {
  static constexpr Timing kTiming = Timing::kCudaEvents;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMicrosecond;
  static constexpr int64_t kBytes = kValues * (8 + 4) + kTargets * 4 * 2;
  // Both sides sum in fp32 in different orders: agreement to a few fp32 roundings of sqrt(N).
  static constexpr Tolerance kTol{1e-2, 1e-4};
  anatomy::Tensor self_cpu = anatomy::randn({kTargets});
  anatomy::Tensor index_cpu = anatomy::randint(0, kTargets, {kValues}, anatomy::DType::Int64);
  anatomy::Tensor src_cpu = anatomy::randn({kValues});
  anatomy::Tensor self = self_cpu.to(kCuda), index = index_cpu.to(kCuda), src = src_cpu.to(kCuda);
  at::Tensor tself = to_torch(self_cpu).to(at::kCUDA), tindex = to_torch(index_cpu).to(at::kCUDA),
             tsrc = to_torch(src_cpu).to(at::kCUDA);
};

struct IndexAdd1024Cuda : ScatterCase<1024> {
  static constexpr const char* kName = "index_add_16m_into_1024_cuda";
  anatomy::Tensor run_anatomy() { return self.index_add_(0, index, src); }
  at::Tensor run_torch() { return tself.index_add_(0, tindex, tsrc); }
};

struct IndexAdd16MCuda : ScatterCase<kValues> {
  static constexpr const char* kName = "index_add_16m_into_16m_cuda";
  anatomy::Tensor run_anatomy() { return self.index_add_(0, index, src); }
  at::Tensor run_torch() { return tself.index_add_(0, tindex, tsrc); }
};

struct ScatterReduceSum1024Cuda : ScatterCase<1024> {
  static constexpr const char* kName = "scatter_reduce_sum_16m_into_1024_cuda";
  anatomy::Tensor run_anatomy() { return self.scatter_reduce_(0, index, src, "sum"); }
  at::Tensor run_torch() { return tself.scatter_reduce_(0, tindex, tsrc, "sum"); }
};

struct ScatterReduceSum16MCuda : ScatterCase<kValues> {
  static constexpr const char* kName = "scatter_reduce_sum_16m_into_16m_cuda";
  anatomy::Tensor run_anatomy() { return self.scatter_reduce_(0, index, src, "sum"); }
  at::Tensor run_torch() { return tself.scatter_reduce_(0, tindex, tsrc, "sum"); }
};

struct ScatterAdd1024Cuda : ScatterCase<1024> {
  static constexpr const char* kName = "scatter_add_16m_into_1024_cuda";
  anatomy::Tensor run_anatomy() { return self.scatter_add_(0, index, src); }
  at::Tensor run_torch() { return tself.scatter_add_(0, tindex, tsrc); }
};

struct ScatterAdd16MCuda : ScatterCase<kValues> {
  static constexpr const char* kName = "scatter_add_16m_into_16m_cuda";
  anatomy::Tensor run_anatomy() { return self.scatter_add_(0, index, src); }
  at::Tensor run_torch() { return tself.scatter_add_(0, tindex, tsrc); }
};

const int registered = (register_pair<IndexAdd1024Cuda>(), register_pair<IndexAdd16MCuda>(),
                        register_pair<ScatterReduceSum1024Cuda>(), register_pair<ScatterReduceSum16MCuda>(),
                        register_pair<ScatterAdd1024Cuda>(), register_pair<ScatterAdd16MCuda>(), 0);

}  // namespace
}  // namespace peer
