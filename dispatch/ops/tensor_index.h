// Python's indexing from C++, spelled as ATen's at::indexing:
//
//   using namespace anatomy::indexing;
//   x.index({Slice(1, None), 0, "...", None})     // x[1:, 0, ..., None]
//   x.index_put_({Slice(), idx}, 0.5)              // x[:, idx] = 0.5
//
// Integers, slices, None and the ellipsis are basic indexing: they make a view of x. A tensor
// (integer indices or a bool/uint8 mask) or a bool is advanced indexing: it runs the `index` /
// `index_put_` operators (dispatch/ops/indexing.h) on that view, and the result is a copy.
// docs/tensor.md ("Indexing") has the rules and the decisions where PyTorch leaves room.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>

#include "anatomy/core/tensor.h"

namespace anatomy::indexing {

// x.index({None}) inserts a dim of size 1, as x[None].
inline constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndexType {
  explicit EllipsisIndexType() = default;
};
// Stands for as many full slices as the dims the other indices leave; "..." spells it too.
inline constexpr EllipsisIndexType Ellipsis = EllipsisIndexType();

// start:stop:step. A missing bound is the start or the end of the dim; negative bounds count
// from the end and out-of-range ones are clamped, as in Python. The step must be positive
// (ValueError when used).
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start_(start), stop_(stop), step_(step) {}
  std::optional<int64_t> start() const { return start_; }
  std::optional<int64_t> stop() const { return stop_; }
  int64_t step() const { return step_.value_or(1); }
  bool has_step() const { return step_.has_value(); }

 private:
  std::optional<int64_t> start_, stop_, step_;
};

enum class TensorIndexType { None, Ellipsis, Integer, Boolean, Slice, Tensor };

// One entry of x.index({...}). Implicit from every spelling a user writes in the braces.
class TensorIndex {
 public:
  TensorIndex(std::nullopt_t) : type_(TensorIndexType::None) {}
  TensorIndex(EllipsisIndexType) : type_(TensorIndexType::Ellipsis) {}
  // Only "..." (ValueError for any other string).
  TensorIndex(const char* str);
  // Any integer type; negative counts from the end of the dim.
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  TensorIndex(I integer) : integer_(static_cast<int64_t>(integer)), type_(TensorIndexType::Integer) {
    if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t)) check_fits_int64(integer);
  }
  // true inserts a dim of size 1, false one of size 0 (as PyTorch: an advanced index).
  template <typename B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  TensorIndex(B boolean) : boolean_(boolean), type_(TensorIndexType::Boolean) {}
  TensorIndex(Slice slice) : slice_(slice), type_(TensorIndexType::Slice) {}
  // Integer indices (int64, int32) or a mask (bool, uint8); an undefined Tensor is a full slice,
  // as in the std::vector<Tensor> form of Tensor::index.
  TensorIndex(Tensor tensor) : tensor_(std::move(tensor)), type_(TensorIndexType::Tensor) {}

  TensorIndexType type() const { return type_; }
  bool is_none() const { return type_ == TensorIndexType::None; }
  bool is_ellipsis() const { return type_ == TensorIndexType::Ellipsis; }
  bool is_integer() const { return type_ == TensorIndexType::Integer; }
  bool is_boolean() const { return type_ == TensorIndexType::Boolean; }
  bool is_slice() const { return type_ == TensorIndexType::Slice; }
  bool is_tensor() const { return type_ == TensorIndexType::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  static void check_fits_int64(uint64_t integer);

  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
  TensorIndexType type_;
};

// Python's spelling: "1:", "::2", "None", "...", "True", "tensor([3], int64)".
std::ostream& operator<<(std::ostream& os, const Slice& slice);
std::ostream& operator<<(std::ostream& os, const TensorIndex& index);
// "[1:, 0, ..., None]": how errors name the indices.
std::string to_string(ArrayRef<TensorIndex> indices);

// self[indices]. IndexError for an integer out of range, too many indices or two ellipses,
// ValueError for a step that is not positive, TypeError for a tensor of another dtype.
Tensor get_item(const Tensor& self, ArrayRef<TensorIndex> indices);
// self[indices] = value: the value broadcasts to the indexed shape (leading size-1 dims of the
// value are ignored, as in PyTorch). A copy_ (or fill_) into the view for basic indices,
// index_put_ on the view otherwise. On error self is unchanged.
void set_item(const Tensor& self, ArrayRef<TensorIndex> indices, const Tensor& value);
void set_item(const Tensor& self, ArrayRef<TensorIndex> indices, const Scalar& value);

}  // namespace anatomy::indexing
