// The Python side of DLPack (interop/dlpack.h does the C++ side): Tensor.__dlpack__ and
// __dlpack_device__, anatomy.from_dlpack for any object with the protocol or a capsule, and the
// NumPy and CUDA array interfaces built on them (numpy(), __array__,
// __cuda_array_interface__).
//
// Capsules follow the protocol's rules: a fresh one is named "dltensor" (or
// "dltensor_versioned"); the consumer renames it "used_dltensor" ("used_dltensor_versioned")
// when it takes ownership, and the capsule's destructor frees the tensor only if nobody did.
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/interop/dlpack.h"
#include "bindings.h"
#include "convert.h"

namespace anatomy::python {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kUsedLegacyName = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";

// Frees an unconsumed capsule's tensor. Runs during garbage collection, possibly with an
// exception already set: that state is kept around the capsule calls.
template <typename Managed>
void capsule_destructor(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed (renamed "used_...")
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  PyErr_Restore(type, value, traceback);
}
void legacy_capsule_destructor(PyObject* capsule) { capsule_destructor<DLManagedTensor>(capsule, kLegacyName); }
void versioned_capsule_destructor(PyObject* capsule) {
  capsule_destructor<DLManagedTensorVersioned>(capsule, kVersionedName);
}

// (device type, device id) as DLPack numbers them; a CUDA tensor whose device says only "cuda"
// is on the current device.
std::pair<int, int> dlpack_device(const Tensor& t) {
  Device d = t.device();
  if (d.is_cpu()) return {kDLCPU, 0};
  if (d.is_cuda()) return {kDLCUDA, d.has_index() ? d.index() : cuda::current_device()};
  throw DeviceError(fmt::format("__dlpack__: a tensor on {} cannot be exported (DLPack speaks cpu and cuda)", d.str()));
}

// The stream argument of __dlpack__ as interop::order_for_consumer takes it. The protocol says:
// None means the legacy default stream for CUDA, and must be None (or -1) for the CPU.
std::intptr_t consumer_stream(const Tensor& t, nb::handle stream) {
  if (!t.device().is_cuda()) {
    if (!stream.is_none() && to_int(stream, "__dlpack__: stream") != -1) {
      throw ValueError(fmt::format("__dlpack__: stream must be None for a tensor on {}, got {}", t.device().str(),
                                   nb::cast<std::string>(nb::str(stream))));
    }
    return -1;
  }
  if (stream.is_none()) return 1;
  int64_t s = to_int(stream, "__dlpack__: stream");
  if (s == 0) throw ValueError("__dlpack__: stream 0 is ambiguous for CUDA; pass 1 for the legacy default stream");
  return static_cast<std::intptr_t>(s);
}

// The tensor to export when the consumer asks for dl_device and copy (the array API's rules:
// copy=True always copies, copy=False never does, None copies only to change device).
std::pair<Tensor, bool> exported_tensor(const Tensor& t, nb::handle dl_device, std::optional<bool> copy) {
  Device target = t.device();
  if (!dl_device.is_none()) {
    auto [type, id] = nb::cast<std::pair<int, int>>(dl_device);
    if (type == kDLCPU) {
      target = kCPU;
    } else if (type == kDLCUDA) {
      target = Device(DeviceType::CUDA, static_cast<Device::Index>(id));
    } else {
      throw nb::buffer_error(fmt::format("__dlpack__: cannot export to DLPack device type {}", type).c_str());
    }
  }
  bool same_device =
      target.type() == t.device().type() && (!target.is_cuda() || dlpack_device(t).second == target.index());
  if (!same_device && copy == false) {
    throw nb::buffer_error(fmt::format("__dlpack__: dl_device asks for {} but the tensor is on {} and copy=False",
                                       target.str(), t.device().str())
                               .c_str());
  }
  if (!same_device) return {t.to(target), true};  // a transfer is a copy already
  if (copy == true) return {t.clone(), true};
  return {t, false};
}

nb::object dlpack(const Tensor& self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                  std::optional<bool> copy) {
  auto [t, copied] = exported_tensor(self, dl_device, copy);
  interop::order_for_consumer(t, consumer_stream(t, stream));
  bool versioned = false;
  if (!max_version.is_none()) {
    auto [major, minor] = nb::cast<std::pair<int, int>>(max_version);
    (void)minor;
    versioned = major >= 1;
  }
  PyObject* capsule;
  if (versioned) {
    DLManagedTensorVersioned* m = interop::to_dlpack_versioned(t, copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0);
    capsule = PyCapsule_New(m, kVersionedName, versioned_capsule_destructor);
    if (capsule == nullptr) m->deleter(m);
  } else {
    DLManagedTensor* m = interop::to_dlpack(t);
    capsule = PyCapsule_New(m, kLegacyName, legacy_capsule_destructor);
    if (capsule == nullptr) m->deleter(m);
  }
  if (capsule == nullptr) throw nb::python_error();
  return nb::steal(capsule);
}

// Imports a capsule and marks it consumed; refuses one that was consumed already.
Tensor import_capsule(nb::handle capsule) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, kVersionedName)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kVersionedName));
    Tensor t = interop::from_dlpack(m);
    PyCapsule_SetName(c, kUsedVersionedName);
    return t;
  }
  if (PyCapsule_IsValid(c, kLegacyName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kLegacyName));
    Tensor t = interop::from_dlpack(m);
    PyCapsule_SetName(c, kUsedLegacyName);
    return t;
  }
  if (PyCapsule_IsValid(c, kUsedLegacyName) || PyCapsule_IsValid(c, kUsedVersionedName)) {
    throw ValueError("from_dlpack: this capsule was consumed already (a DLPack capsule can be imported once)");
  }
  const char* name = PyCapsule_GetName(c);
  PyErr_Clear();
  throw TypeError(fmt::format("from_dlpack: a capsule named '{}' is not a DLPack tensor (expected '{}' or '{}')",
                              name ? name : "(null)", kLegacyName, kVersionedName));
}

