// The worked example of docs/dispatcher.md, compiled and run as a test: a user-defined operator
// `myops::scale(Tensor self, float factor) -> Tensor` with a CPU and a Meta kernel, called
// through a typed handle, with its dispatch table and its trace. The page shows this file verbatim.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

// 1. Kernels are plain functions whose parameters match the schema, type for type
//    (Tensor -> const Tensor&, float -> double).
Tensor scale_cpu(const Tensor& self, double factor) {
  ANATOMY_CHECK(self.dtype() == DType::Float32, TypeError, "myops::scale: expects fp32, got {}", name(self.dtype()));
  Tensor in = self.contiguous();                 // itself an operator call: it shows in the trace
  Tensor out = empty(in.sizes(), in.options());  // so is this
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < in.numel(); ++i) dst[i] = static_cast<float>(src[i] * factor);
  return out;
}

// The Meta kernel makes the same checks and the same output, without data.
Tensor scale_meta(const Tensor& self, double) {
  ANATOMY_CHECK(self.dtype() == DType::Float32, TypeError, "myops::scale: expects fp32, got {}", name(self.dtype()));
  return empty(self.sizes(), self.options());
}

}  // namespace

// 2. The schema, in its own namespace, once.
ANATOMY_LIBRARY(myops, m) { m.def("scale(Tensor self, float factor) -> Tensor"); }

// 3. One block per dispatch key. The kernel's C++ signature is checked against the schema here.
ANATOMY_LIBRARY_IMPL(myops, CPU, m) { m.impl("scale", ANATOMY_KERNEL(scale_cpu)); }
ANATOMY_LIBRARY_IMPL(myops, Meta, m) { m.impl("scale", ANATOMY_KERNEL(scale_meta)); }

// 4. The function users call: a typed handle, looked up once, and one call through it.
Tensor scale(const Tensor& self, double factor) {
  ANATOMY_OP(op, "myops::scale", Tensor(const Tensor&, double));
  return op.call(self, factor);
}

TEST_CASE("example: myops::scale runs its CPU kernel on CPU tensors") {
  Tensor x = arange(6, DType::Float32).view({2, 3});
  Tensor y = scale(x.t(), 2.0);  // a non-contiguous input
  CHECK(y.sizes() == IntArrayRef{3, 2});
  const float* p = y.data_ptr<float>();
  CHECK(std::vector<float>(p, p + 6) == std::vector<float>{0, 6, 2, 8, 4, 10});
  CHECK_THROWS_AS(scale(zeros({2}, DType::Float64), 2.0), TypeError);
}

TEST_CASE("example: on meta tensors, only the shape is computed") {
  Tensor y = scale(empty({4, 5}, kMeta), 3.0);
  CHECK(y.is_meta());
  CHECK(y.sizes() == IntArrayRef{4, 5});
}

TEST_CASE("example: the table and the trace show where the call went") {
  std::string table = dispatch::dump("myops::scale");
  CHECK(table.find("  Meta                       scale_meta\n") != std::string::npos);
  CHECK(table.find("  CPU                        scale_cpu\n") != std::string::npos);
  CHECK(table.find("  CUDA                       missing\n") != std::string::npos);

  Tensor x = ones({2, 2});
  dispatch::TraceCapture trace;
  scale(x, 0.5);
  CHECK(trace.text() ==
        "[dispatch] myops::scale [AutogradCPU, CPU] -> AutogradCPU (autograd_fallback [fallback])\n"
        "[dispatch]   redispatch myops::scale [CPU] -> CPU (scale_cpu)\n"
        "[dispatch]     aten::contiguous [AutogradCPU, CPU] -> AutogradCPU (contiguous_composite "
        "[CompositeImplicitAutograd])\n"
        "[dispatch]     aten::empty.memory_format [BackendSelect] -> BackendSelect (backend_select)\n"
        "[dispatch]       redispatch aten::empty.memory_format [CPU] -> CPU (empty_cpu)\n");
}

TEST_CASE("example: a typed handle by hand, and the Tracer's record") {
  auto op = dispatch::Dispatcher::singleton().find_or_throw("myops::scale").typed<Tensor(const Tensor&, double)>();
  dispatch::Tracer tracer;
  Tensor y = op.call(full({3}, 2.0), 1.5);
  CHECK(y[2].item<double>() == 3.0);
  // Every call on this thread while the Tracer lives, with its depth and arguments.
  std::vector<std::string> calls;
  for (const auto& c : tracer.calls()) {
    calls.push_back(fmt::format("{}{}({})", std::string(2 * c.depth, ' '), c.op, fmt::join(c.args, ", ")));
  }
  CHECK(calls == std::vector<std::string>{
                     "aten::full([3], 2, None, None)",
                     "  aten::empty.memory_format([3], fp32, cpu, None)",
                     "  aten::fill_.Scalar(Tensor[3] fp32 cpu, 2)",
                     "myops::scale(Tensor[3] fp32 cpu, 1.5)",
                     "  aten::contiguous(Tensor[3] fp32 cpu, contiguous_format)",
                     "  aten::empty.memory_format([3], fp32, cpu, None)",
                     "aten::select.int(Tensor[3] fp32 cpu, 0, 2)",
                     "aten::_local_scalar_dense(Tensor[] fp32 cpu)",
                 });
}
