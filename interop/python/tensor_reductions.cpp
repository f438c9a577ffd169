// Reductions of anatomy.Tensor and their functions: sum, mean, prod, max/min (of everything, along
// a dim with values and indices, or of two tensors), amax, amin, argmax, argmin, std, var, all,
// any, norm, logsumexp, cumsum, sort, topk. A (values, indices) pair comes back as a named tuple
// of anatomy.return_types, as torch.return_types: `x.max(0).values` or `v, i = x.max(0)`.
#include <nanobind/stl/optional.h>

#include <fmt/format.h>

#include <tuple>

#include "bindings.h"
#include "convert.h"
#include "tensor_binding.h"

namespace anatomy::python {

namespace {

using T = const Tensor&;
using Dtype = std::optional<DType>;

// anatomy.return_types.<name>: collections.namedtuple(name, ["values", "indices"]). Made once at
// import; kept for the life of the process (the module holds them too).
struct ReturnTypes {
  PyObject *max, *min, *sort, *topk, *median, *kthvalue, *mode, *cummax, *cummin, *aminmax;
};
ReturnTypes return_types;

PyObject* make_return_type(nb::module_& sub, const char* name, const char* first = "values",
                           const char* second = "indices") {
  nb::object namedtuple = nb::module_::import_("collections").attr("namedtuple");
  nb::list fields;
  fields.append(first);
  fields.append(second);
  nb::object type = namedtuple(name, fields, nb::arg("module") = "anatomy.return_types");
  sub.attr(name) = type;
  return type.inc_ref().ptr();
}

nb::object pair(PyObject* type, const std::tuple<Tensor, Tensor>& values) {
  return nb::steal(PyObject_CallFunctionObjArgs(type, nb::cast(std::get<0>(values)).ptr(),
                                                nb::cast(std::get<1>(values)).ptr(), nullptr));
}

// std and var: dim=None, unbiased (a bool, positional or keyword), keepdim, and the keyword
// correction, as PyTorch's overloads. A bool in dim's place is unbiased (x.std(False)).
double correction_of(nb::handle unbiased, nb::handle correction) {
  if (!correction.is_none()) {
    if (!unbiased.is_none()) throw TypeError("std/var: give either unbiased or correction, not both");
    return nb::cast<double>(correction);
  }
  if (!unbiased.is_none()) return nb::cast<bool>(unbiased) ? 1.0 : 0.0;
  return 1.0;
}

template <typename F>
void def_spread(TensorClass& cls, nb::module_& m, const char* name, F f) {
  def_method_and_function(
      cls, m, name,
      [f](T t, nb::handle dim, nb::handle unbiased, bool keepdim, nb::handle correction) {
        if (PyBool_Check(dim.ptr())) {
          if (!unbiased.is_none()) throw TypeError("std/var: unbiased is given twice");
          unbiased = dim;
          dim = nb::none();
        }
        std::optional<std::vector<int64_t>> dims = to_optional_dims(dim);
        return f(t, dims_ref(dims), correction_of(unbiased, correction), keepdim);
      },
      nb::arg("dim") = nb::none(), nb::arg("unbiased") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
      nb::arg("correction") = nb::none());
}

void bind_sum_like(TensorClass& cls, nb::module_& m) {
#define ANATOMY_PY_SUM_LIKE(name)                                         \
  def_method_and_function(                                                \
      cls, m, #name,                                                      \
      [](T t, nb::handle dim, bool keepdim, nb::handle dtype_arg) {       \
        const Dtype dtype = to_optional_dtype(dtype_arg);                 \
        std::optional<std::vector<int64_t>> dims = to_optional_dims(dim); \
        return anatomy::name(t, dims_ref(dims), keepdim, dtype);          \
      },                                                                  \
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(), nb::arg("dtype") = nb::none());
  ANATOMY_PY_SUM_LIKE(sum)
  ANATOMY_PY_SUM_LIKE(mean)
  ANATOMY_PY_SUM_LIKE(prod)
  ANATOMY_PY_SUM_LIKE(nansum)
  ANATOMY_PY_SUM_LIKE(nanmean)
#undef ANATOMY_PY_SUM_LIKE
#define ANATOMY_PY_DIMS_KEEPDIM(name)                                     \
  def_method_and_function(                                                \
      cls, m, #name,                                                      \
      [](T t, nb::handle dim, bool keepdim) {                             \
        std::optional<std::vector<int64_t>> dims = to_optional_dims(dim); \
        return anatomy::name(t, dims_ref(dims), keepdim);                 \
      },                                                                  \
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  ANATOMY_PY_DIMS_KEEPDIM(amax)
  ANATOMY_PY_DIMS_KEEPDIM(amin)
  ANATOMY_PY_DIMS_KEEPDIM(all)
  ANATOMY_PY_DIMS_KEEPDIM(any)
  ANATOMY_PY_DIMS_KEEPDIM(logsumexp)
#undef ANATOMY_PY_DIMS_KEEPDIM
  def_method_and_function(
      cls, m, "argmax", [](T t, std::optional<int64_t> dim, bool keepdim) { return t.argmax(dim, keepdim); },
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  def_method_and_function(
      cls, m, "argmin", [](T t, std::optional<int64_t> dim, bool keepdim) { return t.argmin(dim, keepdim); },
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  def_method_and_function(
      cls, m, "count_nonzero",
      [](T t, nb::handle dim) {
        std::optional<std::vector<int64_t>> dims = to_optional_dims(dim);
        return t.count_nonzero(dims_ref(dims));
      },
      nb::arg("dim") = nb::none());
  def_method_and_function(
      cls, m, "norm",
      [](T t, const Scalar& p, nb::handle dim, bool keepdim) {
        std::optional<std::vector<int64_t>> dims = to_optional_dims(dim);
        return t.norm(p, dims_ref(dims), keepdim);
      },
      nb::arg("p") = 2, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  def_spread(cls, m, "std", [](T t, OptionalIntArrayRef d, double c, bool k) { return t.std(d, c, k); });
  def_spread(cls, m, "var", [](T t, OptionalIntArrayRef d, double c, bool k) { return t.var(d, c, k); });
}

void bind_values_and_indices(TensorClass& cls, nb::module_& m) {
  nb::module_ sub = m.def_submodule("return_types", "Named tuples of (values, indices), as torch.return_types.");
  return_types = {make_return_type(sub, "max"),    make_return_type(sub, "min"),
                  make_return_type(sub, "sort"),   make_return_type(sub, "topk"),
                  make_return_type(sub, "median"), make_return_type(sub, "kthvalue"),
                  make_return_type(sub, "mode"),   make_return_type(sub, "cummax"),
                  make_return_type(sub, "cummin"), make_return_type(sub, "aminmax", "min", "max")};
  // max() of everything, max(dim, keepdim) with indices, max(other): the maximum of two tensors.
  def_method_and_function(cls, m, "max", [](T t) { return t.max(); });
  def_method_and_function(
      cls, m, "max", [](T t, int64_t dim, bool keepdim) { return pair(return_types.max, t.max(dim, keepdim)); },
      nb::arg("dim"), nb::arg("keepdim") = false);
  def_method_and_function(
      cls, m, "max", [](T t, T other) { return t.maximum(other); }, nb::arg("other"));
  def_method_and_function(cls, m, "min", [](T t) { return t.min(); });
  def_method_and_function(
      cls, m, "min", [](T t, int64_t dim, bool keepdim) { return pair(return_types.min, t.min(dim, keepdim)); },
      nb::arg("dim"), nb::arg("keepdim") = false);
  def_method_and_function(
      cls, m, "min", [](T t, T other) { return t.minimum(other); }, nb::arg("other"));
  def_method_and_function(cls, m, "median", [](T t) { return t.median(); });
  def_method_and_function(
      cls, m, "median",
      [](T t, int64_t dim, bool keepdim) { return pair(return_types.median, t.median(dim, keepdim)); }, nb::arg("dim"),
      nb::arg("keepdim") = false);
  def_method_and_function(
      cls, m, "sort",
      [](T t, int64_t dim, bool descending) { return pair(return_types.sort, t.sort(dim, descending)); },
      nb::arg("dim") = -1, nb::arg("descending") = false);
  def_method_and_function(
      cls, m, "argsort", [](T t, int64_t dim, bool descending) { return t.argsort(dim, descending); },
      nb::arg("dim") = -1, nb::arg("descending") = false);
  def_method_and_function(
      cls, m, "topk",
      [](T t, int64_t k, int64_t dim, bool largest, bool sorted) {
        return pair(return_types.topk, t.topk(k, dim, largest, sorted));
      },
      nb::arg("k"), nb::arg("dim") = -1, nb::arg("largest") = true, nb::arg("sorted") = true);
  def_method_and_function(
      cls, m, "kthvalue",
      [](T t, int64_t k, int64_t dim, bool keepdim) {
        return pair(return_types.kthvalue, t.kthvalue(k, dim, keepdim));
      },
      nb::arg("k"), nb::arg("dim") = -1, nb::arg("keepdim") = false);
  def_method_and_function(
      cls, m, "mode", [](T t, int64_t dim, bool keepdim) { return pair(return_types.mode, t.mode(dim, keepdim)); },
      nb::arg("dim") = -1, nb::arg("keepdim") = false);
  def_method_and_function(
      cls, m, "cummax", [](T t, int64_t dim) { return pair(return_types.cummax, t.cummax(dim)); }, nb::arg("dim"));
  def_method_and_function(
      cls, m, "cummin", [](T t, int64_t dim) { return pair(return_types.cummin, t.cummin(dim)); }, nb::arg("dim"));
  def_method_and_function(
      cls, m, "aminmax",
      [](T t, std::optional<int64_t> dim, bool keepdim) { return pair(return_types.aminmax, t.aminmax(dim, keepdim)); },
      nb::kw_only(), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  def_method_and_function(
      cls, m, "cumsum",
      [](T t, int64_t dim, nb::handle dtype_arg) {
        const Dtype dtype = to_optional_dtype(dtype_arg);
        return t.cumsum(dim, dtype);
      },
      nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
  def_method_and_function(
      cls, m, "cumprod",
      [](T t, int64_t dim, nb::handle dtype_arg) {
        const Dtype dtype = to_optional_dtype(dtype_arg);
        return t.cumprod(dim, dtype);
      },
      nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
  def_in_place(
      cls, "cumsum_",
      [](T t, int64_t dim, nb::handle dtype_arg) -> InPlace { return t.cumsum_(dim, to_optional_dtype(dtype_arg)); },
      nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
  def_in_place(
      cls, "cumprod_",
      [](T t, int64_t dim, nb::handle dtype_arg) -> InPlace { return t.cumprod_(dim, to_optional_dtype(dtype_arg)); },
      nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
}

}  // namespace

void bind_tensor_reductions(nb::module_& m) {
  TensorClass cls = tensor_class(m);
  bind_sum_like(cls, m);
  bind_values_and_indices(cls, m);
}

}  // namespace anatomy::python
