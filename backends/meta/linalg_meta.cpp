// Meta: mm, bmm, addmm and baddbmm compute only the result's shape and dtype: the same checks
// and allocation as the real kernels (dispatch/ops/linalg_registration.h), and no arithmetic.
#include "anatomy/dispatch/ops/linalg_registration.h"

namespace anatomy::meta {
namespace {
void no_compute(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&) {}
}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) { dispatch::register_product_kernels<&no_compute>(m); }

}  // namespace anatomy::meta
