// CUDA: copy_ for every copy that involves a CUDA tensor (the dispatcher sends a call here when
// self or src is on CUDA, since CUDA outranks CPU), and _local_scalar_dense (behind item()).
//
// Note [CUDA copy paths]
//   device to device, one dtype   one cudaMemcpyAsync when both are dense with the same strides,
//                                 else the strided kernel of copy.cu; between two devices,
//                                 cudaMemcpyPeerAsync between contiguous buffers (Note [Copies
//                                 between devices]).
//   host to device                src becomes a CPU tensor of self's sizes, dtype and layout
//                                 when self is dense (a channels_last self stays channels_last),
//                                 else contiguous (the CPU copy_ broadcasts and converts), then
//                                 one cudaMemcpyAsync (into a temporary plus the strided kernel
//                                 when self is not dense).
//   device to host                src crosses in its own shape (gathered on the device first when
//                                 it is not contiguous), then the CPU copy_ broadcasts, converts
//                                 and scatters into self. Straight into self when nothing is left
//                                 to do on the CPU (one dtype and shape, the same dense layout).
//   device to device, two dtypes  the cast kernel of cast.cu (any strides, src broadcast), which
//                                 converts exactly as the CPU does (Note [CUDA casts match the
//                                 CPU's]); between two devices, converted on the source's device
//                                 first, then copied as above.
//   (host <-> device copies convert on the CPU, on the host side of the transfer.)
// Everything runs on the current stream of the device involved (current_stream.h), and a copy
// that waits waits for that stream only. A copy to pageable host memory waits; one straight into
// pinned host memory waits unless non_blocking (then the caller waits, on an event or the stream,
// before reading it). A copy from pageable host memory returns once CUDA has taken the bytes; one
// from pinned memory waits unless non_blocking. A non_blocking copy records an event on the
// pinned block it uses (pinned_allocator.h), so the block is not handed out again before the
// copy is done. Every wait is reported in the sync-debug mode (sync_debug.h).
//
// Note [Copies between devices]
//   Each device has its own current stream, and pool streams do not wait for anything by
//   themselves, so the copy is ordered by hand, as PyTorch does: the source device's stream
//   waits for the destination device's (whose earlier work may still use the target memory),
//   copies, and the destination device's stream waits for the copy before its later work.
//   The host does not wait.
#include <limits>
#include <utility>

#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/pinned_allocator.h"
#include "anatomy/backends/cuda/runtime/capture.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/backends/cuda/runtime/sync_debug.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::cuda {
namespace {

// The device a CUDA tensor lives on (a from_blob tensor may say just "cuda": the current one).
int device_index(const Tensor& t) { return t.device().has_index() ? t.device().index() : current_device(); }

// Temporaries come straight from the allocators: they are the kernel's business, not calls a
// dispatch trace should show.
Tensor empty_contiguous_cuda(IntArrayRef sizes, DType dtype, int device) {
  DeviceGuard guard(device);
  return make_empty_tensor(sizes, dtype, cuda_allocator(), MemoryFormat::Contiguous, "copy_");
}
Tensor empty_contiguous_cpu(IntArrayRef sizes, DType dtype) {
  return make_empty_tensor(sizes, dtype, get_allocator(DeviceType::CPU), MemoryFormat::Contiguous, "copy_");
}

// Whether a and b hold the same elements in the same order of bytes (one dtype and shape, both
// contiguous, or the same strides and dense: two channels_last tensors), so that a copy between
// them is one memcpy of nbytes from data_ptr.
bool same_bytes_layout(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  return (a.is_contiguous() && b.is_contiguous()) || (a.strides() == b.strides() && a.is_non_overlapping_and_dense());
}

// dst = src on one device: same dtype and sizes, no overlap.
void copy_same_device(const Tensor& dst, const Tensor& src) {
  DeviceGuard guard(device_index(dst));
  if (same_bytes_layout(dst, src)) {
    ANATOMY_CUDA_CHECK(
        cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToDevice, current_stream()));
    return;
  }
  launch_strided_copy(dst.data_ptr(), src.data_ptr(), dst.element_size(),
                      make_strided_layout<2>(dst.sizes(), {dst.strides(), src.strides()}, "copy_"), dst.numel(),
                      current_stream());
}

// A contiguous copy of CUDA tensor t on its device (the gather kernel, for a strided t).
Tensor clone_on_device(const Tensor& t) {
  Tensor out = empty_contiguous_cuda(t.sizes(), t.dtype(), device_index(t));
  copy_same_device(out, t);
  return out;
}
Tensor contiguous_on_device(const Tensor& t) { return t.is_contiguous() ? t : clone_on_device(t); }

