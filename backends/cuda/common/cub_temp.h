// with_cub_temp: the temporary storage of a CUB device algorithm from the caching allocator.
// The launchers that wrap CUB (index/launch.h: nonzero, masked_select, one_hot) work as CUB
// does: called with a null pointer they only size their storage, called again with it they
// queue the work. The storage is freed when this returns; the caching allocator hands it out
// again only on the same stream, behind the work that uses it, so no wait is needed.
#pragma once

#include <algorithm>
#include <cstddef>

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

}  // namespace anatomy::cuda
