// Tensors passed between libtorch and anatomy in one process through DLPack, both ways, on
// CUDA: no copy (the same device pointer, and a write on one side read on the other), strides
// and device kept, and each side keeping the other's memory alive as long as it holds a view.
//
// torch's ATen/dlpack.h and the system's dlpack/dlpack.h share one include guard and one ABI;
// torch's comes first here, and interop/dlpack_versioned.h then finds the 1.x structures
// already declared.
#include <ATen/DLConvertor.h>
#include <torch/torch.h>

#include <doctest/doctest.h>

#include <iostream>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/interop/dlpack.h"

namespace {

bool skip_without_gpu() {
  if (anatomy::cuda::device_count() > 0 && torch::cuda::is_available()) return false;
  std::cout << "[anatomy-skip] no CUDA device" << std::endl;
  return true;
}

}  // namespace

TEST_CASE("libtorch dlpack: at::toDLPack into anatomy and anatomy's to_dlpack back, without a copy") {
  if (skip_without_gpu()) return;
  at::Tensor x = torch::arange(24, torch::dtype(torch::kFloat32).device(torch::kCUDA)).reshape({4, 6}).t();
  anatomy::Tensor t = anatomy::interop::from_dlpack(at::toDLPack(x));
  CHECK(t.data_ptr() == x.data_ptr());
  CHECK(t.device() == anatomy::Device("cuda:0"));
  CHECK(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()) == x.sizes().vec());
  CHECK(std::vector<int64_t>(t.strides().begin(), t.strides().end()) == x.strides().vec());
  torch::cuda::synchronize();
  t.fill_(3);  // written through anatomy on its current stream (the legacy default stream)
  anatomy::cuda::synchronize();
  CHECK(x.sum().item<float>() == 72.0f);

  at::Tensor y = at::fromDLPack(anatomy::interop::to_dlpack(t));
  CHECK(y.data_ptr() == x.data_ptr());
  CHECK(y.strides().vec() == x.strides().vec());
  y.mul_(2);
  torch::cuda::synchronize();
  CHECK(t.sum().item<double>() == 144.0);
}

TEST_CASE("libtorch dlpack: each side keeps the other's memory while it holds a view") {
  if (skip_without_gpu()) return;
  at::Tensor x = torch::ones({1 << 20}, torch::dtype(torch::kFloat32).device(torch::kCUDA));
  c10::Storage storage = x.storage();
  const auto uses = storage.use_count();  // x's TensorImpl and this handle
  anatomy::Tensor t = anatomy::interop::from_dlpack(at::toDLPack(x));
  x.reset();
  // torch's exported tensor (its TensorImpl, which holds the storage) lives on in the
  // DLManagedTensor that anatomy's view owns.
  CHECK(storage.use_count() == uses);
  CHECK(t.sum().item<double>() == double(1 << 20));
  t = anatomy::Tensor();
  CHECK(storage.use_count() == uses - 1);  // released with anatomy's last view, exactly once

  anatomy::Tensor a = anatomy::ones({1 << 20}, anatomy::TensorOptions().device("cuda:0"));
  const int64_t live = anatomy::cuda::memory_allocated();
  at::Tensor y = at::fromDLPack(anatomy::interop::to_dlpack(a));
  a = anatomy::Tensor();
  CHECK(anatomy::cuda::memory_allocated() == live);  // torch holds anatomy's block
  CHECK(y.sum().item<float>() == float(1 << 20));
  y.reset();
  CHECK(anatomy::cuda::memory_allocated() < live);
}
