// The factories of the anatomy package: tensor(data), zeros, ones, empty, full, arange, linspace,
// eye, rand, randn, randint, randperm, the _like forms, manual_seed and the generators' state
// (get_rng_state, set_rng_state, initial_seed), each factory with PyTorch's dtype=,
// device= and requires_grad= keywords (empty and empty_like: memory_format= too) and sizes as
// varargs or one sequence (zeros(2, 3) and zeros((2, 3))).
#include <nanobind/stl/optional.h>

#include <fmt/format.h>

#include "bindings.h"
#include "convert.h"
#include "ivalue_convert.h"

namespace anatomy::python {

namespace {

#define ANATOMY_PY_OPTIONS \
  nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(), nb::arg("requires_grad") = false

using Size = const nb::args&;
using H = nb::handle;

// A default generator's state as PyTorch's CUDA generator gives it: 16 bytes in a uint8 CPU
// tensor, the seed then the offset, each a little-endian uint64 (a Philox generator is these two).
Tensor rng_state(DeviceType type) {
  const Generator& g = default_generator(type);
  Tensor out = empty({16}, TensorOptions().dtype(DType::UInt8));
  auto* bytes = out.data_ptr<uint8_t>();
  const uint64_t words[2] = {g.seed(), g.offset()};
  for (int w = 0; w < 2; ++w) {
    for (int b = 0; b < 8; ++b) bytes[8 * w + b] = static_cast<uint8_t>(words[w] >> (8 * b));
  }
  return out;
}

void set_rng_state(DeviceType type, const Tensor& state) {
  ANATOMY_CHECK(state.defined() && state.dtype() == DType::UInt8 && state.dim() == 1 && state.numel() == 16, TypeError,
                "set_rng_state: the state must be a 1-D uint8 tensor of 16 bytes (get_rng_state's), got {}",
                state.defined() ? fmt::format("{} {}", anatomy::name(state.dtype()), shape_string(state.sizes()))
                                : std::string("an undefined tensor"));
  const Tensor host = state.to(kCPU).contiguous();
  const auto* bytes = host.data_ptr<uint8_t>();
  uint64_t words[2] = {0, 0};
  for (int w = 0; w < 2; ++w) {
    for (int b = 0; b < 8; ++b) words[w] |= static_cast<uint64_t>(bytes[8 * w + b]) << (8 * b);
  }
  Generator& g = default_generator(type);
  g.manual_seed(words[0]);
  g.set_offset(words[1]);
}

void bind_sized(nb::module_& m) {
#define ANATOMY_PY_SIZED(name)                                             \
  m.def(                                                                   \
      #name,                                                               \
      [](Size size, H dtype, H device, bool rg) {                          \
        return name(sizes_from_args(size), to_options(dtype, device, rg)); \
      },                                                                   \
      nb::arg("size"), ANATOMY_PY_OPTIONS);
  ANATOMY_PY_SIZED(zeros)
  ANATOMY_PY_SIZED(ones)
  ANATOMY_PY_SIZED(rand)
  ANATOMY_PY_SIZED(randn)
#undef ANATOMY_PY_SIZED
  m.def(
      "empty",
      [](Size size, H dtype, H device, bool rg, std::optional<MemoryFormat> memory_format) {
        return empty(sizes_from_args(size), to_options(dtype, device, rg), memory_format);
      },
      nb::arg("size"), ANATOMY_PY_OPTIONS, nb::arg("memory_format") = nb::none());
  m.def(
      "full",
      [](H size, const Scalar& fill, H dtype, H device, bool rg) {
        return full(to_int_list(size), fill, to_options(dtype, device, rg));
      },
      nb::arg("size"), nb::arg("fill_value"), ANATOMY_PY_OPTIONS);
  m.def(
      "randint",
      [](const nb::args& args, H size, H dtype, H device, bool rg) {
        // randint(high, size) or randint(low, high, size); size may be given by keyword.
        std::vector<int64_t> ints;
        std::optional<std::vector<int64_t>> sizes;
        for (nb::handle a : args) {
          if (PyIndex_Check(a.ptr())) {
            ints.push_back(to_int(a, "randint"));
          } else {
            sizes = to_int_list(a, "size");
          }
        }
        if (!size.is_none()) sizes = to_int_list(size, "size");
        if (!sizes || ints.empty() || ints.size() > 2) {
          throw TypeError("randint(low=0, high, size): expected one or two ints and a size");
        }
        TensorOptions o = to_options(dtype, device, rg);
        return ints.size() == 1 ? randint(ints[0], *sizes, o) : randint(ints[0], ints[1], *sizes, o);
      },
      nb::arg("args"), nb::kw_only(), nb::arg("size") = nb::none(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false);
}

void bind_ranges(nb::module_& m) {
  m.def(
      "arange",
      [](const Scalar& a, std::optional<Scalar> b, const Scalar& step, H dtype, H device, bool rg) {
        TensorOptions o = to_options(dtype, device, rg);
        return b ? arange(a, *b, step, o) : arange(a, o);
      },
      nb::arg("start"), nb::arg("end") = nb::none(), nb::arg("step") = 1, ANATOMY_PY_OPTIONS);
  m.def(
      "linspace",
      [](const Scalar& start, const Scalar& end, int64_t steps, H dtype, H device, bool rg) {
        return linspace(start, end, steps, to_options(dtype, device, rg));
      },
      nb::arg("start"), nb::arg("end"), nb::arg("steps"), ANATOMY_PY_OPTIONS);
  m.def(
      "eye",
      [](int64_t n, std::optional<int64_t> mcols, H dtype, H device, bool rg) {
        return eye(n, mcols, to_options(dtype, device, rg));
      },
      nb::arg("n"), nb::arg("m") = nb::none(), ANATOMY_PY_OPTIONS);
  m.def(
      "randperm", [](int64_t n, H dtype, H device, bool rg) { return randperm(n, to_options(dtype, device, rg)); },
      nb::arg("n"), ANATOMY_PY_OPTIONS);
}

void bind_like(nb::module_& m) {
#define ANATOMY_PY_LIKE(name)                                                                                    \
  m.def(                                                                                                         \
      #name, [](const Tensor& t, H dtype, H device, bool rg) { return name(t, to_options(dtype, device, rg)); }, \
      nb::arg("input"), ANATOMY_PY_OPTIONS);
  ANATOMY_PY_LIKE(zeros_like)
  ANATOMY_PY_LIKE(ones_like)
  ANATOMY_PY_LIKE(rand_like)
  ANATOMY_PY_LIKE(randn_like)
#undef ANATOMY_PY_LIKE
  m.def(
      "empty_like",
      [](const Tensor& t, H dtype, H device, bool rg, std::optional<MemoryFormat> memory_format) {
        return empty_like(t, to_options(dtype, device, rg), memory_format);
      },
      nb::arg("input"), ANATOMY_PY_OPTIONS, nb::arg("memory_format") = nb::none());
  m.def(
      "full_like",
      [](const Tensor& t, const Scalar& fill, H dtype, H device, bool rg) {
        return full_like(t, fill, to_options(dtype, device, rg));
      },
      nb::arg("input"), nb::arg("fill_value"), ANATOMY_PY_OPTIONS);
}

}  // namespace

void bind_factories(nb::module_& m) {
  bind_memory_format(m);  // the type of empty's and empty_like's memory_format=
  m.def(
      "tensor",
      [](H data, H dtype, H device, bool requires_grad) {
        Tensor t = tensor_from_data(data, dtype, device);
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      nb::arg("data"), ANATOMY_PY_OPTIONS);
  m.def(
      "scalar_tensor",
      [](const Scalar& s, H dtype, H device, bool rg) { return scalar_tensor(s, to_options(dtype, device, rg)); },
      nb::arg("s"), ANATOMY_PY_OPTIONS);
  bind_sized(m);
  bind_ranges(m);
  bind_like(m);
  m.def(
      "manual_seed",
      [](nb::handle seed) {
        // Any Python int: PyTorch takes the low 64 bits of negative and large seeds alike.
        if (!PyLong_Check(seed.ptr()) || PyBool_Check(seed.ptr())) throw TypeError("manual_seed: seed must be an int");
        manual_seed(PyLong_AsUnsignedLongLongMask(seed.ptr()));
      },
      nb::arg("seed"));
  m.def("initial_seed", [] { return default_generator(DeviceType::CPU).seed(); });
  m.def("get_rng_state", [] { return rng_state(DeviceType::CPU); });
  m.def(
      "set_rng_state", [](const Tensor& state) { set_rng_state(DeviceType::CPU, state); }, nb::arg("new_state"));
  m.def("_cuda_get_rng_state", [] { return rng_state(DeviceType::CUDA); });
  m.def(
      "_cuda_set_rng_state", [](const Tensor& state) { set_rng_state(DeviceType::CUDA, state); }, nb::arg("new_state"));
}

}  // namespace anatomy::python
