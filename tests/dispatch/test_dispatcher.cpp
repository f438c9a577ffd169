// Tests for the dispatcher: how an operator's table is computed from its registrations (Note
// [Computing the dispatch table] in dispatch/operator_entry.h), fallthrough, the thread-local
// guards, redispatch, boxed calls and the Tracer, registration errors, and the docs' example.
//
// Each test operator lives in the `test_dispatch` namespace; its kernels record a marker (which
// kernel ran, at which key) in a thread-local log, so a test can assert the route a call took.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;
using namespace anatomy::dispatch;

namespace {

// A list of strings that doctest can print when a check fails.
struct Marks : std::vector<std::string> {
  using std::vector<std::string>::vector;
  Marks(std::vector<std::string> v) : std::vector<std::string>(std::move(v)) {}
};
std::ostream& operator<<(std::ostream& os, const Marks& m) {
  os << "{";
  for (size_t i = 0; i < m.size(); ++i) os << (i ? ", \"" : "\"") << m[i] << "\"";
  return os << "}";
}

thread_local std::vector<std::string> t_marks;

Marks take_marks() { return std::exchange(t_marks, {}); }

// ---- marker kernels: each notes its name (and, when it takes the key set, the key it ran at) ----
Tensor cpu_kernel(const Tensor& self) {
  t_marks.push_back("cpu");
  return self;
}
Tensor meta_kernel(const Tensor& self) {
  t_marks.push_back("meta");
  return self;
}
Tensor explicit_kernel(DispatchKeySet ks, const Tensor& self) {
  t_marks.push_back(fmt::format("explicit@{}", to_string(ks.highest())));
  return self;
}
Tensor implicit_kernel(DispatchKeySet ks, const Tensor& self) {
  t_marks.push_back(fmt::format("implicit@{}", to_string(ks.highest())));
  return self;
}
Tensor autograd_kernel(DispatchKeySet ks, const Tensor& self) {
  t_marks.push_back(fmt::format("autograd@{}", to_string(ks.highest())));
  return self;
}
Tensor autograd_meta_kernel(const Tensor& self) {
  t_marks.push_back("autograd_meta");
  return self;
}

// The Tracer-key kernel of `traced_directly`: notes itself, then passes the call below its key.
Tensor tracer_kernel(DispatchKeySet ks, const Tensor& self) {
  static const auto op =
      Dispatcher::singleton().find_or_throw("test_dispatch::traced_directly").typed<Tensor(const Tensor&)>();
  t_marks.push_back("tracer");
  return op.redispatch(ks & DispatchKeySet::below(DispatchKey::Tracer), self);
}

// `redispatch`: an AutogradCPU kernel that hands the call to the keys below its own.
Tensor redispatch_autograd(DispatchKeySet ks, const Tensor& self) {
  static const auto op =
      Dispatcher::singleton().find_or_throw("test_dispatch::redispatch").typed<Tensor(const Tensor&)>();
  t_marks.push_back(fmt::format("AutogradCPU saw {}", to_string(ks)));
  return op.redispatch(ks & DispatchKeySet::below(DispatchKey::AutogradCPU), self);
}
Tensor redispatch_cpu(DispatchKeySet ks, const Tensor& self) {
  t_marks.push_back(fmt::format("CPU saw {}", to_string(ks)));
  return self;
}

int64_t no_tensors_cpu(int64_t n) { return n; }
void noop_cpu(const Tensor&) { t_marks.push_back("noop"); }
double difference_cpu(const Tensor&, double a, double b) { return a - b; }
Tensor sig_checked_cpu(const Tensor& self, int64_t) { return self; }
Tensor sig_checked_wrong(const Tensor& self, double) { return self; }

// ---- every boxed value type, in one schema ----
constexpr const char* kAllTypesArgs =
    "(Tensor a, Tensor? b, Tensor? c, Tensor[] ts, Scalar s, int i, float f, bool flag, int[] ints, "
    "ScalarType dtype, Device device, str name, MemoryFormat format) -> (Tensor, Tensor)";
using AllTypesSig = std::tuple<Tensor, Tensor>(const Tensor&, const std::optional<Tensor>&,
                                               const std::optional<Tensor>&, TensorList, const Scalar&, int64_t, double,
                                               bool, IntArrayRef, DType, Device, std::string_view, MemoryFormat);

// What a boxed kernel saw: "type=value" per stack entry.
std::string g_boxed_seen;

// A boxed kernel for `boxed_all`: reads the 13 arguments off the stack and returns (a, ts[1]).
void boxed_all_cpu(const OperatorHandle& op, DispatchKeySet ks, Stack& stack, void* ctx) {
  auto* seen = static_cast<std::string*>(ctx);
  size_t n = op.schema().arguments.size();
  REQUIRE(stack.size() >= n);
  seen->clear();
  for (size_t i = stack.size() - n; i < stack.size(); ++i) {
    *seen += fmt::format("{}{}={}", seen->empty() ? "" : "; ", stack[i].type_name(), stack[i].to_string());
  }
  *seen += fmt::format(" @ {}", to_string(ks));
  Tensor a = stack[stack.size() - n].get<Tensor>();
  Tensor second = stack[stack.size() - n + 3].get<std::vector<Tensor>>().at(1);
  stack.resize(stack.size() - n);
  stack.emplace_back(a);
  stack.emplace_back(second);
}

// A boxed kernel returning a list: `n` handles of self.
void boxed_list_cpu(const OperatorHandle&, DispatchKeySet, Stack& stack, void*) {
  int64_t n = stack.back().get<int64_t>();
  Tensor self = stack[stack.size() - 2].get<Tensor>();
  stack.resize(stack.size() - 2);
  stack.emplace_back(std::vector<Tensor>(static_cast<size_t>(n), self));
}

// A typed kernel with every argument type: describes its C++ arguments, returns (b or a, ts.back()).
std::tuple<Tensor, Tensor> typed_all_cpu(const Tensor& a, const std::optional<Tensor>& b,
                                         const std::optional<Tensor>& c, TensorList ts, const Scalar& s, int64_t i,
                                         double f, bool flag, IntArrayRef ints, DType dtype, Device device,
                                         std::string_view name, MemoryFormat format) {
  t_marks.push_back(fmt::format(
      "a={} b={} c={} ts={} s={} i={} f={} flag={} ints=[{}] dtype={} device={} name={} format={}", a.numel(),
      b ? std::to_string(b->numel()) : "none", c ? std::to_string(c->numel()) : "none", ts.size(), s.to_string(), i, f,
      flag, fmt::join(ints, ","), anatomy::name(dtype), device.str(), name, to_string(format)));
  return {b.value_or(a), ts.back()};
}

// `int[]?`: None and an empty list are different values, and must stay so across the stack.
Tensor optional_list_cpu(const Tensor& self, OptionalIntArrayRef dims) {
  t_marks.push_back(dims ? fmt::format("dims=[{}]", fmt::join(*dims, ",")) : std::string("dims=None"));
  return self;
}

}  // namespace

