// anatomy.tensor(data): a new tensor from nested sequences of Python numbers, from another
// Tensor, or from any object with the buffer protocol (a NumPy array, array.array, memoryview).
// Always a copy: zero-copy exchange is from_dlpack's job.
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "convert.h"

namespace anatomy::python {

namespace {

// What a nested list holds, and where it is heading: the widest kind seen decides the dtype as
// PyTorch's does (any float: the default float; else any int: int64; else bool).
struct NestedValues {
  std::vector<int64_t> sizes;
  std::vector<double> values;
  Scalar::Kind kind = Scalar::Kind::Bool;
  bool sizes_known = false;
};

bool is_nested_sequence(nb::handle h) {
  return PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()) ||
         (PySequence_Check(h.ptr()) && !nb::isinstance<nb::str>(h) && !nb::isinstance<nb::bytes>(h) &&
          !nb::isinstance<Tensor>(h) && !PyObject_CheckBuffer(h.ptr()));
}

void walk(nb::handle h, size_t depth, NestedValues& out) {
  if (is_nested_sequence(h)) {
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    const int64_t n = static_cast<int64_t>(nb::len(seq));
    if (!out.sizes_known && depth == out.sizes.size()) {
      out.sizes.push_back(n);
    } else if (depth >= out.sizes.size() || out.sizes[depth] != n) {
      throw ValueError(fmt::format("tensor: expected a sequence of length {} at dim {} (got {})",
                                   depth < out.sizes.size() ? out.sizes[depth] : 0, depth, n));
    }
    if (n == 0) out.sizes_known = true;
    for (nb::handle item : seq) walk(item, depth + 1, out);
    return;
  }
  if (depth != out.sizes.size() && out.sizes_known) {
    throw ValueError(
        fmt::format("tensor: a number at dim {} where a sequence of length {} was expected", depth, out.sizes[depth]));
  }
  out.sizes_known = true;
  if (depth != out.sizes.size()) {
    throw ValueError(fmt::format("tensor: a number at dim {} where a sequence was expected", depth));
  }
  Scalar s = to_scalar(h, "tensor: an element");
  if (s.kind() > out.kind) out.kind = s.kind();
  out.values.push_back(s.to_double());
  if (s.is_integral() && static_cast<double>(s.to_int()) != out.values.back()) {
    // int64 values beyond 2**53 do not survive the double: keep exact integers apart.
    throw ValueError(fmt::format("tensor: the integer {} is too large to be copied exactly", s.to_int()));
  }
}

DType buffer_dtype(const Py_buffer& view) {
  std::string_view format = view.format != nullptr ? view.format : "B";
  if (!format.empty() &&
      (format[0] == '<' || format[0] == '=' || format[0] == '@' || format[0] == '!' || format[0] == '>')) {
    if (format[0] == '>' || format[0] == '!') throw TypeError("tensor: big-endian buffers are not supported");
    format.remove_prefix(1);
  }
  if (format.size() == 1) {
    const char c = format[0];
    const Py_ssize_t size = view.itemsize;
    if (c == '?') return DType::Bool;
    if (c == 'b') return DType::Int8;
    if (c == 'B') return DType::UInt8;
    if (c == 'e') return DType::Float16;
    if (c == 'f') return DType::Float32;
    if (c == 'd') return DType::Float64;
    if ((c == 'i' || c == 'l' || c == 'q') && size == 4) return DType::Int32;
    if ((c == 'i' || c == 'l' || c == 'q') && size == 8) return DType::Int64;
  }
  throw TypeError(
      fmt::format("tensor: a buffer of format '{}' (itemsize {}) has no anatomy dtype", format, view.itemsize));
}

Tensor from_buffer(nb::handle data) {
  Py_buffer view;
  if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_RECORDS_RO) != 0) throw nb::python_error();
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  const DType dtype = buffer_dtype(view);
  std::vector<int64_t> sizes(view.shape, view.shape + view.ndim);
  Tensor out = empty(sizes, TensorOptions().dtype(dtype));
  // Any strides, negative ones included: the buffer API lays them out in C order.
  if (out.nbytes() > 0 && PyBuffer_ToContiguous(out.data_ptr(), &view, view.len, 'C') != 0) throw nb::python_error();
  return out;
}

}  // namespace

Tensor tensor_from_data(nb::handle data, nb::handle dtype, nb::handle device) {
  const TensorOptions options = to_options(dtype, device);
  Tensor base;
  if (nb::isinstance<Tensor>(data)) {
    base = nb::cast<const Tensor&>(data).detach().clone();
  } else if (PyObject_CheckBuffer(data.ptr()) && !nb::isinstance<nb::bytes>(data) &&
             !nb::isinstance<nb::bytearray>(data)) {
    base = from_buffer(data);
  } else if (is_nested_sequence(data)) {
    NestedValues nested;
    walk(data, 0, nested);
    const DType inferred = nested.kind == Scalar::Kind::Float ? kDefaultFloat
                           : nested.kind == Scalar::Kind::Int ? DType::Int64
                           : nested.values.empty()            ? kDefaultFloat
                                                              : DType::Bool;
    // Through double: exact for every bool, float and int64 value up to 2**53 (checked above);
    // then straight to the dtype asked for, so that float64 values are not rounded to float32.
    base = tensor(nested.values, nested.sizes, TensorOptions().dtype(DType::Float64)).to(options.dtype_or(inferred));
  } else {
    Scalar s = to_scalar(data, "tensor: data");
    const DType inferred = s.is_bool() ? DType::Bool : s.is_integral() ? DType::Int64 : kDefaultFloat;
    base = scalar_tensor(s, TensorOptions().dtype(options.dtype_or(inferred)));
  }
  const DType target = options.dtype_or(base.dtype());
  const Device where = options.device_opt().value_or(base.device());
  if (target != base.dtype() || where != base.device()) base = base.to(where, target);
  return base;
}

}  // namespace anatomy::python
