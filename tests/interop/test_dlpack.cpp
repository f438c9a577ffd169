// DLPack export and import on the CPU (interop/dlpack.h): every dtype both ways and both ABIs,
// views with their strides and first element, compact and offset imports, empty and 0-d
// tensors, writes seen through the other side, both lifetimes, and the stream handshake's CPU
// and no-device cases. What from_dlpack refuses is in test_dlpack_refused.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/interop/dlpack.h"
#include "dlpack_test_util.h"

using namespace anatomy;
using namespace anatomy::dlpack_test;
using interop::from_dlpack;

namespace {

struct ExpectedCode {
  DType dtype;
  uint8_t code;
  uint8_t bits;
};
// DLPack's codes, written out here rather than read from the implementation's table.
const std::vector<ExpectedCode> kExpectedCodes = {
    {DType::Bool, 6, 8},      {DType::UInt8, 1, 8},    {DType::Int8, 0, 8},
    {DType::Int32, 0, 32},    {DType::Int64, 0, 64},   {DType::Float16, 2, 16},
    {DType::BFloat16, 4, 16}, {DType::Float32, 2, 32}, {DType::Float64, 2, 64},
};

Tensor sample(IntArrayRef sizes, DType dtype) {
  if (is_floating(dtype)) return randn(sizes, dtype);
  return randint(0, dtype == DType::Bool ? 2 : 100, sizes, dtype);
}

int64_t live_bytes() { return alloc::cpu_allocator_stats().live_bytes; }

}  // namespace

TEST_CASE_TEMPLATE("dlpack: every dtype round-trips without a copy", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  CHECK(kExpectedCodes.size() == static_cast<size_t>(kNumDTypes));
  for (const ExpectedCode& e : kExpectedCodes) {
    CAPTURE(name(e.dtype));
    const Tensor t = sample({2, 3}, e.dtype);
    Managed* m = export_as<Managed>(t);
    const DLTensor& dl = m->dl_tensor;
    CHECK(dl.dtype.code == e.code);
    CHECK(dl.dtype.bits == e.bits);
    CHECK(dl.dtype.lanes == 1);
    CHECK(dl.device.device_type == kDLCPU);
    CHECK(dl.device.device_id == 0);
    REQUIRE(dl.ndim == 2);
    CHECK(std::vector<int64_t>(dl.shape, dl.shape + 2) == std::vector<int64_t>{2, 3});
    CHECK(std::vector<int64_t>(dl.strides, dl.strides + 2) == std::vector<int64_t>{3, 1});
    CHECK(dl.data == t.data_ptr());
    CHECK(dl.byte_offset == 0);
    if constexpr (kVersioned<Managed>) {
      CHECK(m->version.major == 1);
      CHECK(m->version.minor == 1);
      CHECK(m->flags == 0);
    }
    CHECK(dl_bytes(dl) == tensor_bytes(t));
    const Tensor u = from_dlpack(m);
    CHECK(u.data_ptr() == t.data_ptr());  // no copy either way
    CHECK(u.dtype() == e.dtype);
    CHECK(u.device() == kCPU);
    CHECK(u.sizes() == t.sizes());
    CHECK(u.strides() == t.strides());
    CHECK(tensor_bytes(u) == tensor_bytes(t));
  }
}

TEST_CASE("dlpack: to_dlpack_versioned passes its flags through") {
  const Tensor t = ones({3});
  for (uint64_t flags : {DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_IS_COPIED,
                         DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED}) {
    DLManagedTensorVersioned* m = interop::to_dlpack_versioned(t, flags);
    CHECK(m->flags == flags);
    m->deleter(m);
  }
}

TEST_CASE_TEMPLATE("dlpack: transposed stepped and offset views export their strides and first element", Managed,
                   DLManagedTensor, DLManagedTensorVersioned) {
  const Tensor base = arange(48, TensorOptions().dtype(DType::Float32)).view({6, 8});
  const std::vector<Tensor> views = {
      base.t(),                                   // strides (1, 8)
      base.slice(1, 1, std::nullopt, 3),          // stepped, at an offset: (8, 3), first element 1
      base.select(0, 2).narrow(0, 3, 4),          // 1-D at offset 19
      base.t().slice(0, 2, 7, 2).slice(1, 1, 5),  // both at once
      base.unfold(1, 3, 2),                       // overlapping windows: (8, 2, 1)
  };
  for (const Tensor& v : views) {
    CAPTURE(describe(v));
    Managed* m = export_as<Managed>(v);
    const DLTensor& dl = m->dl_tensor;
    CHECK(dl.data == v.data_ptr());
    CHECK(dl.byte_offset == 0);
    REQUIRE(dl.ndim == v.dim());
    for (int64_t i = 0; i < v.dim(); ++i) {
      CHECK(dl.shape[i] == v.size(i));
      if (v.size(i) > 1) CHECK(dl.strides[i] == v.stride(i));
    }
    CHECK(dl_bytes(dl) == tensor_bytes(v));  // the values, read through the DLTensor alone
    const Tensor u = from_dlpack(m);
    CHECK(u.data_ptr() == v.data_ptr());
    CHECK(tensor_bytes(u) == tensor_bytes(v));
    for (int64_t i = 0; i < v.dim(); ++i) {
      if (v.size(i) > 1) CHECK(u.stride(i) == v.stride(i));
    }
  }
}

