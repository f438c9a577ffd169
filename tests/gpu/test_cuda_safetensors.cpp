// GPU tests of checkpoints (nn/safetensors.h) with CUDA tensors: save copies them to the host
// (non-contiguous ones C-contiguous) and writes the same bytes as for their CPU copies; load onto
// a CUDA device gives tensors on that device with the file's bytes, for every dtype.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "anatomy/cuda.h"
#include "anatomy/nn/safetensors.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::sample;

namespace {

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("anatomy-cuda-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("cuda safetensors: CUDA tensors save as their CPU copies and load back onto the device") {
  ANATOMY_REQUIRE_GPU();
  std::map<std::string, Tensor> on_device, on_host;
  for (DType dtype : gpu_test::all_dtypes()) {
    const Tensor t = sample({3, 4}, dtype).to(kCuda);
    const std::string n(name(dtype));
    on_device.emplace(n, t);
    on_device.emplace(n + ".t", t.t());  // non-contiguous on the device
    on_device.emplace(n + ".0d", t[1][2]);
    on_device.emplace(n + ".empty", t.narrow(0, 0, 0));
  }
  for (const auto& [key, t] : on_device) on_host.emplace(key, t.cpu());
  const std::string from_device = temp_file("device.safetensors"), from_host = temp_file("host.safetensors");
  nn::save(from_device, on_device, {{"format", "pt"}});
  nn::save(from_host, on_host, {{"format", "pt"}});
  CHECK(read_file(from_device) == read_file(from_host));

  nn::Loaded loaded = nn::load(from_device, kCuda);
  CHECK(loaded.metadata.at("format") == "pt");
  REQUIRE(loaded.tensors.size() == on_device.size());
  for (const auto& [key, t] : on_device) {
    CAPTURE(key);
    const Tensor& got = loaded.tensors.at(key);
    CHECK(got.device().is_cuda());
    CHECK(got.is_contiguous());
    CHECK(same_values(got, t));
  }
  std::filesystem::remove(from_device);
  std::filesystem::remove(from_host);
}