ANATOMY_LIBRARY(test_dispatch, m) {
  m.def("direct_wins(Tensor self) -> Tensor");
  m.def("explicit_over_implicit(Tensor self) -> Tensor");
  m.def("implicit_only(Tensor self) -> Tensor");
  m.def("implicit_and_cpu(Tensor self) -> Tensor");
  m.def("cpu_only(Tensor self) -> Tensor");
  m.def("autograd_alias(Tensor self) -> Tensor");
  m.def("fallthrough_op(Tensor self) -> Tensor");
  m.def("traced_directly(Tensor self) -> Tensor");
  m.def("redispatch(Tensor self) -> Tensor");
  m.def("no_tensors(int n) -> int");
  m.def("noop(Tensor self) -> ()");
  m.def("difference(Tensor self, float a, float b) -> float");
  m.def("sig_checked(Tensor self, int n) -> Tensor");
  m.def(std::string("boxed_all") + kAllTypesArgs);
  m.def(std::string("typed_all") + kAllTypesArgs);
  m.def("boxed_list(Tensor self, int n) -> Tensor[]");
  m.def("optional_list(Tensor self, int[1]? dims=None) -> Tensor");
}

ANATOMY_LIBRARY_IMPL(test_dispatch, CPU, m) {
  m.impl("direct_wins", ANATOMY_KERNEL(cpu_kernel));
  m.impl("implicit_and_cpu", ANATOMY_KERNEL(cpu_kernel));
  m.impl("cpu_only", ANATOMY_KERNEL(cpu_kernel));
  m.impl("autograd_alias", ANATOMY_KERNEL(cpu_kernel));
  m.impl("fallthrough_op", ANATOMY_KERNEL(cpu_kernel));
  m.impl("traced_directly", ANATOMY_KERNEL(cpu_kernel));
  m.impl("redispatch", ANATOMY_KERNEL(redispatch_cpu));
  m.impl("no_tensors", ANATOMY_KERNEL(no_tensors_cpu));
  m.impl("noop", ANATOMY_KERNEL(noop_cpu));
  m.impl("difference", ANATOMY_KERNEL(difference_cpu));
  m.impl("sig_checked", ANATOMY_KERNEL(sig_checked_cpu));
  m.impl_boxed("boxed_all", &boxed_all_cpu, "boxed_all_cpu", &g_boxed_seen);
  m.impl("typed_all", ANATOMY_KERNEL(typed_all_cpu));
  m.impl_boxed("boxed_list", &boxed_list_cpu, "boxed_list_cpu");
  m.impl("optional_list", ANATOMY_KERNEL(optional_list_cpu));
}
ANATOMY_LIBRARY_IMPL(test_dispatch, Meta, m) {
  m.impl("autograd_alias", ANATOMY_KERNEL(meta_kernel));
  m.impl("fallthrough_op", ANATOMY_KERNEL(meta_kernel));
}
ANATOMY_LIBRARY_IMPL(test_dispatch, CompositeExplicitAutograd, m) {
  m.impl("direct_wins", ANATOMY_KERNEL(explicit_kernel));
  m.impl("explicit_over_implicit", ANATOMY_KERNEL(explicit_kernel));
}
ANATOMY_LIBRARY_IMPL(test_dispatch, CompositeImplicitAutograd, m) {
  m.impl("direct_wins", ANATOMY_KERNEL(implicit_kernel));
  m.impl("explicit_over_implicit", ANATOMY_KERNEL(implicit_kernel));
  m.impl("implicit_only", ANATOMY_KERNEL(implicit_kernel));
  m.impl("implicit_and_cpu", ANATOMY_KERNEL(implicit_kernel));
}
ANATOMY_LIBRARY_IMPL(test_dispatch, Autograd, m) {
  m.impl("autograd_alias", ANATOMY_KERNEL(autograd_kernel));
  m.impl("fallthrough_op", ANATOMY_KERNEL(autograd_kernel));
}
ANATOMY_LIBRARY_IMPL(test_dispatch, AutogradMeta, m) { m.impl("autograd_alias", ANATOMY_KERNEL(autograd_meta_kernel)); }
ANATOMY_LIBRARY_IMPL(test_dispatch, AutogradCPU, m) {
  m.impl("redispatch", ANATOMY_KERNEL(redispatch_autograd));
  m.impl_fallthrough("fallthrough_op");
}
ANATOMY_LIBRARY_IMPL(test_dispatch, Tracer, m) { m.impl("traced_directly", ANATOMY_KERNEL(tracer_kernel)); }