// The stream the producer should order its work before: the current stream of the device the
// data is on, spelled as the protocol spells it (1 for the legacy default stream).
nb::object stream_for_producer(nb::handle obj) {
  nb::tuple device = nb::cast<nb::tuple>(obj.attr("__dlpack_device__")());
  int type = nb::cast<int>(device[0]);
  if (type != kDLCUDA) return nb::none();
  int index = nb::cast<int>(device[1]);
  return nb::int_(reinterpret_cast<std::intptr_t>(cuda::current_stream(index).handle()));
}

// Note [Importing a torch.Tensor]
// torch's Tensor.__dlpack__ spends about 10 us of Python on CUDA stream objects whenever the
// consumer names a stream (torch.cuda.default_stream() and current_stream(), 6.8 and 4.1 us on an
// H100 host; with stream=-1 the call takes 2.4 us), five times the rest of an import. So a
// torch.Tensor of that exact type (a subclass, or an active torch function mode, may export
// otherwise) is imported through torch's own C entry points, and the handshake is made from this
// side: torch._C._cuda_getCurrentRawStream(index) names torch's current stream on the tensor's
// device, torch._C._to_dlpack makes the capsule, and the current stream here waits for torch's
// through an event (interop::order_after_producer): what __dlpack__ would have had torch do. A
// tensor that requires grad, has its conjugate bit set or is not strided takes the protocol,
// where torch raises its own error, as does a device other than the CPU and CUDA, and any
// torch whose entry points are not found. torch is looked for in sys.modules, never imported.
struct TorchEntryPoints {
  nb::handle tensor_type, strided, to_dlpack, function_mode_enabled;
  nb::handle raw_stream;  // absent from a CPU-only torch
};

