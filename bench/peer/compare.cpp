// Moving anatomy results into torch and comparing them with torch's own (peer.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "peer.h"

namespace peer {

at::Tensor to_torch(const anatomy::Tensor& t) {
  const bool int64 = t.dtype() == anatomy::DType::Int64;
  ANATOMY_CHECK(t.device().is_cpu() && t.is_contiguous() && (t.dtype() == anatomy::DType::Float32 || int64), ValueError,
                "to_torch: expected a contiguous fp32 or int64 CPU tensor");
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  return at::from_blob(t.data_ptr(), sizes, int64 ? at::kLong : at::kFloat).clone();
}

std::string compare(const anatomy::Tensor& got, const at::Tensor& want, Tolerance tol) {
  // In fp32: exact for the fp16 and bf16 results of the low-precision cases.
  const anatomy::Tensor got_cpu = got.cpu().to(anatomy::DType::Float32).contiguous();
  const at::Tensor g = to_torch(got_cpu).to(at::kDouble);
  const at::Tensor w = want.cpu().to(at::kDouble);
  if (!g.sizes().equals(w.sizes())) {
    return fmt::format("shapes differ: anatomy [{}], torch [{}]", fmt::join(g.sizes(), ", "),
                       fmt::join(w.sizes(), ", "));
  }
  if (w.numel() == 0) return {};
  const at::Tensor diff = (g - w).abs();
  const at::Tensor bound = tol.atol + tol.rtol * w.abs();
  // NaN on either side fails: a NaN difference is never <= the bound.
  const int64_t bad = (diff <= bound).logical_not().sum().item<int64_t>();
  if (bad == 0) return {};
  const int64_t worst = (diff - bound).nan_to_num(INFINITY).argmax().item<int64_t>();
  return fmt::format("{} of {} elements outside atol {} rtol {}; e.g. element {}: anatomy {}, torch {}", bad, w.numel(),
                     tol.atol, tol.rtol, worst, g.flatten()[worst].item<double>(), w.flatten()[worst].item<double>());
}

}  // namespace peer
