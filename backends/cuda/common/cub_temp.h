// Device scratch memory from the caching allocator, for the host halves of launchers:
// with_cub_temp, the temporary storage of a CUB device algorithm, and ScratchBlocks, the blocks
// behind a launcher's ScratchFn (scratch.h). The launchers that wrap one CUB call (index/launch.h:
// nonzero, masked_select, one_hot) work as CUB does: called with a null pointer they only size
// their storage, called again with it they queue the work; those that need several blocks
// (sort/launch.h, the sorted scatter of index/launch.h) ask a ScratchFn. The memory is freed when the
// host half returns; the caching allocator hands it out again only on the same stream, behind
// the work that uses it, so no wait is needed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "anatomy/backends/cuda/common/scratch.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::cuda {

// launch(void* temp, size_t& temp_bytes): once to size, once to run.
template <typename F>
void with_cub_temp(Device device, F&& launch) {
  size_t bytes = 0;
  launch(nullptr, bytes);
  Tensor temp =
      empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, TensorOptions().dtype(DType::UInt8).device(device));
  launch(temp.data_ptr(), bytes);
}

// Each request of fn() is a fresh uint8 tensor on `device` (on its current stream), kept until
// this object goes.
class ScratchBlocks {
 public:
  explicit ScratchBlocks(Device device) : options_(TensorOptions().dtype(DType::UInt8).device(device)) {}
  ScratchBlocks(const ScratchBlocks&) = delete;
  ScratchBlocks& operator=(const ScratchBlocks&) = delete;

  ScratchFn fn() {
    return [this](size_t bytes) {
      blocks_.push_back(empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, options_));
      return blocks_.back().data_ptr();
    };
  }

 private:
  TensorOptions options_;
  std::vector<Tensor> blocks_;
};

}  // namespace anatomy::cuda
