// CUDA: _foreach_norm and _foreach_mul_ (dispatch/ops/foreach.h) over the multi-tensor kernels
// (foreach_norm.cu, foreach_mul.cu), one launch sequence per dtype. Every tensor must be on one
// device; a tensor that is not contiguous takes the single-tensor operator instead.
#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "anatomy/backends/cuda/common/cub_temp.h"
#include "anatomy/backends/cuda/optim/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/foreach.h"
#include "anatomy/dispatch/ops/foreach_rules.h"

namespace anatomy::cuda {
namespace {

Device common_device(const char* op, TensorList tensors) {
  const Device device = tensors[0].device();
  for (const Tensor& t : tensors) {
    ANATOMY_CHECK(t.device() == device, DeviceError, "{}: every tensor must be on one device, got {} and {}", op,
                  device.str(), t.device().str());
  }
  return device;
}

// The positions of the contiguous floating tensors, by dtype: one launch sequence each.
std::map<DType, std::vector<size_t>> dense_by_dtype(TensorList tensors) {
  std::map<DType, std::vector<size_t>> groups;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].is_contiguous() && is_floating(tensors[i].dtype())) groups[tensors[i].dtype()].push_back(i);
  }
  return groups;
}

std::vector<DenseTensor> dense_list(TensorList tensors, const std::vector<size_t>& positions) {
  std::vector<DenseTensor> dense;
  dense.reserve(positions.size());
  for (size_t i : positions) dense.push_back(DenseTensor{tensors[i].data_ptr(), tensors[i].numel()});
  return dense;
}

// Whether the memory two of the tensors can reach meets (conservatively: interleaved views count):
// blocks of one launch could then write one element for two tensors in no set order, where
// scaling the tensors one after the other gives each shared element every factor. Their byte
// spans sorted by start, each against the furthest end before it.
bool any_overlap(TensorList tensors) {
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (const Tensor& t : tensors) {
    if (t.numel() == 0) continue;
    int64_t span = 1;  // the elements from the first to the last the view can reach
    for (int64_t d = 0; d < t.dim(); ++d) span += (t.size(d) - 1) * t.stride(d);
    const auto begin = reinterpret_cast<uintptr_t>(t.data_ptr());
    ranges.emplace_back(begin, begin + static_cast<uintptr_t>(span) * element_size(t.dtype()));
  }
  std::sort(ranges.begin(), ranges.end());
  uintptr_t furthest = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin < furthest) return true;
    furthest = std::max(furthest, end);
  }
  return false;
}

// The norms of one dtype are views of one tensor of them, as PyTorch's CUDA kernel returns them.
std::vector<Tensor> foreach_norm_cuda(TensorList self, double ord) {
  check_foreach_norm(self, ord);
  const Device device = common_device("_foreach_norm", self);
  DeviceGuard guard(device);
  std::vector<Tensor> out(self.size());
  for (const auto& [dtype, positions] : dense_by_dtype(self)) {
    const Tensor norms = empty({static_cast<int64_t>(positions.size())}, TensorOptions().dtype(dtype).device(device));
    ScratchBlocks scratch(device);  // freed when this returns: safe on one stream (cub_temp.h)
    launch_foreach_norm(dtype, dense_list(self, positions), ord, norms.data_ptr(), scratch.fn(), current_stream());
    for (size_t k = 0; k < positions.size(); ++k) out[positions[k]] = norms.select(0, static_cast<int64_t>(k));
  }
  for (size_t i = 0; i < self.size(); ++i) {
    if (!out[i].defined()) out[i] = foreach_norm_one(self[i], ord);
  }
  return out;
}

void foreach_mul_cuda(TensorList self, const Tensor& other) {
  check_foreach_mul(self, other);
  const Device device = common_device("_foreach_mul_", self);
  DeviceGuard guard(device);
  // A scale that shares memory with a tensor of the list would change under the launches that
  // write it: they read a copy of it instead.
  Tensor factor = other.to(device);
  for (const Tensor& t : self) {
    if (factor.is_alias_of(t)) factor = other.clone();
  }
  // Tensors that share memory (views of one another, or one tensor twice) are scaled one after
  // the other, as the composite does.
  const auto groups = any_overlap(self) ? std::map<DType, std::vector<size_t>>{} : dense_by_dtype(self);
  std::vector<bool> launched(self.size(), false);
  for (const auto& [dtype, positions] : groups) {
    for (size_t i : positions) launched[i] = true;
  }
  for (size_t i = 0; i < self.size(); ++i) {
    if (!launched[i]) self[i].mul_(factor);
  }
  for (const auto& [dtype, positions] : groups) {
    const Tensor scale = factor.to(device, dtype);  // in the tensors' dtype, as mul_ converts it
    launch_foreach_mul(dtype, dense_list(self, positions), scale.data_ptr(), current_stream());
  }
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("_foreach_norm.Scalar", ANATOMY_KERNEL(foreach_norm_cuda));
  m.impl("_foreach_mul_.Tensor", ANATOMY_KERNEL(foreach_mul_cuda));
}

}  // namespace anatomy::cuda