// torch's entry points once torch is imported, else null; held for the life of the process.
const TorchEntryPoints* torch_entry_points() {
  static TorchEntryPoints* found = nullptr;  // under the GIL
  if (found != nullptr) return found;
  PyObject* torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");  // borrowed
  if (torch == nullptr) return nullptr;
  try {
    nb::handle t(torch);
    nb::object c = t.attr("_C");
    auto held = [](nb::object o) { return o.release(); };  // kept for the process: never decref'd
    auto* e = new TorchEntryPoints{held(t.attr("Tensor")), held(t.attr("strided")), held(c.attr("_to_dlpack")),
                                   held(c.attr("_is_torch_function_mode_enabled")), nb::handle()};
    if (nb::hasattr(c, "_cuda_getCurrentRawStream")) e->raw_stream = held(c.attr("_cuda_getCurrentRawStream"));
    found = e;
  } catch (nb::python_error&) {
    return nullptr;  // a torch without these names (or one still importing): the protocol
  }
  return found;
}

std::optional<Tensor> import_torch_tensor(nb::handle obj) {
  const TorchEntryPoints* torch = torch_entry_points();
  if (torch == nullptr || !obj.type().is(torch->tensor_type)) return std::nullopt;
  // The mode first: under one, even reading an attribute runs the mode's code.
  if (nb::cast<bool>(torch->function_mode_enabled()) || nb::cast<bool>(obj.attr("requires_grad")) ||
      nb::cast<bool>(obj.attr("is_conj")()) || !obj.attr("layout").is(torch->strided)) {
    return std::nullopt;
  }
  const bool on_cuda = nb::cast<bool>(obj.attr("is_cuda"));
  if (!on_cuda && !nb::cast<bool>(obj.attr("is_cpu"))) return std::nullopt;
  std::intptr_t producer_stream = 0;
  if (on_cuda) {
    if (!torch->raw_stream.is_valid()) return std::nullopt;
    producer_stream = nb::cast<std::intptr_t>(torch->raw_stream(obj.attr("get_device")()));
  }
  Tensor t = import_capsule(torch->to_dlpack(obj));
  interop::order_after_producer(t, producer_stream);
  return t;
}

Tensor from_dlpack(nb::handle obj) {
  if (PyCapsule_CheckExact(obj.ptr())) return import_capsule(obj);
  if (std::optional<Tensor> t = import_torch_tensor(obj)) return *std::move(t);
  if (!nb::hasattr(obj, "__dlpack__")) {
    throw TypeError(fmt::format("from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got {}",
                                nb::type_name(obj.type()).c_str()));
  }
  // While every device's current stream is the default one, None names it for any producer (the
  // protocol: None is the legacy default stream on CUDA, and what a CPU producer takes), so the
  // producer's __dlpack_device__ (1.3 us of torch's Python on the dev VM) need not be asked.
  nb::object stream =
      cuda::default_streams_current() || !nb::hasattr(obj, "__dlpack_device__") ? nb::none() : stream_for_producer(obj);
  nb::object capsule;
  try {
    capsule = obj.attr("__dlpack__")(nb::arg("stream") = stream, nb::arg("max_version") = nb::make_tuple(1, 1));
  } catch (nb::python_error& e) {
    // A producer that predates DLPack 1.0 takes no max_version: ask again in the old form.
    if (!e.matches(PyExc_TypeError)) throw;
    capsule = obj.attr("__dlpack__")(nb::arg("stream") = stream);
  }
  return import_capsule(capsule);
}

// NumPy's type string for a dtype ("<f4"), for __cuda_array_interface__; NumPy has no bfloat16.
std::string typestr(DType d) {
  switch (d) {
    case DType::Bool:
      return "|b1";
    case DType::UInt8:
      return "|u1";
    case DType::Int8:
      return "|i1";
    case DType::Int32:
      return "<i4";
    case DType::Int64:
      return "<i8";
    case DType::Float16:
      return "<f2";
    case DType::Float32:
      return "<f4";
    case DType::Float64:
      return "<f8";
    case DType::BFloat16:
      break;
  }
  throw TypeError(fmt::format("__cuda_array_interface__: NumPy's type strings have no {}", name(d)));
}

