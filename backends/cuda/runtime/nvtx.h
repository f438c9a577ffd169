// NVTX ranges: named spans of host time that Nsight Systems and Nsight Compute show on their
// timelines next to the kernels launched inside them.
//
//   { cuda::nvtx::Range r("forward"); y = model(x); }     // a user range
//   cuda::nvtx::set_op_ranges_enabled(true);              // every dispatched operator in a range
//                                                         // named after it ("aten::addmm")
//
// NVTX calls cost almost nothing when no tool is attached (NVTX v3 is header-only and finds the
// tool's injection library at the first call). Op ranges are off by default; while on, every
// dispatch takes the dispatcher's traced path (dispatch/current_op.h), a few hundred
// nanoseconds per operator. Nested operators (an addmm's empty, a linear's t) get nested ranges.
#pragma once

namespace anatomy::cuda::nvtx {

class Range {
 public:
  explicit Range(const char* name);
  ~Range();
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

// An instant marker on the timeline.
void mark(const char* message);

void set_op_ranges_enabled(bool on);
bool op_ranges_enabled();

}  // namespace anatomy::cuda::nvtx
