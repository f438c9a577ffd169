// Meta: the element-wise binary and ternary operators compute only the result's shape, dtype and
// layout: the same plans and checks as the real kernels (dispatch/ops/binary_registration.h), and no
// loop (so no data-dependent check either: integer division by zero is the CPU kernel's).
#include "anatomy/dispatch/ops/binary_registration.h"

namespace anatomy::meta {
namespace {
void no_loop(BinaryOp, const IterationPlan&, const Scalar&) {}
void no_loop3(TernaryOp, const IterationPlan&) {}
}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) { dispatch::register_binary_kernels<&no_loop, &no_loop3>(m); }

}  // namespace anatomy::meta