void copy_device_to_device(const Tensor& dst, const Tensor& src) {
  int dst_device = device_index(dst), src_device = device_index(src);
  if (dst_device == src_device) {
    // Threads reading and writing the same memory in no particular order would read values
    // already overwritten: copy through a temporary.
    copy_same_device(dst, may_overlap(dst, src) ? clone_on_device(src) : src);
    return;
  }
  Tensor source = contiguous_on_device(src);
  Tensor target = dst.is_contiguous() ? dst : empty_contiguous_cuda(dst.sizes(), dst.dtype(), dst_device);
  // Note [Copies between devices]
  const Stream dst_stream = current_stream(dst_device), src_stream = current_stream(src_device);
  src_stream.wait_stream(dst_stream);
  {
    DeviceGuard guard(src_device);
    ANATOMY_CUDA_CHECK(cudaMemcpyPeerAsync(target.data_ptr(), dst_device, source.data_ptr(), src_device, dst.nbytes(),
                                           src_stream.handle()));
  }
  dst_stream.wait_stream(src_stream);
  if (!target.is_same(dst)) copy_same_device(dst, target);
}

// The cast kernel's arguments for dst = src (src already expanded to dst's sizes): the merged
// layout of make_strided_layout, turned innermost-first and into byte strides.
ElementwiseArgs<1> cast_args(const Tensor& dst, const Tensor& src) {
  ElementwiseArgs<1> args;
  args.output = dst.data_ptr();
  args.inputs[0] = src.data_ptr();
  args.numel = dst.numel();
  args.contiguous = dst.is_contiguous() && src.is_contiguous();
  if (args.contiguous) return args;
  const StridedLayout<2> layout = make_strided_layout<2>(dst.sizes(), {dst.strides(), src.strides()}, "copy_");
  const int64_t element_size[2] = {static_cast<int64_t>(dst.element_size()), static_cast<int64_t>(src.element_size())};
  args.layout.ndim = layout.ndim;
  args.use_32bit = args.numel <= std::numeric_limits<int32_t>::max();
  for (int k = 0; k < 2; ++k) {
    int64_t reach = 0;
    for (int d = 0; d < layout.ndim; ++d) {
      const int inner_first = layout.ndim - 1 - d;
      args.layout.sizes[inner_first] = layout.sizes[d];
      args.layout.byte_strides[k][inner_first] = layout.strides[k][d] * element_size[k];
      reach += (layout.sizes[d] - 1) * layout.strides[k][d] * element_size[k];
    }
    if (reach > std::numeric_limits<int32_t>::max()) args.use_32bit = false;
  }
  return args;
}

// dst = src converted, both on one device (src expanded to dst's sizes, no overlap).
void cast_same_device(const Tensor& dst, const Tensor& src) {
  DeviceGuard guard(device_index(dst));
  launch_cast(dst.dtype(), src.dtype(), cast_args(dst, src), current_stream());
}

void convert_device_to_device(const Tensor& dst, const Tensor& src) {
  int dst_device = device_index(dst), src_device = device_index(src);
  if (dst_device == src_device) {
    cast_same_device(dst, may_overlap(dst, src) ? clone_on_device(src) : src);
    return;
  }
  Tensor converted = empty_contiguous_cuda(dst.sizes(), dst.dtype(), src_device);
  cast_same_device(converted, src);
  copy_device_to_device(dst, converted);
}

// Copies nbytes from the current device to host memory on the current stream and, unless told
// not to, waits for that stream, since the caller reads them next. `op` names the operator in
// the sync-debug report.
void memcpy_to_host(void* dst, const void* src, size_t nbytes, const char* op, bool wait = true) {
  const cudaStream_t stream = current_stream();
  if (wait) check_synchronization(op, "a copy from the device to host memory");
  ANATOMY_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, stream));
  if (!wait) return;
  ANATOMY_CUDA_CHECK(cudaStreamSynchronize(stream));
  raise_pending_index_error(current_device());
}

// A contiguous CPU tensor with the values, sizes and dtype of CUDA tensor t.
Tensor download(const Tensor& t) {
  DeviceGuard guard(device_index(t));
  Tensor source = contiguous_on_device(t);
  Tensor host = empty_contiguous_cpu(t.sizes(), t.dtype());
  memcpy_to_host(host.data_ptr(), source.data_ptr(), host.nbytes(), "aten::copy_");
  return host;
}

