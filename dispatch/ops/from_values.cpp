// Tensors from C++ values and from user memory: tensor({...}), scalar_tensor, from_blob, and
// manual_seed.
#include <cstring>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/generator.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {
namespace {

// Owns the user's deleter while the storage lives.
struct BlobContext {
  void* data;
  BlobDeleter deleter;
};

void delete_blob(void* ctx) {
  auto* c = static_cast<BlobContext*>(ctx);
  if (c->deleter) c->deleter(c->data);
  delete c;
}

// Builds a CPU tensor of `values` (converted to dtype), then moves it to the options' device.
template <typename T>
Tensor from_values(const T* values, int64_t n, IntArrayRef sizes, DType default_dtype, const TensorOptions& o) {
  DType dtype = o.dtype_or(default_dtype);
  ANATOMY_CHECK(checked_numel(sizes, "tensor") == n, ValueError, "tensor: {} values do not fill shape [{}]", n,
                fmt::join(sizes, ", "));
  Tensor cpu = empty(sizes, TensorOptions().dtype(dtype));
  visit_dtype(dtype, "tensor", [&]<typename D>() {
    D* out = static_cast<D*>(cpu.data_ptr());
    for (int64_t i = 0; i < n; ++i) out[i] = convert<D>(values[i]);
  });
  Tensor result = cpu.to(o.device_opt().value_or(kCPU));
  if (o.requires_grad()) result.requires_grad_(true);
  return result;
}

template <typename T>
Tensor from_rows(std::initializer_list<std::initializer_list<T>> rows, DType default_dtype, const TensorOptions& o) {
  int64_t r = static_cast<int64_t>(rows.size());
  int64_t c = r ? static_cast<int64_t>(rows.begin()->size()) : 0;
  std::vector<T> flat;
  for (const auto& row : rows) {
    ANATOMY_CHECK(static_cast<int64_t>(row.size()) == c, ValueError, "tensor: rows have different lengths ({} and {})",
                  c, row.size());
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return from_values(flat.data(), r * c, {r, c}, default_dtype, o);
}

}  // namespace

Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, TensorOptions o) {
  return from_rows(rows, kDefaultFloat, o);
}
Tensor tensor(std::initializer_list<std::initializer_list<int64_t>> rows, TensorOptions o) {
  return from_rows(rows, DType::Int64, o);
}
Tensor tensor(std::initializer_list<std::initializer_list<int>> rows, TensorOptions o) {
  return from_rows(rows, DType::Int64, o);
}

template <typename T>
Tensor tensor(const std::vector<T>& values, IntArrayRef sizes, TensorOptions o) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());  // vector<bool> has no data()
    return from_values(reinterpret_cast<const bool*>(bytes.data()), static_cast<int64_t>(values.size()), sizes,
                       DType::Bool, o);
  } else {
    return from_values(values.data(), static_cast<int64_t>(values.size()), sizes, cpp_dtype_v<T>, o);
  }
}
#define ANATOMY_TENSOR_FROM_VECTOR(type, name, short_name, long_name) \
  template Tensor tensor<type>(const std::vector<type>&, IntArrayRef, TensorOptions);
ANATOMY_FORALL_DTYPES(ANATOMY_TENSOR_FROM_VECTOR)
#undef ANATOMY_TENSOR_FROM_VECTOR

Tensor scalar_tensor(const Scalar& value, TensorOptions o) {
  DType dtype = o.dtype_or(value.is_bool() ? DType::Bool : value.is_integral() ? DType::Int64 : kDefaultFloat);
  Tensor t = empty({}, TensorOptions().dtype(dtype).device(o.device_opt().value_or(kCPU)));
  fill_(t, value);
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions o, BlobDeleter deleter) {
  return from_blob(data, sizes, contiguous_strides(sizes), o, std::move(deleter));
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions o, BlobDeleter deleter) {
  ANATOMY_CHECK(sizes.size() == strides.size(), ValueError, "from_blob: sizes [{}] and strides [{}] differ in length",
                fmt::join(sizes, ", "), fmt::join(strides, ", "));
  int64_t numel = checked_numel(sizes, "from_blob");
  for (size_t i = 0; i < sizes.size(); ++i) {
    ANATOMY_CHECK(strides[i] >= 0, ValueError, "from_blob: negative stride {} at dim {}", strides[i], i);
  }
  int64_t extent = required_storage_elements(sizes, strides, "from_blob");
  ANATOMY_CHECK(data != nullptr || numel == 0, ValueError, "from_blob: null data for {} elements", numel);
  DType dtype = o.dtype_or(kDefaultFloat);
  Device device = o.device_opt().value_or(kCPU);
  auto* ctx = new BlobContext{data, std::move(deleter)};
  DataPtr ptr(data, ctx, &delete_blob, device);
  auto storage = Storage::make(std::move(ptr), static_cast<size_t>(extent) * element_size(dtype), nullptr);
  Tensor t(IntrusivePtr<TensorImpl>::make(std::move(storage), dtype, sizes, strides, 0));
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}

void manual_seed(uint64_t seed) {
  for (int i = 0; i < kNumDeviceTypes; ++i) default_generator(static_cast<DeviceType>(i)).manual_seed(seed);
}

}  // namespace anatomy
