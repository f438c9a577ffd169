// CPU: searchsorted and bucketize. The checks, the common dtype and the result are every
// backend's (dispatch/ops/search_registration.h); here each value's row of the sequence is read
// in place, whatever the strides, and searched by the shared binary search
// (dispatch/ops/sorted_search.h). A sorter is checked whole before anything is searched, so an
// entry out of range raises IndexError as PyTorch's check does.
#include <array>

#include "anatomy/backends/cpu/index_utils.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/strided_loop.h"
#include "anatomy/dispatch/ops/search_registration.h"
#include "anatomy/dispatch/ops/sorted_search.h"

namespace anatomy::cpu {
namespace {

void check_sorter(const Tensor& sorter) {
  const int64_t last = sorter.dim() - 1;
  const int64_t n = sorter.sizes()[last];
  const int64_t* s = static_cast<const int64_t*>(sorter.data_ptr());
  for_each_strided<1>(sorter.sizes(), {sorter.strides()}, [&](const std::array<int64_t, 1>& o) {
    checked_index(s[o[0]], n, last, /*allow_negative=*/false, search::kSorterLabel);
  });
}

// Walks the values with four operands: the value, its result, and the starts of its rows in the
// sequence and in the sorter (bucketize_rules.h: row_start_strides).
template <typename T, typename Out>
void search_values(const search::SearchArgs& a, const Tensor& out) {
  const Tensor& seq = a.sequence;
  const int64_t last = seq.dim() - 1;
  const int64_t n = seq.sizes()[last];
  const int64_t seq_stride = seq.strides()[last];
  const T* values = static_cast<const T*>(a.values.data_ptr());
  const T* rows = static_cast<const T*>(seq.data_ptr());
  Out* result = static_cast<Out*>(out.data_ptr());
  const DimVector seq_starts = search::row_start_strides(seq, a.values);
  const bool sorted_by = a.sorter.defined();
  const int64_t* sorter = sorted_by ? static_cast<const int64_t*>(a.sorter.data_ptr()) : nullptr;
  const int64_t sorter_stride = sorted_by ? a.sorter.strides()[last] : 0;
  const DimVector sorter_starts = sorted_by ? search::row_start_strides(a.sorter, a.values) : seq_starts;
  for_each_strided<4>(a.values.sizes(), {a.values.strides(), out.strides(), seq_starts, sorter_starts},
                      [&](const std::array<int64_t, 4>& o) {
                        const T* row = rows + o[2];
                        const int64_t* order = sorted_by ? sorter + o[3] : nullptr;
                        const int64_t pos = search::sorted_position(values[o[0]], n, a.right, [&](int64_t i) {
                          return order != nullptr ? row[order[i * sorter_stride] * seq_stride] : row[i * seq_stride];
                        });
                        result[o[1]] = static_cast<Out>(pos);
                      });
}

void search_rows(const search::SearchArgs& a, const Tensor& out, const char* op) {
  if (a.sorter.defined()) check_sorter(a.sorter);
  visit_dtype(a.values.dtype(), op, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      if (a.result == DType::Int32) search_values<T, int32_t>(a, out);
      else search_values<T, int64_t>(a, out);
    }
  });
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_search_kernels<&search_rows>(m); }

}  // namespace anatomy::cpu
