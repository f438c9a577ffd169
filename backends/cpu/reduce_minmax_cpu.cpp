// CPU: max, min, amax, amin (values; NaN wins), argmax, argmin, max.dim and min.dim (values and
// the index of the first extreme element; a NaN counts as the extreme, the first NaN wins).
#include <limits>

#include "anatomy/backends/cpu/reduce_cpu.h"
#include "anatomy/backends/cpu/reduce_loops.h"

namespace anatomy::cpu {
namespace {

// Values compare in float for the 2-byte floats, as themselves otherwise.
template <typename T>
using cmp_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

// `after` is a better extreme than `before` (max: larger; min: smaller); NaN beats everything.
template <bool IsMax, typename V>
bool better(V after, V before) {
  if (is_nan_value(before)) return false;
  if (is_nan_value(after)) return true;
  return IsMax ? after > before : after < before;
}

template <bool IsMax, typename V>
V worst() {
  if constexpr (std::is_same_v<V, bool>) return !IsMax;
  else if constexpr (std::is_floating_point_v<V>)
    return IsMax ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::infinity();
  else return IsMax ? std::numeric_limits<V>::lowest() : std::numeric_limits<V>::max();
}

template <typename T, bool IsMax>
struct ValueOp {
  using acc_t = cmp_t<T>;
  T* out;
  acc_t identity() const { return worst<IsMax, acc_t>(); }
  acc_t step(acc_t a, T x, int64_t) const { return combine(a, convert<acc_t>(x)); }
  acc_t combine(acc_t a, acc_t b) const { return better<IsMax>(b, a) ? b : a; }
  void write(int64_t o, acc_t a) const { out[o] = convert<T>(a); }
};

template <typename V>
struct ValueIndex {
  V value;
  int64_t index;  // -1: no element yet
};

template <typename T, bool IsMax>
struct IndexOp {
  using acc_t = ValueIndex<cmp_t<T>>;
  T* values;  // null for argmax / argmin
  int64_t* indices;
  acc_t identity() const { return {worst<IsMax, cmp_t<T>>(), -1}; }
  acc_t step(acc_t a, T x, int64_t i) const { return combine(a, {convert<cmp_t<T>>(x), i}); }
  // Partials may arrive in any order (the lanes interleave): ties go to the smaller index.
  acc_t combine(acc_t a, acc_t b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    if (better<IsMax>(b.value, a.value)) return b;
    if (better<IsMax>(a.value, b.value)) return a;
    return b.index < a.index ? b : a;  // equal, or both NaN
  }
  void write(int64_t o, acc_t a) const {
    if (values) values[o] = convert<T>(a.value);
    indices[o] = a.index;
  }
};

}  // namespace

void extreme_loop(ReduceKind kind, const Reduction& r) {
  const Tensor in = dense_reduction_input(r.plan, r.input);
  const bool is_max = kind == ReduceKind::Max || kind == ReduceKind::ArgMax;
  const bool arg = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
  visit_dtype(in.dtype(), r.plan.op(), [&]<typename T>() {
    if (arg || r.indices.defined()) {
      T* values = arg ? nullptr : static_cast<T*>(r.values.data_ptr());
      int64_t* indices = static_cast<int64_t*>(arg ? r.values.data_ptr() : r.indices.data_ptr());
      if (is_max) reduce_kernel<T>(r.plan, in, IndexOp<T, true>{values, indices});
      else reduce_kernel<T>(r.plan, in, IndexOp<T, false>{values, indices});
    } else {
      T* out = static_cast<T*>(r.values.data_ptr());
      if (is_max) reduce_kernel<T>(r.plan, in, ValueOp<T, true>{out});
      else reduce_kernel<T>(r.plan, in, ValueOp<T, false>{out});
    }
  });
}

}  // namespace anatomy::cpu
