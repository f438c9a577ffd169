// DLPack export: to_dlpack and to_dlpack_versioned (interop/dlpack.h). The managed tensor's
// context holds a Tensor, so the storage lives until the consumer calls the deleter.
#include <cstdint>
#include <vector>

#include "anatomy/cuda.h"
#include "anatomy/interop/dlpack.h"
#include "anatomy/interop/dlpack_types.h"

namespace anatomy::interop {
namespace {

// One allocation per export: the tensor that keeps the memory alive, the shape and strides the
// DLTensor points at, and the managed tensor itself (manager_ctx points back here).
template <typename Managed>
struct ExportContext {
  Tensor tensor;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  Managed managed{};
};

template <typename Managed>
void delete_export(Managed* self) noexcept {
  delete static_cast<ExportContext<Managed>*>(self->manager_ctx);
}

DLDevice to_dl_device(const Tensor& t, const char* op) {
  // A pinned CPU tensor is kDLCPU too, as PyTorch exports it: any consumer reads host memory.
  if (t.is_cpu()) return DLDevice{kDLCPU, 0};
  ANATOMY_CHECK(t.is_cuda(), DeviceError, "{}: a {} tensor has no memory DLPack can share (cpu and cuda do)", op,
                t.device().str());
  // A tensor made over memory of "cuda" without an index lives on the current device.
  const int index = t.device().has_index() ? t.device().index() : cuda::current_device();
  return DLDevice{kDLCUDA, index};
}

template <typename Managed>
Managed* export_tensor(const Tensor& t, const char* op) {
  ANATOMY_CHECK(t.defined(), ValueError, "{}: the tensor is undefined", op);
  const DLDevice device = to_dl_device(t, op);
  auto* ctx = new ExportContext<Managed>{t, std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
                                         std::vector<int64_t>(t.strides().begin(), t.strides().end())};
  // The stride of a dim of one element never moves; consumers that test contiguity from the
  // strides alone expect 1 there, as PyTorch exports it.
  for (size_t i = 0; i < ctx->shape.size(); ++i) {
    if (ctx->shape[i] < 2) ctx->strides[i] = 1;
  }
  Managed& m = ctx->managed;
  m.manager_ctx = ctx;
  m.deleter = &delete_export<Managed>;
  DLTensor& dl = m.dl_tensor;
  // The first element's address with byte_offset 0, as PyTorch and NumPy export: consumers
  // that ignore byte_offset (PyTorch's importer long did) read the right elements too.
  dl.data = t.data_ptr();
  dl.device = device;
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  return &m;
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) { return export_tensor<DLManagedTensor>(t, "to_dlpack"); }

DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t, uint64_t flags) {
  constexpr uint64_t kKnownFlags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  ANATOMY_CHECK((flags & ~kKnownFlags) == 0, ValueError,
                "to_dlpack_versioned: flags {:#x} has bits other than DLPACK_FLAG_BITMASK_READ_ONLY (0x1) and "
                "DLPACK_FLAG_BITMASK_IS_COPIED (0x2)",
                flags);
  DLManagedTensorVersioned* m = export_tensor<DLManagedTensorVersioned>(t, "to_dlpack_versioned");
  m->version = DLPackVersion{kDLPackMajorVersion, kDLPackMinorVersion};
  m->flags = flags;
  return m;
}

}  // namespace anatomy::interop
