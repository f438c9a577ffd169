// ViewInfo: what autograd remembers of a view (PyTorch's ViewInfo and CreationMeta): the base
// it shares storage with, how the view was made, and the version its grad_fn was made at.
//
// Note [View + in-place]
// A view and its base share storage and one version counter, so an in-place op on either
// changes both. Autograd follows PyTorch:
// - A view operator (registered with register_view_derivative) gives its floating-point
//   outputs a ViewInfo whose base is the root base (a view of a view points at the first
//   base) when its input requires grad or is itself a tracked view, in grad mode and in no_grad
//   mode alike (not in inference mode).
// - An in-place op on a view that records (autograd/copy_slices.h) makes the base's grad_fn a
//   CopySlices node wrapping the op's node, then regenerates the view's grad_fn from the base.
// - A view's grad_fn is stale when the shared version moved since it was made: whoever reads it
//   (view_grad_fn below, through gradient_edge and Tensor::grad_fn) gets a new
//   AsStridedBackward0 from the base's current history (the view's sizes, strides and offset
//   relative to the base), so later uses of the view see every in-place change of the base.
// - Views made in no_grad mode from a base that requires grad, the outputs of multi-output
//   views (split, chunk) and the outputs of custom Functions that alias an input cannot be
//   modified in place while recording: the op raises.
#pragma once

#include <cstdint>
#include <memory>

#include "anatomy/autograd/node.h"

namespace anatomy::autograd {

struct DerivativeEntry;

enum class ViewCreation : uint8_t {
  Default,           // made in grad mode by a single-output view operator
  NoGradMode,        // made in no_grad mode from a base that required grad
  MultiOutput,       // one output of a view operator that returns several (split_with_sizes)
  InCustomFunction,  // an output of a custom Function that aliases an input (a view made in
                     // forward, or the input returned as is)
};

struct ViewInfo {
  Tensor base;  // the root base: never itself a tracked view
  ViewCreation creation = ViewCreation::Default;
  const char* creator = "";   // the node name of the operator that made it, for errors (static)
  uint32_t output_nr = 0;     // which output of that operator the view is
  uint32_t attr_version = 0;  // the shared version when grad_fn_ was last set
};

// Gives `out`, made by view operator `entry` from `input`, its ViewInfo (output `output_nr`,
// `multi` when the operator returns several views). Does nothing for non-floating outputs,
// inference tensors, and inputs that neither require grad nor are tracked views. Called after
// the view's grad_fn (if any) is set.
void track_view(const DerivativeEntry& entry, const Tensor& input, const Tensor& out, uint32_t output_nr, bool multi);

// Gives `out`, an output of custom Function node `creator` (a name that lives as long as the
// program) that shares `input`'s storage, a ViewInfo of creation InCustomFunction. Nothing for
// non-floating outputs and inference tensors, like track_view.
void track_custom_function_view(const char* creator, const Tensor& input, const Tensor& out, uint32_t output_nr);

class AutogradMeta;
// The view's grad_fn, regenerated first if the shared version moved (Note [View + in-place]).
const IntrusivePtr<Node>& view_grad_fn(const Tensor& view, AutogradMeta& m);
// Makes the view's grad_fn an AsStridedBackward0 from its base's current history (none when the
// base does not require grad) and records the version it was made at.
void regenerate_view_grad_fn(const Tensor& view, AutogradMeta& m);

// base.as_strided(sizes, strides, offset) as a tracked view whose grad_fn keeps only the two
// geometries, never `base` itself (the aten::as_strided formula saves its input, so writing into
// the base afterwards would invalidate it). CopySlices uses it to address the view's slice of
// the gradient when building a graph for double backward.
Tensor tracked_as_strided(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset);

// Whether a regeneration would give the view a grad_fn: its version moved and its base
// requires grad. The fast path's requires_grad test asks this only of views with no grad_fn.
bool view_needs_refresh(const ViewInfo& v);

}  // namespace anatomy::autograd
