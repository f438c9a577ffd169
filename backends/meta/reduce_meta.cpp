// Meta: the reductions compute only their results' shapes, dtypes and layouts: the same checks
// and allocation as the real kernels (dispatch/ops/reduce_registration.h), and no loop.
#include "anatomy/dispatch/ops/reduce_registration.h"

namespace anatomy::meta {
namespace {
void no_loop(ReduceKind, const Reduction&, const dispatch::ReduceArgs&) {}
}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) { dispatch::register_reduce_kernels<&no_loop>(m); }

}  // namespace anatomy::meta
