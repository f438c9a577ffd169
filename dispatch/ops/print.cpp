// Tensor printing: values are gathered into doubles on the CPU, a common number format is
// chosen for all of them (as PyTorch does), then nested brackets are written with summarization.
#include "anatomy/dispatch/ops/print.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <ostream>
#include <vector>

#include "anatomy/core/dtype_visit.h"

namespace anatomy {
namespace {

PrintOptions g_options;

// The indices along one dim that are shown (all, or edgeitems at each end around a gap).
std::vector<int64_t> shown_indices(int64_t size, bool summarize, int64_t edge) {
  std::vector<int64_t> idx;
  if (summarize && size > 2 * edge) {
    for (int64_t i = 0; i < edge; ++i) idx.push_back(i);
    idx.push_back(-1);  // the "..." marker
    for (int64_t i = size - edge; i < size; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < size; ++i) idx.push_back(i);
  }
  return idx;
}

struct Formatter {
  DType dtype;
  bool int_mode = false, sci_mode = false;
  int precision = 4;
  size_t width = 1;

  std::string raw(double v) const {
    if (dtype == DType::Bool) return v != 0 ? "True" : "False";
    if (!is_floating(dtype)) return fmt::format("{}", static_cast<int64_t>(v));
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (int_mode) return fmt::format("{:.0f}.", v);
    if (sci_mode) return fmt::format("{:.{}e}", v, precision);
    return fmt::format("{:.{}f}", v, precision);
  }
  std::string operator()(double v) const {
    std::string s = raw(v);
    return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
  }
};

Formatter make_formatter(DType dtype, const std::vector<double>& values, int precision) {
  Formatter f{dtype};
  f.precision = precision;
  if (is_floating(dtype)) {
    std::vector<double> finite;
    for (double v : values) {
      if (std::isfinite(v)) finite.push_back(v);
    }
    f.int_mode = std::all_of(finite.begin(), finite.end(), [](double v) { return v == std::floor(v); });
    double max_abs = 0, min_abs = INFINITY;
    for (double v : finite) {
      if (v != 0) {
        max_abs = std::max(max_abs, std::fabs(v));
        min_abs = std::min(min_abs, std::fabs(v));
      }
    }
    // PyTorch: integers print as "1." unless their range is wide; other values switch to
    // scientific notation for a wide range or very large or small magnitudes.
    if (f.int_mode) {
      f.sci_mode = max_abs > 0 && (max_abs / min_abs > 1000.0 || max_abs > 1e8);
    } else {
      f.sci_mode = max_abs > 0 && (max_abs / min_abs > 1000.0 || max_abs > 1e8 || min_abs < 1e-4);
    }
    if (f.sci_mode) f.int_mode = false;
  }
  for (double v : values) f.width = std::max(f.width, f.raw(v).size());
  return f;
}

// Gathers the shown elements (row-major over the shown indices) as doubles.
void gather(const Tensor& t, int64_t dim, int64_t offset, bool summarize, std::vector<double>& out) {
  if (dim == t.dim()) {
    visit_dtype(t.dtype(), "print",
                [&]<typename T>() { out.push_back(convert<double>(static_cast<const T*>(t.data_ptr())[offset])); });
    return;
  }
  for (int64_t i : shown_indices(t.sizes()[dim], summarize, g_options.edgeitems)) {
    if (i >= 0) gather(t, dim + 1, offset + i * t.strides()[dim], summarize, out);
  }
}

void write(const Tensor& t, int64_t dim, const Formatter& f, const std::vector<double>& values, size_t& next,
           bool summarize, size_t indent, std::string& out) {
  if (dim == t.dim()) {
    out += f(values[next++]);
    return;
  }
  out += "[";
  auto idx = shown_indices(t.sizes()[dim], summarize, g_options.edgeitems);
  bool inner = dim == t.dim() - 1;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (k > 0) {
      out += ",";
      if (inner) {
        out += " ";
      } else {
        out += std::string(t.dim() - dim - 1, '\n') + std::string(indent + 1, ' ');
      }
    }
    if (idx[k] < 0) {
      out += inner ? " ..." : "...";
    } else {
      write(t, dim + 1, f, values, next, summarize, indent + 1, out);
    }
  }
  out += "]";
}

std::string suffix(const Tensor& t, bool show_dtype) {
  std::string s;
  if (!t.device().is_cpu()) s += fmt::format(", device='{}'", t.device().str());
  if (show_dtype) s += fmt::format(", dtype={}", name(t.dtype()));
  if (const AutogradMetaInterface* m = t.impl()->autograd_meta()) {
    std::string fn = m->grad_fn_name();
    if (!fn.empty()) s += fmt::format(", grad_fn=<{}>", fn);
    else if (m->requires_grad()) s += ", requires_grad=True";
  }
  return s;
}

}  // namespace

void set_print_options(const PrintOptions& options) { g_options = options; }
const PrintOptions& print_options() { return g_options; }

std::string shape_string(IntArrayRef sizes) {
  if (sizes.size() == 1) return fmt::format("({},)", sizes[0]);
  return fmt::format("({})", fmt::join(sizes, ", "));
}

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  // The dtypes PyTorch leaves unsaid: the default float, int64 and bool.
  bool show_dtype = !(t.dtype() == kDefaultFloat || t.dtype() == DType::Int64 || t.dtype() == DType::Bool);
  if (t.is_meta()) {
    return fmt::format("tensor(..., size={}{})", shape_string(t.sizes()), suffix(t, true));
  }
  if (t.numel() == 0) {
    std::string size = t.dim() == 1 ? "" : fmt::format(", size={}", shape_string(t.sizes()));
    return fmt::format("tensor([]{}{})", size, suffix(t, show_dtype));
  }
  Tensor host = t.device().is_cpu() ? t : t.cpu();
  bool summarize = host.numel() > g_options.threshold;
  std::vector<double> values;
  gather(host, 0, 0, summarize, values);
  Formatter f = make_formatter(host.dtype(), values, g_options.precision);
  std::string body;
  size_t next = 0;
  write(host, 0, f, values, next, summarize, std::string("tensor(").size(), body);
  return fmt::format("tensor({}{})", body, suffix(t, show_dtype));
}

std::string describe(const Tensor& t) {
  int64_t offset_bytes = t.storage_offset() * static_cast<int64_t>(t.element_size());
  std::string s;
  s += fmt::format("  shape          : {}\n", shape_string(t.sizes()));
  s += fmt::format("  dtype          : {}\n", torch_name(t.dtype()));
  s += fmt::format("  device         : {}\n", t.device().str());
  s += fmt::format("  is_contiguous  : {}\n", t.is_contiguous() ? "yes" : "no");
  s += fmt::format("  strides        : {}\n", shape_string(t.strides()));
  s += fmt::format("  storage_offset : {}\n", t.storage_offset());
  s += fmt::format("  offset_bytes   : {}  (mod 128 = {})\n", offset_bytes, offset_bytes % 128);
  return s;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace anatomy
