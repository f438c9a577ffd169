// CUDA: searchsorted and bucketize. The checks, the promotion and the result are every backend's
// (dispatch/ops/search_registration.h); here the values' walk is built on the host as one
// StridedLayout<4> (value, result, and the starts of its rows in the sequence and the sorter,
// bucketize_rules.h: row_start_strides) and search.cu runs one thread per value. A sorter is
// checked whole by a kernel that reports a bad entry through the IndexErrorSink: the CPU's
// IndexError, raised at the next wait for the device (Note [Bad indices on the device]), since
// PyTorch's check of it on the host would make this call wait. Nothing here waits.
#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/sort/launch.h"
#include "anatomy/dispatch/ops/search_registration.h"

namespace anatomy::cuda {
namespace {

void search_rows(const search::SearchArgs& a, const Tensor& out, const char* op) {
  const Tensor& seq = a.sequence;
  const int64_t last = seq.dim() - 1;
  DeviceGuard guard(seq.device());
  SearchValues q;
  q.dtype = a.values.dtype();
  q.values = a.values.data_ptr();
  q.sequence = seq.data_ptr();
  q.out = out.data_ptr();
  q.out_int32 = a.result == DType::Int32;
  q.right = a.right;
  q.numel = a.values.numel();
  q.n = seq.sizes()[last];
  q.sequence_stride = seq.strides()[last];
  const DimVector seq_starts = search::row_start_strides(seq, a.values);
  DimVector sorter_starts = seq_starts;
  if (a.sorter.defined()) {
    q.sorter = static_cast<const int64_t*>(a.sorter.data_ptr());
    q.sorter_stride = a.sorter.strides()[last];
    sorter_starts = search::row_start_strides(a.sorter, a.values);
    const StridedLayout<1> entries = make_strided_layout<1>(a.sorter.sizes(), {a.sorter.strides()}, op);
    launch_check_sorter(q.sorter, entries, a.sorter.numel(), q.n, last,
                        index_error_sink(current_device(), search::kSorterLabel), current_stream());
  }
  q.layout = make_strided_layout<4>(
      a.values.sizes(), {a.values.strides(), out.strides(), IntArrayRef(seq_starts), IntArrayRef(sorter_starts)}, op);
  ANATOMY_CHECK(launch_search(q, current_stream()), NotImplementedError, "{}: CUDA takes no {} input", op,
                name(q.dtype));
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { dispatch::register_search_kernels<&search_rows>(m); }

}  // namespace anatomy::cuda
