// gpu-anatomy c01 layout: seed 004's "Tensor Layout Analysis". A table of common views of one
// NCHW tensor (transpose, slice with a step, narrow, expand, as_strided, unsqueeze, the permute
// of NCHW to NHWC, a view of a view): sizes, strides, storage offset, the data pointer's
// alignment, contiguity in each memory format, and whether the view shares the base's storage.
// Each view is checked against the storage itself: the base holds arange, so every element of a
// view must equal the storage position its strides point at (offset + sum of index * stride). A
// last row, contiguous(channels_last), is a copy, for contrast.
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"

namespace anatomy::tools {
namespace {

struct ViewRow {
  std::string name;
  std::function<Tensor(const Tensor&)> make;
};

// Whether each element of v equals the storage position its index maps to.
bool matches_storage(const Tensor& v) {
  const Tensor values = v.to(kCPU, DType::Float64).contiguous();
  const double* got = values.data_ptr<double>();
  const int64_t n = v.numel();
  std::vector<int64_t> index(static_cast<size_t>(v.dim()), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t position = v.storage_offset();
    for (int64_t d = 0; d < v.dim(); ++d) position += index[d] * v.stride(d);
    if (got[i] != static_cast<double>(position)) return false;
    for (int64_t d = v.dim() - 1; d >= 0; --d) {
      if (++index[d] < v.size(d)) break;
      index[d] = 0;
    }
  }
  return true;
}

void run(const CommonOptions& o) {
  const Device device = resolve_device(o.device, o.quiet);
  const DType dtype = resolve_dtype(o.dtype);
  Report report("c01", "layout", o, device);
  // arange up to 119 is exact in every dtype the option takes (int8 included).
  const Tensor base = arange(120, TensorOptions().dtype(DType::Float32)).to(device, dtype).view({2, 3, 4, 5});
  const std::vector<ViewRow> rows = {
      {"base NCHW (2, 3, 4, 5)", [](const Tensor& x) { return x; }},
      {"transpose(2, 3)", [](const Tensor& x) { return x.transpose(2, 3); }},
      {"slice [:, :, ::2]", [](const Tensor& x) { return x.slice(2, 0, std::nullopt, 2); }},
      {"narrow(3, 1, 3)", [](const Tensor& x) { return x.narrow(3, 1, 3); }},
      {"x[:1].expand(4, 3, 4, 5)",
       [](const Tensor& x) {
         return x.narrow(0, 0, 1).expand({4, 3, 4, 5});
       }},
      {"as_strided((3, 4), (5, 2), 1)",
       [](const Tensor& x) {
         return x.as_strided({3, 4}, {5, 2}, 1);
       }},
      {"unsqueeze(1)", [](const Tensor& x) { return x.unsqueeze(1); }},
      {"permute(0, 2, 3, 1) NHWC",
       [](const Tensor& x) {
         return x.permute({0, 2, 3, 1});
       }},
      {"narrow(1, 1, 2).view(2, 2, 20)",
       [](const Tensor& x) {
         return x.narrow(1, 1, 2).view({2, 2, 20});
       }},
      // Not a view: a copy into NHWC order that keeps the NCHW shape, for contrast.
      {"contiguous(channels_last) copy", [](const Tensor& x) { return x.contiguous(MemoryFormat::ChannelsLast); }},
  };
  fmt::print("Views of one {} tensor on {} ({} bytes per element); the base holds arange(120)\n\n",
             long_dtype_name(dtype), device.str(), element_size(dtype));
  fmt::print("{:<32} {:<16} {:<18} {:>6} {:>9} {:>10} {:>13} {:>7} {:>8}\n", "view", "shape", "strides", "offset",
             "ptr % 128", "contiguous", "channels_last", "shared", "storage");
  nlohmann::json table = nlohmann::json::array();
  bool all_match = true;
  int shared_count = 0;
  std::vector<std::string> channels_last, misaligned;
  for (const ViewRow& row : rows) {
    const Tensor v = row.make(base);
    const auto address = reinterpret_cast<uintptr_t>(v.data_ptr());
    const bool shared = v.storage()->data() == base.storage()->data();
    const bool cl = v.dim() == 4 && v.is_contiguous(MemoryFormat::ChannelsLast);
    // A copy holds the base's values in new storage, in its own order: checked element by element
    // against the base instead of against storage positions.
    const bool ok = shared ? matches_storage(v) : v.to(kCPU).equal(base.to(kCPU));
    shared_count += shared ? 1 : 0;
    if (cl) channels_last.push_back(row.name);
    if (address % 16 != 0) misaligned.push_back(row.name);
    all_match = all_match && ok;
    fmt::print("{:<32} {:<16} {:<18} {:>6} {:>9} {:>10} {:>13} {:>7} {:>8}\n", row.name, shape_tuple(v.sizes()),
               shape_tuple(v.strides()), v.storage_offset(), address % 128, v.is_contiguous() ? "yes" : "no",
               v.dim() == 4 ? (cl ? "yes" : "no") : "-", shared ? "yes" : "no", ok ? "matches" : "DIFFERS");
    table.push_back({{"view", row.name},
                     {"shape", std::vector<int64_t>(v.sizes().begin(), v.sizes().end())},
                     {"strides", std::vector<int64_t>(v.strides().begin(), v.strides().end())},
                     {"storage_offset", v.storage_offset()},
                     {"pointer_mod_128", address % 128},
                     {"is_contiguous", v.is_contiguous()},
                     {"is_channels_last", cl},
                     {"shares_storage", shared},
                     {"matches_storage", ok}});
  }
  report.results()["views"] = table;
  report.add_note(
      fmt::format("{} of {} rows share the base's storage (views: sizes, strides and an offset over the "
                  "same bytes, no copy); the others are copies",
                  shared_count, rows.size()));
  report.add_note(
      fmt::format("channels_last-contiguous: {}; the NHWC permute is a view whose shape is NHWC, "
                  "contiguous in neither format, while contiguous(channels_last) copies into NHWC order "
                  "and keeps the NCHW shape",
                  channels_last.empty() ? std::string("none") : fmt::format("{}", fmt::join(channels_last, ", "))));
  report.add_note(
      fmt::format("data pointers not 16-byte aligned (no 16-byte vector loads from the start): {}",
                  misaligned.empty() ? std::string("none") : fmt::format("{}", fmt::join(misaligned, ", "))));
  report.print_notes();
  report.write_json();
  if (!all_match) throw ExperimentFailed("c01 layout: a view's elements differ from the storage its strides name");
}

}  // namespace

void add_c01_layout(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("layout", "Sizes, strides, offsets and alignment of common views");
  auto o = std::make_shared<CommonOptions>();
  add_common_options(cmd, *o, CommonDefaults{"fp32", {"fp32", "fp16", "bf16", "fp64", "int8"}, std::nullopt});
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