TEST_CASE("dlpack: a dim of one element exports stride 1 and a broadcast dim stride 0") {
  const Tensor t = arange(12, TensorOptions().dtype(DType::Float32)).view({3, 1, 4});
  DLManagedTensor* m = interop::to_dlpack(t);
  CHECK(std::vector<int64_t>(m->dl_tensor.strides, m->dl_tensor.strides + 3) == std::vector<int64_t>{4, 1, 1});
  m->deleter(m);

  const Tensor e = arange(3, TensorOptions().dtype(DType::Float32)).view({3, 1}).expand({3, 4});
  m = interop::to_dlpack(e);
  CHECK(std::vector<int64_t>(m->dl_tensor.strides, m->dl_tensor.strides + 2) == std::vector<int64_t>{1, 0});
  CHECK(dl_bytes(m->dl_tensor) == tensor_bytes(e));
  const Tensor u = from_dlpack(m);
  CHECK(u.strides() == IntArrayRef{1, 0});
  CHECK(tensor_bytes(u) == tensor_bytes(e));
}

TEST_CASE_TEMPLATE("dlpack: a compact import (null strides) is row-major", Managed, DLManagedTensor,
                   DLManagedTensorVersioned) {
  std::vector<float> buffer = {0, 1, 2, 3, 4, 5};
  auto h = handmade<Managed>(buffer.data(), {2, 3}, std::nullopt, kFloat32);
  {
    const Tensor u = from_dlpack(&h->managed);
    CHECK(u.data_ptr() == buffer.data());
    CHECK(u.strides() == IntArrayRef{3, 1});
    CHECK(u.is_contiguous());
    CHECK(u[1][2].item<float>() == 5.0f);
    CHECK(tensor_bytes(u) == dl_bytes(h->managed.dl_tensor));
    CHECK(h->deleted == 0);
  }
  CHECK(h->deleted == 1);
}

TEST_CASE_TEMPLATE("dlpack: an import takes its strides in elements and its byte_offset in bytes", Managed,
                   DLManagedTensor, DLManagedTensorVersioned) {
  std::vector<float> buffer(16);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  // Column-major 3 x 2 starting at element 2: (i, j) is buffer[2 + i + 3 * j].
  auto h = handmade<Managed>(buffer.data(), {3, 2}, std::vector<int64_t>{1, 3}, kFloat32, 2 * sizeof(float));
  const Tensor u = from_dlpack(&h->managed);
  CHECK(u.data_ptr() == buffer.data() + 2);
  CHECK(u.strides() == IntArrayRef{1, 3});
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 2; ++j) CHECK(u[i][j].item<float>() == buffer[2 + i + 3 * j]);
  }
  CHECK(tensor_bytes(u) == dl_bytes(h->managed.dl_tensor));
}

TEST_CASE("dlpack: the stride of a dim that addresses nothing is not taken from the producer") {
  std::vector<float> buffer = {7, 8, 9};
  // A reversed array of one element has a negative stride (NumPy's x[::-1] of length 1).
  auto h = handmade<DLManagedTensor>(buffer.data(), {1, 3}, std::vector<int64_t>{-1, 1}, kFloat32);
  const Tensor u = from_dlpack(&h->managed);
  CHECK(u.strides() == IntArrayRef{3, 1});
  CHECK(tensor_bytes(u) == dl_bytes(h->managed.dl_tensor));
  // An empty tensor addresses no element at all.
  auto e = handmade<DLManagedTensor>(nullptr, {0, 5}, std::vector<int64_t>{-7, int64_t{1} << 62}, kFloat32);
  const Tensor v = from_dlpack(&e->managed);
  CHECK(v.sizes() == IntArrayRef{0, 5});
  CHECK(v.strides() == IntArrayRef{5, 1});
}

