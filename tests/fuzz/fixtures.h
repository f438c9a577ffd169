// The fuzzer's own view of tensors, written without the engine's kernels: making a TensorSpec
// into a tensor, walking any tensor's elements through its sizes, strides and offset, and
// snapshots that prove a call left an input as it was.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "case.h"

namespace anatomy_fuzz {

// A spec that cannot be made (negative sizes, a layout over 2^24 elements): a typo in a corpus
// line, not a finding.
struct BadCase {
  std::string message;
};

// The tensor a spec describes, with its values written straight into the storage.
anatomy::Tensor materialize(const TensorSpec& spec);

// Storage positions (in elements) of t's elements in row-major order. Only for tensors whose
// reachable range was checked to lie inside their storage.
std::vector<int64_t> positions(const anatomy::Tensor& t);
// Element `pos` of t's storage, as a double.
double read_element(const anatomy::Tensor& t, int64_t pos);

// Everything a call must not change in an input it does not write.
struct Snapshot {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  anatomy::DType dtype{};
  uint32_t version = 0;
  bool has_version = false;
  bool requires_grad = false;
  const void* storage = nullptr;
  size_t nbytes = 0;
  std::vector<unsigned char> bytes;  // the whole storage, so writes outside the view count too
};
Snapshot snapshot(const anatomy::Tensor& t);
// "" when t matches the snapshot; else what changed. With `writable`, values and the version
// may change (the self of an in-place op), its layout may not.
std::string changes(const anatomy::Tensor& t, const Snapshot& s, bool writable);
// "" when no byte of t's storage outside t's own elements changed (an in-place op writes only
// those); else where. Only for tensors whose elements were checked to lie inside the storage.
std::string changes_outside(const anatomy::Tensor& t, const Snapshot& s);

}  // namespace anatomy_fuzz