// A RuntimeError in Python, as PyTorch raises for the same call.
void check_no_grad(const Tensor& t, const char* what) {
  if (t.requires_grad()) {
    throw Error(fmt::format("{}: the tensor requires grad; call detach() first, as in t.detach().{}()", what, what));
  }
}

// Tensor.numpy(): a NumPy array over the same memory (through numpy.from_dlpack). CPU only, as
// in PyTorch; a tensor that requires grad must be detached first.
nb::object to_numpy(nb::handle self) {
  const Tensor& t = nb::cast<const Tensor&>(self);
  check_no_grad(t, "numpy");
  if (!t.device().is_cpu()) {
    throw TypeError(fmt::format("numpy: the tensor is on {}; copy it to the host first with .cpu()", t.device().str()));
  }
  if (t.dtype() == DType::BFloat16) throw TypeError("numpy: NumPy has no bfloat16; convert with .float() first");
  return nb::module_::import_("numpy").attr("from_dlpack")(self);
}

// __cuda_array_interface__ (version 3): CuPy's and Numba's way in. The stream entry names the
// stream whose work the data is ordered after: the current stream of the tensor's device.
nb::dict cuda_array_interface(const Tensor& t) {
  if (!t.device().is_cuda()) {
    throw nb::attribute_error(
        fmt::format("__cuda_array_interface__: the tensor is on {}, not a CUDA device", t.device().str()).c_str());
  }
  check_no_grad(t, "__cuda_array_interface__");
  nb::dict d;
  nb::list shape, strides;
  for (int64_t s : t.sizes()) shape.append(s);
  for (int64_t s : t.strides()) strides.append(s * static_cast<int64_t>(t.element_size()));
  d["shape"] = nb::tuple(shape);
  d["typestr"] = typestr(t.dtype());
  d["descr"] = nb::make_tuple(nb::make_tuple("", typestr(t.dtype())));
  d["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(t.data_ptr()), false);
  d["strides"] = t.is_contiguous() ? nb::object(nb::none()) : nb::object(nb::tuple(strides));
  d["version"] = 3;
  auto stream = reinterpret_cast<std::uintptr_t>(cuda::current_stream(dlpack_device(t).second).handle());
  d["stream"] = stream;
  return d;
}

}  // namespace

void bind_dlpack(nb::module_& m) {
  nb::handle cls = nb::type<Tensor>();
  auto method = [&](const char* name, auto&& f, auto... extra) {
    cls.attr(name) =
        nb::cpp_function(std::forward<decltype(f)>(f), nb::is_method(), nb::name(name), nb::scope(cls), extra...);
  };
  method("__dlpack__", &dlpack, nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
         nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none(),
         "Exports the tensor as a DLPack capsule without a copy (the Python array API's protocol).");
  method(
      "__dlpack_device__", [](const Tensor& t) { return dlpack_device(t); },
      "(device type, device id) as DLPack numbers them: (1, 0) for the CPU, (2, index) for CUDA.");
  method("numpy", &to_numpy, "A NumPy array sharing this CPU tensor's memory (no copy).");
  method(
      "__array__",
      [](nb::handle self, nb::handle dtype, nb::handle copy) {
        nb::object array = to_numpy(self);
        if (!dtype.is_none()) array = array.attr("astype")(dtype);
        if (copy.is_valid() && !copy.is_none() && nb::cast<bool>(copy)) array = array.attr("copy")();
        return array;
      },
      nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none());
  cls.attr("__cuda_array_interface__") = nb::handle((PyObject*)&PyProperty_Type)(
      nb::cpp_function([](const Tensor& t) { return cuda_array_interface(t); }, nb::is_method()));
  m.def("from_dlpack", &from_dlpack, nb::arg("obj"),
        "A tensor sharing the memory of `obj` (any object with __dlpack__, or a DLPack capsule), without a copy.");
}

}  // namespace anatomy::python