TEST_CASE_TEMPLATE("dlpack: empty and 0-d tensors round-trip", Managed, DLManagedTensor, DLManagedTensorVersioned) {
  for (const Tensor& t : {zeros({0, 3}), zeros({2, 0}, TensorOptions().dtype(DType::Int64)), zeros({0}),
                          scalar_tensor(5.5), scalar_tensor(true)}) {
    CAPTURE(describe(t));
    Managed* m = export_as<Managed>(t);
    CHECK(m->dl_tensor.ndim == t.dim());
    const Tensor u = from_dlpack(m);
    CHECK(u.sizes() == t.sizes());
    CHECK(u.dtype() == t.dtype());
    CHECK(u.numel() == t.numel());
    if (t.dim() == 0) {
      CHECK(u.data_ptr() == t.data_ptr());
      CHECK(u.item().to<double>() == t.item().to<double>());
    }
  }
  // An empty tensor may come without data: its byte_offset then moves nothing.
  auto h = handmade<Managed>(nullptr, {4, 0}, std::nullopt, kFloat32, 64);
  const Tensor u = from_dlpack(&h->managed);
  CHECK(u.sizes() == IntArrayRef{4, 0});
  CHECK(u.sum().item<float>() == 0.0f);
  // A 0-d import reads its one element (no shape, no strides).
  double value = 2.25;
  auto s = handmade<Managed>(&value, {}, std::nullopt, DLDataType{kDLFloat, 64, 1});
  s->managed.dl_tensor.shape = nullptr;
  const Tensor v = from_dlpack(&s->managed);
  CHECK(v.dim() == 0);
  CHECK(v.item<double>() == 2.25);
}

TEST_CASE("dlpack: a write through one side is read through the other") {
  // Export: the consumer writes through the DLTensor, the tensor sees it, and back.
  const Tensor t = zeros({4});
  DLManagedTensor* m = interop::to_dlpack(t);
  static_cast<float*>(m->dl_tensor.data)[2] = 7.0f;
  CHECK(t[2].item<float>() == 7.0f);
  t.add_(1.0);
  CHECK(static_cast<float*>(m->dl_tensor.data)[0] == 1.0f);
  m->deleter(m);

  // Import: the tensor's in-place ops write the producer's buffer, and its writes are read.
  std::vector<int32_t> buffer = {1, 2, 3, 4, 5, 6};
  auto h = handmade<DLManagedTensorVersioned>(buffer.data(), {3}, std::vector<int64_t>{2}, {kDLInt, 32, 1});
  const Tensor u = from_dlpack(&h->managed);
  u.mul_(10);
  CHECK(buffer == std::vector<int32_t>{10, 2, 30, 4, 50, 6});
  buffer[2] = -1;
  CHECK(u[1].item<int64_t>() == -1);
}

TEST_CASE("dlpack: a read-only or copied versioned tensor imports as an ordinary one") {
  for (uint64_t flags : {DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_IS_COPIED}) {
    std::vector<float> buffer = {1, 2};
    auto h = handmade<DLManagedTensorVersioned>(buffer.data(), {2}, std::nullopt, kFloat32);
    h->managed.flags = flags;
    {
      const Tensor u = from_dlpack(&h->managed);
      // anatomy has no read-only tensors: writing is the caller's to avoid (docs/interop.md).
      u.fill_(3.0);
      CHECK(buffer == std::vector<float>{3, 3});
    }
    CHECK(h->deleted == 1);
  }
}

TEST_CASE_TEMPLATE("dlpack: an exported tensor keeps its storage until the consumer's deleter runs", Managed,
                   DLManagedTensor, DLManagedTensorVersioned) {
  constexpr int64_t kBytes = int64_t{1} << 20;
  const int64_t before = live_bytes();
  Tensor t = full({kBytes / 4}, 2.5);
  CHECK(live_bytes() == before + kBytes);
  Managed* m = export_as<Managed>(t);
  Storage storage = t.storage();
  t = Tensor();
  CHECK(storage.use_count() == 2);  // `storage` here, and the tensor in the export's context
  CHECK(live_bytes() == before + kBytes);
  CHECK(static_cast<const float*>(m->dl_tensor.data)[kBytes / 4 - 1] == 2.5f);
  m->deleter(m);
  CHECK(storage.use_count() == 1);
  CHECK(live_bytes() == before + kBytes);
  // The last reference gone, the memory goes back.
  storage = Storage();
  CHECK(live_bytes() == before);
}

TEST_CASE_TEMPLATE("dlpack: an import calls the producer's deleter once when its last view goes", Managed,
                   DLManagedTensor, DLManagedTensorVersioned) {
  std::vector<float> buffer = {0, 1, 2, 3, 4, 5};
  auto h = handmade<Managed>(buffer.data(), {6}, std::nullopt, kFloat32);
  Tensor u = from_dlpack(&h->managed);
  Tensor view = u.view({2, 3}).t();
  Tensor slice = u.slice(0, 2, 4);
  const Tensor copy = slice.clone();  // a copy holds nothing of the producer's
  u = Tensor();
  CHECK(h->deleted == 0);
  view = Tensor();
  CHECK(h->deleted == 0);
  CHECK(slice[1].item<float>() == 3.0f);
  slice = Tensor();
  CHECK(h->deleted == 1);
  CHECK(copy[1].item<float>() == 3.0f);

  // A producer with nothing to free passes no deleter.
  auto n = handmade<Managed>(buffer.data(), {6}, std::nullopt, kFloat32);
  n->managed.deleter = nullptr;
  const Tensor r = from_dlpack(&n->managed);
  CHECK(r.sum().item<float>() == 15.0f);
}