namespace {

using UnaryOp = TypedOperatorHandle<Tensor(const Tensor&)>;
UnaryOp unary(const char* name) { return Dispatcher::singleton().find_or_throw(name).typed<Tensor(const Tensor&)>(); }

// The kernel name the computed table holds for `key`.
std::string table(const char* op, DispatchKey key) {
  return Dispatcher::singleton().find_or_throw(op).entry().kernel_name(key);
}

// Runs `op` on `t` and returns the markers its kernels left.
Marks run(const char* op, const Tensor& t) {
  take_marks();
  unary(op).call(t);
  return take_marks();
}

Tensor cpu_tensor() { return zeros({2}); }
Tensor meta_tensor() { return empty({2}, kMeta); }

// Reads a whole text file (the docs check below).
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Keys and key sets
// ---------------------------------------------------------------------------------------------

TEST_CASE("DispatchKeySet: priority is bit position, below() and the tensor key sets") {
  static_assert(DispatchKeySet{DispatchKey::CPU, DispatchKey::AutogradCPU}.highest() == DispatchKey::AutogradCPU);
  static_assert(DispatchKeySet().highest() == DispatchKey::Undefined);
  static_assert(DispatchKeySet::below(DispatchKey::BackendSelect) ==
                DispatchKeySet{DispatchKey::CPU, DispatchKey::CUDA, DispatchKey::Meta, DispatchKey::PrivateUse1});
  static_assert(!DispatchKeySet::below(DispatchKey::AutogradCPU).has(DispatchKey::AutogradCPU));
  static_assert(DispatchKeySet{DispatchKey::Meta, DispatchKey::CPU, DispatchKey::Tracer}.highest_backend() ==
                DispatchKey::Meta);
  static_assert(autograd_key_of(DispatchKey::PrivateUse1) == DispatchKey::AutogradPrivateUse1);
  static_assert(backend_of_autograd_key(DispatchKey::AutogradCUDA) == DispatchKey::CUDA);
  static_assert(sizeof(DispatchKeySet) == 8);

  CHECK(to_string(DispatchKeySet{DispatchKey::CPU, DispatchKey::Tracer, DispatchKey::AutogradCPU}) ==
        "[Tracer, AutogradCPU, CPU]");
  CHECK(to_string(DispatchKeySet()) == "[]");
  CHECK(cpu_tensor().key_set() == DispatchKeySet{DispatchKey::CPU, DispatchKey::AutogradCPU});
  CHECK(meta_tensor().key_set() == DispatchKeySet{DispatchKey::Meta, DispatchKey::AutogradMeta});
  // Views carry their base's keys.
  CHECK(cpu_tensor().view({1, 2}).key_set() == cpu_tensor().key_set());

  std::vector<DispatchKey> order;
  DispatchKeySet{DispatchKey::CPU, DispatchKey::Autocast, DispatchKey::BackendSelect}.for_each_high_to_low(
      [&](DispatchKey k) { order.push_back(k); });
  CHECK(order == std::vector<DispatchKey>{DispatchKey::Autocast, DispatchKey::BackendSelect, DispatchKey::CPU});
}

// ---------------------------------------------------------------------------------------------
// Note [Computing the dispatch table]
// ---------------------------------------------------------------------------------------------

TEST_CASE("dispatch table: a direct kernel beats CompositeExplicitAutograd, which beats CompositeImplicitAutograd") {
  // direct_wins: CPU + CompositeExplicitAutograd + CompositeImplicitAutograd.
  CHECK(dump("test_dispatch::direct_wins") ==
        "operator: test_dispatch::direct_wins\n"
        "schema:   direct_wins(Tensor self) -> Tensor\n"
        "registered kernels:\n"
        "  CPU                        cpu_kernel\n"
        "  CompositeImplicitAutograd  implicit_kernel\n"
        "  CompositeExplicitAutograd  explicit_kernel\n"
        "computed table (highest priority first):\n"
        "  Profiler                   profiler_fallback [fallback]\n"
        "  Tracer                     tracer_fallback [fallback]\n"
        "  Autocast                   fallthrough [fallback]\n"
        "  AutogradPrivateUse1        autograd_fallback [fallback]\n"
        "  AutogradMeta               autograd_fallback [fallback]\n"
        "  AutogradCUDA               autograd_fallback [fallback]\n"
        "  AutogradCPU                autograd_fallback [fallback]\n"
        "  BackendSelect              fallthrough [fallback]\n"
        "  PrivateUse1                explicit_kernel [CompositeExplicitAutograd]\n"
        "  Meta                       explicit_kernel [CompositeExplicitAutograd]\n"
        "  CUDA                       explicit_kernel [CompositeExplicitAutograd]\n"
        "  CPU                        cpu_kernel\n");
  CHECK(run("test_dispatch::direct_wins", cpu_tensor()) == Marks{"cpu"});
  CHECK(run("test_dispatch::direct_wins", meta_tensor()) == Marks{"explicit@Meta"});

  // Without a direct kernel, CompositeExplicitAutograd serves every backend; the implicit kernel
  // is not used at all, not even for the autograd keys (an explicit kernel means "I am a kernel,
  // autograd needs its own formula for me": without one, the autograd keys hold their fallback).
  const char* op = "test_dispatch::explicit_over_implicit";
  for (DispatchKey k : {DispatchKey::CPU, DispatchKey::CUDA, DispatchKey::Meta, DispatchKey::PrivateUse1}) {
    CHECK(table(op, k) == "explicit_kernel [CompositeExplicitAutograd]");
    CHECK(table(op, autograd_key_of(k)) == "autograd_fallback [fallback]");
  }
  CHECK(run(op, cpu_tensor()) == Marks{"explicit@CPU"});
  CHECK(run(op, meta_tensor()) == Marks{"explicit@Meta"});
}

TEST_CASE("dispatch table: CompositeImplicitAutograd fills backends, and autograd keys whose backend has no kernel") {
  // Alone, the implicit kernel fills every backend and every autograd key; a call stops at the
  // autograd key, so autograd sees (and differentiates through) the ops the composite calls.
  const char* op = "test_dispatch::implicit_only";
  for (DispatchKey k : {DispatchKey::CPU, DispatchKey::CUDA, DispatchKey::Meta, DispatchKey::PrivateUse1}) {
    CHECK(table(op, k) == "implicit_kernel [CompositeImplicitAutograd]");
    CHECK(table(op, autograd_key_of(k)) == "implicit_kernel [CompositeImplicitAutograd]");
  }
  CHECK(run(op, cpu_tensor()) == Marks{"implicit@AutogradCPU"});
  CHECK(run(op, meta_tensor()) == Marks{"implicit@AutogradMeta"});
  // Both keys stay in the mask (neither is a fallthrough).
  auto nf = Dispatcher::singleton().find_or_throw(op).entry().non_fallthrough();
  CHECK(nf.has(DispatchKey::AutogradCPU));
  CHECK(nf.has(DispatchKey::CPU));
  CHECK_FALSE(nf.has(DispatchKey::BackendSelect));

  // With a CPU kernel, AutogradCPU is left to its fallback (autograd's, which passes a call that
  // records nothing on), so CPU tensors reach the CPU kernel; other backends still get the
  // composite at their autograd key.
  op = "test_dispatch::implicit_and_cpu";
  CHECK(table(op, DispatchKey::CPU) == "cpu_kernel");
  CHECK(table(op, DispatchKey::AutogradCPU) == "autograd_fallback [fallback]");
  CHECK(table(op, DispatchKey::Meta) == "implicit_kernel [CompositeImplicitAutograd]");
  CHECK(table(op, DispatchKey::AutogradMeta) == "implicit_kernel [CompositeImplicitAutograd]");
  CHECK(run(op, cpu_tensor()) == Marks{"cpu"});
  CHECK(run(op, meta_tensor()) == Marks{"implicit@AutogradMeta"});
}

TEST_CASE("dispatch table: the Autograd alias fills every autograd key, and a per-key kernel beats it") {
  const char* op = "test_dispatch::autograd_alias";
  CHECK(table(op, DispatchKey::AutogradCPU) == "autograd_kernel [Autograd]");
  CHECK(table(op, DispatchKey::AutogradCUDA) == "autograd_kernel [Autograd]");
  CHECK(table(op, DispatchKey::AutogradPrivateUse1) == "autograd_kernel [Autograd]");
  CHECK(table(op, DispatchKey::AutogradMeta) == "autograd_meta_kernel");
  // The alias fills autograd keys only, never backends or other layers.
  CHECK(table(op, DispatchKey::CUDA) == "missing");
  CHECK(table(op, DispatchKey::BackendSelect) == "fallthrough [fallback]");
  CHECK(run(op, cpu_tensor()) == Marks{"autograd@AutogradCPU"});
  CHECK(run(op, meta_tensor()) == Marks{"autograd_meta"});
}

TEST_CASE("dispatch table: a fallback fills keys without kernels, and a kernel for the key beats it") {
  // cpu_only has no Tracer kernel: the Tracer's boxed fallback fills that slot; traced_directly
  // has one of its own.
  CHECK(table("test_dispatch::cpu_only", DispatchKey::Tracer) == "tracer_fallback [fallback]");
  CHECK(table("test_dispatch::traced_directly", DispatchKey::Tracer) == "tracer_kernel");
  // A composite beats a fallback too: implicit_only's autograd keys hold the composite, not the
  // autograd fallthrough.
  CHECK(table("test_dispatch::implicit_only", DispatchKey::AutogradCPU) ==
        "implicit_kernel [CompositeImplicitAutograd]");

  Tracer tracer;
  take_marks();
  unary("test_dispatch::traced_directly").call(cpu_tensor());
  unary("test_dispatch::cpu_only").call(cpu_tensor());
  CHECK(take_marks() == Marks{"tracer", "cpu", "cpu"});
  // The Tracer's fallback recorded cpu_only (and the zeros calls), never traced_directly.
  Marks ops;
  for (const auto& c : tracer.calls()) ops.push_back(c.op);
  CHECK(ops == Marks{"aten::zeros", "aten::empty.memory_format", "aten::fill_.Scalar", "aten::zeros",
                     "aten::empty.memory_format", "aten::fill_.Scalar", "test_dispatch::cpu_only"});
}

TEST_CASE("dispatch table: a missing kernel raises NotImplementedError listing the keys that have kernels") {
  CHECK(table("test_dispatch::cpu_only", DispatchKey::Meta) == "missing");
  try {
    unary("test_dispatch::cpu_only").call(meta_tensor());
    FAIL("expected NotImplementedError");
  } catch (const NotImplementedError& e) {
    std::string msg = e.what();
    CHECK(msg.find("test_dispatch::cpu_only: no kernel for Meta") != std::string::npos);
    CHECK(msg.find("call key set [Meta]") != std::string::npos);
    CHECK(msg.find("kernels exist for: CPU.") != std::string::npos);  // fallbacks are not listed
  }
  // A call with no tensor arguments and no BackendSelect kernel has an empty key set.
  auto op = Dispatcher::singleton().find_or_throw("test_dispatch::no_tensors").typed<int64_t(int64_t)>();
  CHECK_THROWS_WITH_AS(op.call(3), doctest::Contains("has no dispatch keys"), NotImplementedError);
  // The thrown error left nothing behind: the CPU route still works.
  CHECK(run("test_dispatch::cpu_only", cpu_tensor()) == Marks{"cpu"});
}

TEST_CASE("registration: the same key twice raises ValueError and keeps the first kernel") {
  Library lib(Library::Kind::Impl, "test_dispatch", RegKey::CPU, __FILE__, __LINE__);
  CHECK_THROWS_WITH_AS(lib.impl("cpu_only", ANATOMY_KERNEL(meta_kernel)),
                       doctest::Contains("a kernel for CPU is already registered ('cpu_kernel')"), ValueError);
  CHECK(run("test_dispatch::cpu_only", cpu_tensor()) == Marks{"cpu"});

  // Defining an operator twice, a def in an IMPL block, a fallback on an alias key or on a key that
  // already has one: each is a ValueError.
  Library def(Library::Kind::Def, "test_dispatch", std::nullopt, __FILE__, __LINE__);
  CHECK_THROWS_WITH_AS(def.def("cpu_only(Tensor self) -> Tensor"), doctest::Contains("defined twice"), ValueError);
  CHECK_THROWS_AS(lib.def("another(Tensor self) -> Tensor"), ValueError);
  CHECK_THROWS_AS(def.def("bad schema("), ValueError);
  Library alias(Library::Kind::Impl, "_", RegKey::CompositeImplicitAutograd, __FILE__, __LINE__);
  CHECK_THROWS_AS(alias.fallback_fallthrough(), ValueError);
  Library tracer(Library::Kind::Impl, "_", RegKey::Tracer, __FILE__, __LINE__);
  CHECK_THROWS_WITH_AS(tracer.fallback_fallthrough(), doctest::Contains("Tracer already has a fallback"), ValueError);
}

TEST_CASE("registration: a kernel whose C++ signature differs from the schema is refused, naming both") {
  // sig_checked(Tensor self, int n): a kernel taking a double for `n` is refused.
  Library lib(Library::Kind::Impl, "test_dispatch", RegKey::Meta, __FILE__, __LINE__);
  CHECK_THROWS_WITH_AS(
      lib.impl("sig_checked", ANATOMY_KERNEL(sig_checked_wrong)),
      doctest::Contains("test_dispatch::sig_checked: the Meta kernel 'sig_checked_wrong' has signature "
                        "(Tensor, float) -> (Tensor) but the schema 'sig_checked(Tensor self, int n) "
                        "-> Tensor' needs (Tensor, int) -> (Tensor)"),
      Error);
  // The slot stayed empty.
  CHECK(table("test_dispatch::sig_checked", DispatchKey::Meta) == "missing");
}

// Dispatcher::impl adds the registration site to errors from OperatorEntry::set_kernel; it must
// keep a TypeError a TypeError.
TEST_CASE("registration: a signature mismatch is a TypeError") {
  Library lib(Library::Kind::Impl, "test_dispatch", RegKey::CUDA, __FILE__, __LINE__);
  CHECK_THROWS_AS(lib.impl("sig_checked", ANATOMY_KERNEL(sig_checked_wrong)), TypeError);
}

TEST_CASE("registration: a schema defined after a mismatching kernel raises TypeError") {
  // Kernels may come before their schema; the check then happens at def.
  Library impl(Library::Kind::Impl, "test_dispatch_late", RegKey::CPU, __FILE__, __LINE__);
  impl.impl("late1", ANATOMY_KERNEL(sig_checked_wrong));  // (Tensor, float) -> Tensor
  Library def(Library::Kind::Def, "test_dispatch_late", std::nullopt, __FILE__, __LINE__);
  CHECK_THROWS_WITH_AS(def.def("late1(Tensor self, int n) -> Tensor"), doctest::Contains("(Tensor, float)"), TypeError);
}

// OperatorEntry::set_schema checks the already-registered kernels against the new schema and
// must not keep a schema it refused.
TEST_CASE("registration: a schema refused at def is not kept") {
  Library impl(Library::Kind::Impl, "test_dispatch_late", RegKey::CPU, __FILE__, __LINE__);
  impl.impl("late2", ANATOMY_KERNEL(sig_checked_wrong));
  Library def(Library::Kind::Def, "test_dispatch_late", std::nullopt, __FILE__, __LINE__);
  CHECK_THROWS_AS(def.def("late2(Tensor self, int n) -> Tensor"), TypeError);
  // The operator must not be left defined with a kernel that does not match it: a typed call
  // through the schema's signature would call sig_checked_wrong with an int64_t for a double.
  CHECK_FALSE(Dispatcher::singleton().find("test_dispatch_late::late2").has_value());
}

TEST_CASE("typed(): a signature that differs from the schema raises TypeError naming both") {
  OperatorHandle view = Dispatcher::singleton().find_or_throw("aten::view");
  CHECK_THROWS_WITH_AS(
      view.typed<Tensor(const Tensor&, int64_t)>(),
      doctest::Contains("aten::view: typed() asked for (Tensor, int) -> (Tensor) but the schema "
                        "'view(Tensor(a) self, int[] size) -> Tensor(a)' is (Tensor, int[]) -> (Tensor)"),
      TypeError);
  CHECK_THROWS_AS(view.typed<Scalar(const Tensor&, IntArrayRef)>(), TypeError);  // the return type counts
  CHECK_NOTHROW(view.typed<Tensor(const Tensor&, IntArrayRef)>());
  // call_boxed checks the stack has the arguments.
  Stack too_short{IValue(cpu_tensor())};
  CHECK_THROWS_WITH_AS(view.call_boxed(too_short), doctest::Contains("needs 2 arguments"), ValueError);
}

// Schema types alone cannot tell `double` from `const double&` (both "float"), but a typed call
// casts the kernel pointer to the handle's exact C++ type: calling a `double` kernel as
// `const double&` would read garbage. typed() must refuse a Sig whose exact C++ type differs
// from the registered typed kernels'.
TEST_CASE("typed(): a handle whose C++ types differ from the kernel's in passing convention is refused or works") {
  OperatorHandle op = Dispatcher::singleton().find_or_throw("test_dispatch::difference");
  CHECK(op.typed<double(const Tensor&, double, double)>().call(cpu_tensor(), 5.0, 3.0) == 2.0);
  bool refused = false;
  double got = 0;
  try {
    auto by_ref = op.typed<double(const Tensor&, const double&, const double&)>();
    got = by_ref.call(cpu_tensor(), 5.0, 3.0);
  } catch (const TypeError&) {
    refused = true;
  }
  CHECK_MESSAGE((refused || got == 2.0), "the kernel computed " << got << " from 5.0 - 3.0");
}

TEST_CASE("find_or_throw names close matches, and list_ops lists the built-ins") {
  try {
    Dispatcher::singleton().find_or_throw("aten::empty.nope");
    FAIL("expected ValueError");
  } catch (const ValueError& e) {
    std::string msg = e.what();
    CHECK(msg.find("no operator named 'aten::empty.nope'; did you mean: aten::empty.memory_format, ") == 0);
    CHECK(msg.find("aten::empty_strided") != std::string::npos);
    CHECK(msg.find("aten::empty_like") != std::string::npos);
  }
  CHECK_THROWS_AS(dump("nope::nothing"), ValueError);
  CHECK_FALSE(Dispatcher::singleton().find("aten::empty").has_value());  // the overload name is part of it
  CHECK(Dispatcher::singleton().find("aten::empty.memory_format").has_value());

  std::vector<std::string> ops = list_ops();
  CHECK(std::is_sorted(ops.begin(), ops.end()));
  for (const char* name : {"aten::empty.memory_format", "aten::empty_strided", "aten::view", "aten::copy_",
                           "aten::fill_.Scalar", "aten::_to_copy", "aten::zeros", "test_dispatch::cpu_only"}) {
    CHECK_MESSAGE(std::find(ops.begin(), ops.end(), name) != ops.end(), name);
  }
  // An operator with kernels but no schema is not listed (nor found).
  Library lib(Library::Kind::Impl, "test_dispatch_undefined", RegKey::CPU, __FILE__, __LINE__);
  lib.impl("orphan", ANATOMY_KERNEL(cpu_kernel));
  ops = list_ops();
  CHECK(std::find(ops.begin(), ops.end(), "test_dispatch_undefined::orphan") == ops.end());
  CHECK_FALSE(Dispatcher::singleton().find("test_dispatch_undefined::orphan").has_value());
}

// ---------------------------------------------------------------------------------------------
// Fallthrough
// ---------------------------------------------------------------------------------------------

TEST_CASE("fallthrough: a key made a fallthrough is skipped and its bit leaves the mask") {
  // fallthrough_op: Autograd alias kernel, but AutogradCPU made a fallthrough; CPU and Meta kernels.
  const char* op = "test_dispatch::fallthrough_op";
  CHECK(table(op, DispatchKey::AutogradCPU) == "fallthrough");
  CHECK(table(op, DispatchKey::AutogradMeta) == "autograd_kernel [Autograd]");
  DispatchKeySet nf = Dispatcher::singleton().find_or_throw(op).entry().non_fallthrough();
  CHECK_FALSE(nf.has(DispatchKey::AutogradCPU));
  CHECK(nf.has(DispatchKey::AutogradMeta));
  CHECK(nf.has(DispatchKey::CPU));
  CHECK(nf.has(DispatchKey::Tracer));
  CHECK_FALSE(nf.has(DispatchKey::BackendSelect));  // the BackendSelect fallback is a fallthrough
  CHECK_FALSE(nf.has(DispatchKey::Autocast));

  CHECK(run(op, cpu_tensor()) == Marks{"cpu"});                     // AutogradCPU skipped
  CHECK(run(op, meta_tensor()) == Marks{"autograd@AutogradMeta"});  // AutogradMeta not
  // The kernel below sees the masked key set: no AutogradCPU in it.
  TraceCapture capture;
  unary(op).call(cpu_tensor());
  CHECK(capture.lines().back() == "[dispatch] test_dispatch::fallthrough_op [CPU] -> CPU (cpu_kernel)");
}

TEST_CASE("fallthrough: Autocast and BackendSelect by default; autograd for built-ins declared not differentiable") {
  const DispatchKey autograd_keys[] = {DispatchKey::AutogradCPU, DispatchKey::AutogradCUDA, DispatchKey::AutogradMeta,
                                       DispatchKey::AutogradPrivateUse1};
  for (const char* name : {"aten::_local_scalar_dense", "test_dispatch::cpu_only"}) {
    DispatchKeySet nf = Dispatcher::singleton().find_or_throw(name).entry().non_fallthrough();
    for (DispatchKey k : {DispatchKey::Autocast, DispatchKey::BackendSelect}) {
      CHECK_MESSAGE(!nf.has(k), name << " " << to_string(k));
    }
    CHECK(nf.has(DispatchKey::CPU));
    CHECK(nf.has(DispatchKey::Tracer));
  }
  // A built-in with no derivative on purpose declares a fallthrough at its Autograd key
  // (autograd/not_differentiable.cpp); a kernel-only operator keeps the autograd fallback, which
  // makes sure a result that needs a gradient does not silently lose its graph
  // (Note [Autograd fallback]).
  DispatchKeySet builtin = Dispatcher::singleton().find_or_throw("aten::_local_scalar_dense").entry().non_fallthrough();
  DispatchKeySet kernel_only =
      Dispatcher::singleton().find_or_throw("test_dispatch::cpu_only").entry().non_fallthrough();
  for (DispatchKey k : autograd_keys) {
    CHECK(!builtin.has(k));
    CHECK(kernel_only.has(k));
  }
  CHECK(table("aten::_local_scalar_dense", DispatchKey::AutogradCPU) == "fallthrough [Autograd]");
  CHECK(table("test_dispatch::cpu_only", DispatchKey::AutogradCPU) == "autograd_fallback [fallback]");
  // A factory keeps BackendSelect: it has a kernel there.
  CHECK(Dispatcher::singleton().find_or_throw("aten::zeros").entry().non_fallthrough().has(DispatchKey::BackendSelect));
}

// ---------------------------------------------------------------------------------------------
// Thread-local include/exclude guards
// ---------------------------------------------------------------------------------------------

TEST_CASE("guards: IncludeDispatchKeyGuard routes through the key only in its scope and on its thread") {
  const char* op = "test_dispatch::traced_directly";
  REQUIRE(tls_local_key_set.included.empty());
  CHECK(run(op, cpu_tensor()) == Marks{"cpu"});
  {
    IncludeDispatchKeyGuard guard(DispatchKey::Tracer);
    CHECK(tls_local_key_set.included == DispatchKeySet(DispatchKey::Tracer));
    CHECK(run(op, cpu_tensor()) == Marks{"tracer", "cpu"});

    // Another thread does not see this thread's included keys.
    Marks other;
    DispatchKeySet other_included = DispatchKeySet(DispatchKey::CPU);
    Tensor t = cpu_tensor();
    std::thread th([&] {
      other_included = tls_local_key_set.included;
      other = run(op, t);
    });
    th.join();
    CHECK(other_included.empty());
    CHECK(other == Marks{"cpu"});
  }
  CHECK(tls_local_key_set.included.empty());
  CHECK(run(op, cpu_tensor()) == Marks{"cpu"});
}

TEST_CASE("guards: ExcludeDispatchKeyGuard skips keys in its scope and on its thread") {
  const char* op = "test_dispatch::autograd_alias";
  CHECK(run(op, cpu_tensor()) == Marks{"autograd@AutogradCPU"});
  {
    ExcludeDispatchKeyGuard guard(kAutogradKeys);
    CHECK(run(op, cpu_tensor()) == Marks{"cpu"});
    CHECK(run(op, meta_tensor()) == Marks{"meta"});
    Marks other;
    Tensor t = cpu_tensor();
    std::thread th([&] { other = run(op, t); });
    th.join();
    CHECK(other == Marks{"autograd@AutogradCPU"});
  }
  CHECK(run(op, cpu_tensor()) == Marks{"autograd@AutogradCPU"});
}

TEST_CASE("guards: nest (exclusion wins over inclusion) and restore on exceptions") {
  const char* op = "test_dispatch::traced_directly";
  {
    IncludeDispatchKeyGuard outer(DispatchKey::Tracer);
    {
      IncludeDispatchKeyGuard again(DispatchKey::Tracer);  // including twice is harmless...
      ExcludeDispatchKeyGuard exclude(DispatchKey::Tracer);
      CHECK(run(op, cpu_tensor()) == Marks{"cpu"});  // ...and an excluded key is off whatever includes it
      {
        IncludeDispatchKeyGuard inner(DispatchKey::Autocast);
        CHECK(tls_local_key_set.included == DispatchKeySet({DispatchKey::Tracer, DispatchKey::Autocast}));
      }
      CHECK(tls_local_key_set.included == DispatchKeySet(DispatchKey::Tracer));
    }
    // ...and the inner include did not remove the outer one when it went.
    CHECK(tls_local_key_set.excluded.empty());
    CHECK(run(op, cpu_tensor()) == Marks{"tracer", "cpu"});
  }
  CHECK(tls_local_key_set.included.empty());

  // An exception unwinding through guards restores both sets, including one thrown by a kernel.
  try {
    IncludeDispatchKeyGuard include(DispatchKey::Tracer);
    ExcludeDispatchKeyGuard exclude(kAutogradKeys);
    unary("test_dispatch::cpu_only").call(meta_tensor());  // no Meta kernel: throws
    FAIL("expected NotImplementedError");
  } catch (const NotImplementedError&) {
  }
  CHECK(tls_local_key_set.included.empty());
  CHECK(tls_local_key_set.excluded.empty());
  CHECK(run(op, cpu_tensor()) == Marks{"cpu"});
  CHECK(run("test_dispatch::autograd_alias", cpu_tensor()) == Marks{"autograd@AutogradCPU"});
}

// ---------------------------------------------------------------------------------------------
// Redispatch
// ---------------------------------------------------------------------------------------------

TEST_CASE("redispatch: a kernel taking the key set passes the call to the keys below its own") {
  // The AutogradCPU kernel sees the whole (masked) set; the CPU kernel it redispatches to sees
  // only the keys below AutogradCPU.
  CHECK(run("test_dispatch::redispatch", cpu_tensor()) == Marks{"AutogradCPU saw [AutogradCPU, CPU]", "CPU saw [CPU]"});

  TraceCapture capture;
  unary("test_dispatch::redispatch").call(cpu_tensor());
  take_marks();
  Marks lines(capture.lines().end() - 2, capture.lines().end());
  CHECK(lines == Marks{"[dispatch] test_dispatch::redispatch [AutogradCPU, CPU] -> AutogradCPU (redispatch_autograd)",
                       "[dispatch]   redispatch test_dispatch::redispatch [CPU] -> CPU (redispatch_cpu)"});

  // The same kernels reached through the boxed path (the generated wrappers pass the key set on).
  Stack stack{IValue(cpu_tensor())};
  Dispatcher::singleton().find_or_throw("test_dispatch::redispatch").call_boxed(stack);
  CHECK(take_marks() == Marks{"AutogradCPU saw [AutogradCPU, CPU]", "CPU saw [CPU]"});
  CHECK(stack.size() == 1);
}

TEST_CASE("redispatch: redispatch and redispatch_boxed apply the operator's fallthrough mask") {
  // A caller may pass keys that are fallthrough for this operator (AutogradCPU here): they are
  // skipped, as in a fresh call.
  OperatorHandle op = Dispatcher::singleton().find_or_throw("test_dispatch::fallthrough_op");
  DispatchKeySet ks{DispatchKey::AutogradCPU, DispatchKey::CPU};
  Tensor x = cpu_tensor();
  take_marks();
  op.typed<Tensor(const Tensor&)>().redispatch(ks, x);
  CHECK(take_marks() == Marks{"cpu"});
  Stack stack{IValue(x)};
  op.redispatch_boxed(ks, stack);
  CHECK(take_marks() == Marks{"cpu"});
  REQUIRE(stack.size() == 1);
  CHECK(stack[0].get<Tensor>().is_same(x));
}

// ---------------------------------------------------------------------------------------------
// Boxed and unboxed
// ---------------------------------------------------------------------------------------------

TEST_CASE("boxed: a boxed kernel serves a typed call (arguments boxed, returns unboxed), every value type") {
  auto op = Dispatcher::singleton().find_or_throw("test_dispatch::boxed_all").typed<AllTypesSig>();
  Tensor a = zeros({2}), b = zeros({3}), t0 = zeros({4}), t1 = zeros({5});
  std::vector<Tensor> ts{t0, t1};
  std::vector<int64_t> ints{1, 2, 3};
  auto [r0, r1] = op.call(a, b, std::nullopt, ts, Scalar(2.5), 7, 0.5, true, ints, DType::Float16, kCPU, "hello",
                          MemoryFormat::ChannelsLast);
  CHECK(g_boxed_seen ==
        "Tensor=Tensor[2] fp32 cpu; Tensor=Tensor[3] fp32 cpu; None=None; Tensor[]=Tensor[2 tensors]; "
        "Scalar=2.5; int=7; float=0.5; bool=True; int[]=[1, 2, 3]; ScalarType=fp16; Device=cpu; str='hello'; "
        "MemoryFormat=channels_last @ [CPU]");
  CHECK(r0.is_same(a));
  CHECK(r1.is_same(t1));
  CHECK(table("test_dispatch::boxed_all", DispatchKey::CPU) == "boxed_all_cpu");

  // A list return.
  auto list = Dispatcher::singleton()
                  .find_or_throw("test_dispatch::boxed_list")
                  .typed<std::vector<Tensor>(const Tensor&, int64_t)>();
  std::vector<Tensor> out = list.call(a, 3);
  REQUIRE(out.size() == 3);
  for (const Tensor& t : out) CHECK(t.is_same(a));
}

TEST_CASE("boxed: call_boxed reaches a typed kernel through its generated wrapper, every value type") {
  OperatorHandle op = Dispatcher::singleton().find_or_throw("test_dispatch::typed_all");
  Tensor a = zeros({2}), b = zeros({3}), t0 = zeros({4}), t1 = zeros({5});
  Stack stack{IValue(a),
              IValue(b),
              IValue(),
              IValue(std::vector<Tensor>{t0, t1}),
              IValue(Scalar(int64_t{-4})),
              IValue(int64_t{7}),
              IValue(0.25),
              IValue(false),
              IValue(std::vector<int64_t>{4, 5}),
              IValue(DType::BFloat16),
              IValue(Device(kMeta)),
              IValue(std::string("hi")),
              IValue(MemoryFormat::Preserve)};
  take_marks();
  op.call_boxed(stack);
  CHECK(take_marks() == Marks{"a=2 b=3 c=none ts=2 s=-4 i=7 f=0.25 flag=false ints=[4,5] dtype=bf16 device=meta "
                              "name=hi format=preserve_format"});
  // The arguments were replaced by the two returns.
  REQUIRE(stack.size() == 2);
  CHECK(stack[0].get<Tensor>().is_same(b));
  CHECK(stack[1].get<Tensor>().is_same(t1));
  // A value of the wrong type on the stack is an internal error, not a crash.
  Stack wrong{IValue(a), IValue(int64_t{1})};
  CHECK_THROWS_AS(Dispatcher::singleton().find_or_throw("aten::view").call_boxed(wrong), InternalError);
}

TEST_CASE("boxed: the Tracer records every operator with its arguments and nesting depth") {
  auto op = Dispatcher::singleton().find_or_throw("test_dispatch::typed_all").typed<AllTypesSig>();
  Tensor a = zeros({2}), c = zeros({1}), t0 = zeros({4});
  std::vector<Tensor> ts{t0};
  Tracer tracer;
  take_marks();
  // A typed call whose Tracer kernel is boxed: every argument crosses the stack and back.
  auto [r0, r1] =
      op.call(a, std::nullopt, c, ts, Scalar(true), -1, 1.5, true, {}, DType::Int8, kCPU, "", MemoryFormat::Contiguous);
  CHECK(take_marks() == Marks{"a=2 b=none c=1 ts=1 s=True i=-1 f=1.5 flag=true ints=[] dtype=int8 device=cpu name= "
                              "format=contiguous_format"});
  CHECK(r0.is_same(a));
  CHECK(r1.is_same(t0));
  // Nested calls: zeros calls empty and fill_; item calls _local_scalar_dense (a Scalar return);
  // split returns a list.
  Tensor z = zeros({2, 3});
  Scalar v = z[1][2].item();
  std::vector<Tensor> parts = arange(6).split(4);

  CHECK(v.to<double>() == 0.0);
  CHECK(parts.size() == 2);
  CHECK(parts[1].numel() == 2);
  const auto& calls = tracer.calls();
  Marks got;
  for (const auto& c2 : calls)
    got.push_back(fmt::format("{}{}({})", std::string(2 * c2.depth, ' '), c2.op, fmt::join(c2.args, ", ")));
  Marks want{
      "test_dispatch::typed_all(Tensor[2] fp32 cpu, None, Tensor[1] fp32 cpu, Tensor[1 tensors], True, -1, 1.5, True, "
      "[], int8, cpu, '', contiguous_format)",
      "aten::zeros([2, 3], None, None)",
      "  aten::empty.memory_format([2, 3], fp32, cpu, None)",
      "  aten::fill_.Scalar(Tensor[2, 3] fp32 cpu, 0)",
      "aten::select.int(Tensor[2, 3] fp32 cpu, 0, 1)",
      "aten::select.int(Tensor[3] fp32 cpu, 0, 2)",
      "aten::_local_scalar_dense(Tensor[] fp32 cpu)",
      "aten::arange.start_step(0, 6, 1, None, None)",
      "aten::split.Tensor(Tensor[6] int64 cpu, 4, 0)",
      "  aten::split_with_sizes(Tensor[6] int64 cpu, [4, 2], 0)",
  };
  CHECK(got == want);
  for (const auto& c2 : calls) CHECK(c2.host_ns >= 0);
  // to_string: one line per call, indented by depth, with the host time.
  std::string text = tracer.to_string();
  CHECK(text.find("\n  aten::empty.memory_format([2, 3], fp32, cpu, None) ") != std::string::npos);
}

TEST_CASE("boxed: int[]? keeps None apart from an empty list on every path") {
  const OperatorHandle handle = Dispatcher::singleton().find_or_throw("test_dispatch::optional_list");
  CHECK(handle.schema().arguments[1].type == ArgType::OptionalIntList);
  auto op = handle.typed<Tensor(const Tensor&, OptionalIntArrayRef)>();
  const Tensor x = zeros({2});
  take_marks();
  op.call(x, std::nullopt);
  op.call(x, {});
  op.call(x, {1, -2});
  CHECK(take_marks() == Marks{"dims=None", "dims=[]", "dims=[1,-2]"});

  // call_boxed into the typed kernel.
  Stack none{IValue(x), IValue()};
  handle.call_boxed(none);
  Stack empty{IValue(x), IValue(std::vector<int64_t>{})};
  handle.call_boxed(empty);
  CHECK(take_marks() == Marks{"dims=None", "dims=[]"});
  REQUIRE(empty.size() == 1);
  CHECK(empty[0].get<Tensor>().is_same(x));

  // A typed call through the Tracer's boxed kernel and back.
  Tracer tracer;
  op.call(x, std::nullopt);
  op.call(x, {});
  CHECK(take_marks() == Marks{"dims=None", "dims=[]"});
  REQUIRE(tracer.calls().size() == 2);
  CHECK(tracer.calls()[0].args.at(1) == "None");
  CHECK(tracer.calls()[1].args.at(1) == "[]");
}

TEST_CASE("boxed: an operator returning nothing, called directly and through the Tracer's boxed path") {
  auto op = Dispatcher::singleton().find_or_throw("test_dispatch::noop").typed<void(const Tensor&)>();
  Tensor x = cpu_tensor();
  take_marks();
  op.call(x);
  CHECK(take_marks() == Marks{"noop"});
  Tracer tracer;
  op.call(x);
  CHECK(take_marks() == Marks{"noop"});
  REQUIRE(tracer.calls().size() == 1);
  CHECK(Marks(tracer.calls()[0].args) == Marks{"Tensor[2] fp32 cpu"});
  Stack stack{IValue(x)};
  Dispatcher::singleton().find_or_throw("test_dispatch::noop").call_boxed(stack);
  CHECK(stack.empty());  // the argument was consumed and nothing returned
  CHECK(take_marks() == Marks{"noop"});
}

TEST_CASE("boxed: Tracers nest per thread, and a throwing call keeps the depth right") {
  Tracer outer;
  zeros({1});
  {
    Tracer inner;  // records into the innermost Tracer
    CHECK_THROWS_AS(unary("test_dispatch::cpu_only").call(meta_tensor()), NotImplementedError);
    zeros({1});
    // empty (for meta_tensor), cpu_only (which threw), then zeros, empty, fill_.
    REQUIRE(inner.calls().size() == 5);
    CHECK(inner.calls()[1].op == "test_dispatch::cpu_only");
    CHECK(inner.calls()[2].op == "aten::zeros");
    CHECK(inner.calls()[2].depth == 0);  // not 1: the failed call's depth was undone
  }
  zeros({1});
  CHECK(outer.calls().size() == 6);
  CHECK(outer.calls()[3].depth == 0);

  // Another thread is not traced.
  std::thread th([] { zeros({1}); });
  th.join();
  CHECK(outer.calls().size() == 6);
}

// ---------------------------------------------------------------------------------------------
// The docs' worked example is the compiled test file, verbatim
// ---------------------------------------------------------------------------------------------

TEST_CASE("docs/dispatcher.md shows tests/docs/test_dispatcher_example.cpp verbatim") {
#ifdef ANATOMY_SOURCE_DIR
  std::string root = ANATOMY_SOURCE_DIR;  // set by tests/CMakeLists.txt
#else
  std::string here = __FILE__;  // .../tests/dispatch/test_dispatcher.cpp
  std::string root = here.substr(0, here.rfind("/tests/dispatch/"));
#endif
  std::string example = read_file(root + "/tests/docs/test_dispatcher_example.cpp");
  std::string doc = read_file(root + "/docs/dispatcher.md");
  const std::string marker = "<!-- example: tests/docs/test_dispatcher_example.cpp -->\n```cpp\n";
  size_t start = doc.find(marker);
  REQUIRE_MESSAGE(start != std::string::npos, "docs/dispatcher.md lacks the example marker");
  start += marker.size();
  size_t end = doc.find("```\n", start);
  REQUIRE(end != std::string::npos);
  CHECK_MESSAGE(doc.substr(start, end - start) == example,
                "the code block in docs/dispatcher.md differs from tests/docs/test_dispatcher_example.cpp");
}

TEST_CASE("docs/dispatcher.md's custom backend is an excerpt of tests/dispatch/test_custom_backend.cpp, verbatim") {
#ifdef ANATOMY_SOURCE_DIR
  std::string root = ANATOMY_SOURCE_DIR;
#else
  std::string here = __FILE__;
  std::string root = here.substr(0, here.rfind("/tests/dispatch/"));
#endif
  std::string source = read_file(root + "/tests/dispatch/test_custom_backend.cpp");
  std::string doc = read_file(root + "/docs/dispatcher.md");
  const std::string marker = "<!-- excerpt: tests/dispatch/test_custom_backend.cpp -->\n```cpp\n";
  size_t start = doc.find(marker);
  REQUIRE_MESSAGE(start != std::string::npos, "docs/dispatcher.md lacks the custom backend's marker");
  start += marker.size();
  size_t end = doc.find("```\n", start);
  REQUIRE(end != std::string::npos);
  const std::string block = doc.substr(start, end - start);
  CHECK(block.size() > 1000);  // the allocator, the kernels and their registration
  CHECK_MESSAGE(
      source.find(block) != std::string::npos,
      "the custom backend's code in docs/dispatcher.md is not an excerpt of tests/dispatch/test_custom_backend.cpp");
}
