// Meta: the element-wise unary operators compute only the result's shape, dtype and layout: the
// same plan and checks as the real kernels (dispatch/ops/unary_registration.h), and no loop.
#include "anatomy/dispatch/ops/unary_registration.h"

namespace anatomy::meta {
namespace {
void no_loop(UnaryOp, const IterationPlan&, const UnaryParams&) {}
}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) { dispatch::register_unary_kernels<&no_loop>(m); }

}  // namespace anatomy::meta