TEST_CASE("dlpack: anatomy to anatomy, the storage lives until both sides are done") {
  constexpr int64_t kBytes = int64_t{1} << 20;
  const int64_t before = live_bytes();
  Tensor t = ones({kBytes / 4});
  Tensor u = from_dlpack(interop::to_dlpack_versioned(t));
  t = Tensor();
  CHECK(live_bytes() == before + kBytes);
  CHECK(u.sum().item<float>() == static_cast<float>(kBytes / 4));
  u = Tensor();  // runs the export's deleter, which drops the last reference
  CHECK(live_bytes() == before);
}

TEST_CASE("dlpack: kDLCUDAHost memory imports as a CPU tensor") {
  std::vector<float> buffer = {1, 2, 3};
  auto h = handmade<DLManagedTensor>(buffer.data(), {3}, std::nullopt, kFloat32);
  h->managed.dl_tensor.device = DLDevice{kDLCUDAHost, 0};
  const Tensor u = from_dlpack(&h->managed);
  CHECK(u.device() == kCPU);
  CHECK(u.data_ptr() == buffer.data());
}

TEST_CASE("dlpack: to_dlpack refuses what DLPack cannot say") {
  CHECK_THROWS_WITH_AS(interop::to_dlpack(Tensor()), "to_dlpack: the tensor is undefined", ValueError);
  CHECK_THROWS_WITH_AS(interop::to_dlpack_versioned(Tensor()), "to_dlpack_versioned: the tensor is undefined",
                       ValueError);
  CHECK_THROWS_WITH_AS(interop::to_dlpack(empty({2}, kMeta)), doctest::Contains("to_dlpack: a meta tensor"),
                       DeviceError);
  CHECK_THROWS_WITH_AS(interop::to_dlpack_versioned(ones({2}), 4), doctest::Contains("flags 0x4"), ValueError);
}

TEST_CASE("dlpack: order_for_consumer and order_after_producer leave a CPU tensor alone and need a defined one") {
  const Tensor t = ones({2});
  for (std::intptr_t stream :
       {std::intptr_t{-1}, std::intptr_t{0}, std::intptr_t{1}, std::intptr_t{2}, std::intptr_t{0x5581c2a0f2d0}}) {
    CHECK_NOTHROW(interop::order_for_consumer(t, stream));  // no device call for a CPU tensor
  }
  CHECK_THROWS_WITH_AS(interop::order_for_consumer(Tensor(), 1), "order_for_consumer: the tensor is undefined",
                       ValueError);
  for (std::intptr_t stream : {std::intptr_t{-1}, std::intptr_t{0}, std::intptr_t{1}, std::intptr_t{0x5581c2a0f2d0}}) {
    CHECK_NOTHROW(interop::order_after_producer(t, stream));
  }
  CHECK_THROWS_WITH_AS(interop::order_after_producer(Tensor(), 0), "order_after_producer: the tensor is undefined",
                       ValueError);
}

TEST_CASE("dlpack: the stream handshakes on a CUDA tensor without a CUDA device are typed errors") {
  if (cuda::device_count() > 0) {
    std::cout << "[anatomy-skip] a CUDA device is present; the GPU tests cover it" << std::endl;
    return;
  }
  float cell = 0;
  // A tensor that says it is on CUDA (from_blob trusts its caller): the handshake needs the
  // device API, which answers with its own error where there is no device.
  const Tensor t = from_blob(&cell, {1}, TensorOptions().device(Device("cuda:0")));
  CHECK_NOTHROW(interop::order_for_consumer(t, -1));  // no ordering asked: no device call
  CHECK_THROWS_WITH_AS(interop::order_for_consumer(t, 0), doctest::Contains("0 is ambiguous"), ValueError);
  CHECK_THROWS_WITH_AS(interop::order_for_consumer(t, -3), doctest::Contains("stream -3"), ValueError);
  CHECK_THROWS_WITH_AS(interop::order_after_producer(t, -1), doctest::Contains("stream -1 is not a CUDA stream"),
                       ValueError);
#if ANATOMY_WITH_CUDA
  CHECK_THROWS_AS(interop::order_for_consumer(t, 1), DeviceError);
  CHECK_THROWS_AS(interop::order_after_producer(t, 0), DeviceError);
#else
  CHECK_THROWS_AS(interop::order_for_consumer(t, 1), NotImplementedError);
  CHECK_THROWS_AS(interop::order_after_producer(t, 0), NotImplementedError);
#endif
}
