// The README's embedding example, built against the installed package, the device API through
// <anatomy/cuda.h>, which works in every build: with CUDA and a GPU, with CUDA and no GPU, and
// without CUDA (where every call that needs a device throws), and a DLPack round trip through
// <anatomy/interop/dlpack.h> (which includes the system's <dlpack/dlpack.h>), and a checkpoint
// through <anatomy/nn/safetensors.h> (whose JSON dependency is the library's own, not the
// consumer's).
#include <anatomy/anatomy.h>
#include <anatomy/cuda.h>
#include <anatomy/interop/dlpack.h>
#include <anatomy/nn/safetensors.h>

#include <cstdio>
#include <filesystem>

#include <iostream>

int main() {
  anatomy::manual_seed(0);
  anatomy::Tensor x = anatomy::randn({2, 3});
  anatomy::Tensor y = x.t().contiguous();  // a transposed view, then a copy in row-major order
  std::cout << y << "\n" << anatomy::describe(x.t());
  // Every view shares x's storage; the copy does not.
  bool ok = x.t().is_alias_of(x) && !y.is_alias_of(x) && y.sizes() == anatomy::IntArrayRef{3, 2} &&
            y[2][1].item<float>() == x[1][2].item<float>();

  // The same code on whatever device there is.
  const int n = anatomy::cuda::device_count();
  ok = ok && (n > 0) == anatomy::cuda::is_available();
  anatomy::Device device = anatomy::kCPU;
  if (anatomy::cuda::is_available()) {
    device = anatomy::Device("cuda:0");
    std::cout << "cuda: " << n << " device(s), cuda:0 is " << anatomy::cuda::get_device_properties(0).name << "\n";
  } else {
    std::cout << "cuda: no device (" << anatomy::cuda::unavailable_reason() << ")\n";
    bool threw = false;
    try {
      (void)anatomy::cuda::memory_allocated();
    } catch (const anatomy::Error&) {  // DeviceError, or NotImplementedError without CUDA
      threw = true;
    }
    ok = ok && threw;
  }
  anatomy::Tensor z = anatomy::ones({4}, device).mul(2).sum().cpu();
  ok = ok && z.item<float>() == 8.0f;

  // Out through DLPack and back in, both ABIs: the same memory, no copy.
  DLManagedTensorVersioned* versioned = anatomy::interop::to_dlpack_versioned(x.t());
  ok = ok && versioned->version.major == 1 && versioned->dl_tensor.strides[0] == 1;
  anatomy::Tensor back = anatomy::interop::from_dlpack(versioned);
  anatomy::Tensor again = anatomy::interop::from_dlpack(anatomy::interop::to_dlpack(back));
  ok = ok && again.data_ptr() == x.t().data_ptr() && again.equal(x.t());

  // A checkpoint written and read back: the CPU load is a view of the file.
  const std::string path = (std::filesystem::temp_directory_path() / "anatomy-consumer.safetensors").string();
  anatomy::nn::save(path, {{"x", x}}, {{"format", "pt"}});
  {
    anatomy::nn::Loaded ck = anatomy::nn::load(path);
    ok = ok && ck.tensors.at("x").equal(x) && ck.metadata.at("format") == "pt";
  }
  std::remove(path.c_str());
  std::cout << (ok ? "consumer: ok" : "consumer: FAILED") << "\n";
  return ok ? 0 : 1;
}