// dst = host, where host is a CPU tensor of dst's sizes and dtype laid out as dst, or contiguous.
void upload(const Tensor& dst, const Tensor& host, bool non_blocking) {
  int device = device_index(dst);
  DeviceGuard guard(device);
  Tensor target = same_bytes_layout(dst, host) ? dst : empty_contiguous_cuda(dst.sizes(), dst.dtype(), device);
  const cudaStream_t stream = current_stream();
  if (ANATOMY_UNLIKELY(captures_underway()) && !is_pinned(host.data_ptr())) {
    check_not_capturing("aten::copy_", "a copy from pageable host memory");
  }
  ANATOMY_CUDA_CHECK(
      cudaMemcpyAsync(target.data_ptr(), host.data_ptr(), host.nbytes(), cudaMemcpyHostToDevice, stream));
  if (non_blocking) record_pinned_use(host.data_ptr(), stream);  // reused only after the copy
  // From pageable memory CUDA returns once it has taken the bytes. From pinned memory the copy
  // may still be reading: wait (unless asked not to), so that writing the host tensor next
  // cannot change what arrives.
  if (!non_blocking && is_pinned(host.data_ptr())) {
    check_synchronization("aten::copy_", "a blocking copy from pinned host memory");
    ANATOMY_CUDA_CHECK(cudaStreamSynchronize(stream));
    raise_pending_index_error(device);
  }
  if (!target.is_same(dst)) copy_same_device(dst, target);
}

Tensor copy_cuda(const Tensor& self, const Tensor& src, bool non_blocking) {
  auto cpu_or_cuda = [](const Tensor& t) { return t.is_cpu() || t.is_cuda(); };
  ANATOMY_CHECK(cpu_or_cuda(self) && cpu_or_cuda(src), DeviceError,
                "copy_: the CUDA kernel copies between cpu and cuda tensors, got self on {} and src on {}",
                self.device().str(), src.device().str());
  Tensor source = checked_copy_source(self, src);
  if (self.numel() == 0) return self;
  if (self.is_same(src)) {
    self.impl()->bump_version();
    return self;
  }
  // Note [CUDA copy paths]
  if (self.is_cuda() && src.is_cuda()) {
    if (self.dtype() == src.dtype()) copy_device_to_device(self, source);
    else convert_device_to_device(self, source);
  } else if (self.is_cpu()) {
    if (same_bytes_layout(self, src)) {
      DeviceGuard guard(device_index(src));
      // Into pinned memory the transfer can run on while the host goes on, if asked; the block
      // records the copy so that it is not reused before the copy is done.
      const bool async = non_blocking && is_pinned(self.data_ptr());
      memcpy_to_host(self.data_ptr(), src.data_ptr(), self.nbytes(), "aten::copy_", !async);
      if (async) record_pinned_use(self.data_ptr(), current_stream());
    } else {
      anatomy::copy_(self, download(src));
      return self;  // the CPU kernel has bumped self's version
    }
  } else {
    Tensor host = src.is_cpu() ? source : download(src);
    const bool direct = same_bytes_layout(self, host) ||
                        (host.is_contiguous() && host.dtype() == self.dtype() && host.sizes() == self.sizes());
    if (!direct) {
      // Staged in self's layout when it is dense, so that the bytes cross as they will lie.
      Tensor staged =
          self.is_non_overlapping_and_dense()
              ? make_empty_tensor(self.sizes(), self.strides(), self.dtype(), get_allocator(DeviceType::CPU), "copy_")
              : empty_contiguous_cpu(self.sizes(), self.dtype());
      anatomy::copy_(staged, host);
      host = staged;
    }
    upload(self, host, non_blocking);
  }
  self.impl()->bump_version();
  return self;
}

Scalar local_scalar_dense_cuda(const Tensor& self) {
  ANATOMY_CHECK(self.numel() > 0, ValueError, "item: the tensor has no elements");
  alignas(8) unsigned char bytes[8] = {};
  {
    DeviceGuard guard(device_index(self));
    memcpy_to_host(bytes, self.data_ptr(), self.element_size(), "aten::_local_scalar_dense");
  }
  // Read through the CPU kernel, so the value converts exactly as a CPU tensor's would.
  return anatomy::_local_scalar_dense(from_blob(bytes, IntArrayRef{}, self.dtype()));
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("copy_", ANATOMY_KERNEL(copy_cuda));
  m.impl("_local_scalar_dense", ANATOMY_KERNEL(local_scalar_dense_cuda));
}

}  // namespace anatomy::cuda
