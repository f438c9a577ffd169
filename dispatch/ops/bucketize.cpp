// searchsorted and bucketize: the schemas, the C++ API, and the Scalar forms, which wrap the
// value in a 0-dim tensor on the sequence's device, marked as a wrapped number so it promotes
// like a Python scalar (as PyTorch's searchsorted_scalar_tensor does), and call the Tensor form.
// The Tensor forms are backend kernels (dispatch/ops/search_registration.h); none has a
// derivative (the results are positions).
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {
namespace {

using Side = std::optional<std::string_view>;
using Sorter = std::optional<Tensor>;

Tensor wrapped_value(const Scalar& value, const Tensor& sequence) {
  Tensor t = full({}, value, TensorOptions().dtype(value.dtype()).device(sequence.device()));
  t.impl()->set_wrapped_number(true);
  return t;
}

Tensor searchsorted_scalar_composite(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                                     Side side, const Sorter& sorter) {
  return searchsorted(sorted_sequence, wrapped_value(self, sorted_sequence), out_int32, right, side, sorter);
}

Tensor bucketize_scalar_composite(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  return bucketize(wrapped_value(self, boundaries), boundaries, out_int32, right);
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, "
      "str? side=None, Tensor? sorter=None) -> Tensor");
  m.def(
      "searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, "
      "str? side=None, Tensor? sorter=None) -> Tensor",
      ANATOMY_KERNEL(searchsorted_scalar_composite));
  m.def("bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor");
  m.def("bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
        ANATOMY_KERNEL(bucketize_scalar_composite));
}

// ---- the C++ API ----
using SearchSig = Tensor(const Tensor&, const Tensor&, bool, bool, Side, const Sorter&);
using SearchScalarSig = Tensor(const Tensor&, const Scalar&, bool, bool, Side, const Sorter&);

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right, Side side,
                    const Sorter& sorter) {
  ANATOMY_OP(op, "aten::searchsorted.Tensor", SearchSig);
  return op.call(sorted_sequence, self, out_int32, right, side, sorter);
}
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right, Side side,
                    const Sorter& sorter) {
  ANATOMY_OP(op, "aten::searchsorted.Scalar", SearchScalarSig);
  return op.call(sorted_sequence, self, out_int32, right, side, sorter);
}
Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  ANATOMY_OP(op, "aten::bucketize.Tensor", Tensor(const Tensor&, const Tensor&, bool, bool));
  return op.call(self, boundaries, out_int32, right);
}
Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  ANATOMY_OP(op, "aten::bucketize.Scalar", Tensor(const Scalar&, const Tensor&, bool, bool));
  return op.call(self, boundaries, out_int32, right);
}

}  // namespace anatomy
