// nn::Upsample (see upsampling.h) on upsample_nearest2d and upsample_bilinear2d.
#include "anatomy/nn/upsampling.h"

#include <cmath>

namespace anatomy::nn {

namespace {

const UpsampleArgs& checked(const UpsampleArgs& a) {
  const bool has_size = !a.size.values.empty(), has_factor = !a.scale_factor.values.empty();
  ANATOMY_CHECK(!(has_size && has_factor), ValueError, "Upsample: only one of size or scale_factor should be defined");
  ANATOMY_CHECK(has_size || has_factor, ValueError, "Upsample: either size or scale_factor should be defined");
  const bool known = a.mode == "nearest" || a.mode == "linear" || a.mode == "bilinear" || a.mode == "bicubic" ||
                     a.mode == "trilinear" || a.mode == "area" || a.mode == "nearest-exact";
  ANATOMY_CHECK(known, ValueError,
                "Upsample: mode must be one of 'nearest', 'linear', 'bilinear', 'bicubic', 'trilinear', 'area', "
                "'nearest-exact', got '{}'",
                a.mode);
  ANATOMY_CHECK(a.mode == "nearest" || a.mode == "bilinear", NotImplementedError,
                "Upsample: mode '{}' is not implemented (only 'nearest' and 'bilinear' are)", a.mode);
  ANATOMY_CHECK(!a.align_corners || a.mode == "bilinear", ValueError,
                "Upsample: align_corners option can only be set with the interpolating modes: linear | bilinear | "
                "bicubic | trilinear");
  if (has_size) expanded("Upsample", "size", a.size, 2, 0);
  if (has_factor) {
    const auto& f = a.scale_factor.values;
    ANATOMY_CHECK(f.size() == 1 || f.size() == 2, ValueError, "Upsample: scale_factor must be one or 2 values, got {}",
                  f.size());
    for (double v : f)
      ANATOMY_CHECK(std::isfinite(v) && v > 0, ValueError, "Upsample: scale_factor must be positive and finite, got {}",
                    v);
  }
  return a;
}

std::string factor_repr(const ScaleFactor& f) { return f.scalar ? py_float(f.values[0]) : py_tuple(f.values); }

}  // namespace

Upsample::Upsample(const UpsampleArgs& args)
    : Module("Upsample"),
      size(checked(args).size.values.empty() ? std::nullopt : std::optional<IntOrList>(args.size)),
      scale_factor(args.scale_factor.values.empty() ? std::nullopt : std::optional<ScaleFactor>(args.scale_factor)),
      mode(args.mode),
      align_corners(args.align_corners) {}

Tensor Upsample::forward(const Tensor& input) {
  ANATOMY_CHECK(input.dim() == 4, NotImplementedError,
                "Upsample: only 4-D [N, C, H, W] inputs are implemented, got a {}-D input", input.dim());
  std::vector<int64_t> out_size;
  std::optional<double> scale_h, scale_w;
  if (size) {
    out_size = expanded("Upsample", "size", *size, 2, 0);
  } else {
    const auto& f = scale_factor->values;
    scale_h = f[0];
    scale_w = f.size() == 2 ? f[1] : f[0];
    out_size = {static_cast<int64_t>(std::floor(static_cast<double>(input.size(2)) * *scale_h)),
                static_cast<int64_t>(std::floor(static_cast<double>(input.size(3)) * *scale_w))};
  }
  if (mode == "nearest") return upsample_nearest2d(input, out_size, scale_h, scale_w);
  return upsample_bilinear2d(input, out_size, align_corners.value_or(false), scale_h, scale_w);
}

std::string Upsample::extra_repr() const {
  const std::string what = scale_factor ? "scale_factor=" + factor_repr(*scale_factor) : "size=" + size->repr();
  return fmt::format("{}, mode='{}'", what, mode);
}

}  // namespace anatomy::nn
