// Meta: add, sub, mul and div compute only the result's shape, dtype and layout: the same plan
// and checks as the real kernels (dispatch/binary_registration.h), and no loop.
#include "anatomy/dispatch/binary_registration.h"

namespace anatomy::meta {
namespace {
void no_loop(BinaryOp, const IterationPlan&, const Scalar&) {}
}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) { dispatch::register_binary_kernels<&no_loop>(m); }

}  // namespace anatomy::meta
