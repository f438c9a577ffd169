// CPU: registers every reduction kernel around one loop, which hands each operator to the
// concept's loop (reduce_sum_cpu.cpp, reduce_minmax_cpu.cpp, reduce_stats_cpu.cpp,
// reduce_logical_cpu.cpp).
#include "anatomy/backends/cpu/reduce_cpu.h"

namespace anatomy::cpu {
namespace {

void reduce_loop(ReduceKind kind, const Reduction& r, const dispatch::ReduceArgs& args) {
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
    case ReduceKind::Prod:
      sum_prod_loop(kind, r);
      break;
    case ReduceKind::Max:
    case ReduceKind::Min:
    case ReduceKind::ArgMax:
    case ReduceKind::ArgMin:
      extreme_loop(kind, r);
      break;
    case ReduceKind::Var:
    case ReduceKind::Std:
    case ReduceKind::Norm:
    case ReduceKind::LogSumExp:
      stats_loop(kind, r, args);
      break;
    case ReduceKind::Any:
    case ReduceKind::All:
    case ReduceKind::CountNonzero:
      logical_loop(kind, r);
      break;
  }
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) { dispatch::register_reduce_kernels<&reduce_loop>(m); }

}  // namespace anatomy::cpu
