// The CPU's fp32 matrix products on each library, over the shapes the op table and the training
// examples use: square 64-4096, tall-skinny and wide, a small inner dimension, and batches of
// small matrices. Two kinds of row:
//
//   product/<shape>/<library>  anatomy::matmul with set_preferred_cpu_blas_library(library):
//                              the library as the engine runs it, one call per pool thread on a
//                              tile (Note [One thread pool for products], blas_cpu.cpp);
//                              "default" is the engine's own choice per tile.
//   direct/<shape>/<library>   the library called directly on the same buffers with its own
//                              threads, as many as the engine's pool has: OpenBLAS's
//                              cblas_sgemm, oneDNN's dnnl_sgemm (OpenMP threads) and, when
//                              libblis.so.4 can be loaded (Debian's libblis4-pthread, or the
//                              path in ANATOMY_BENCH_BLIS), BLIS's bli_sgemm.
//
// BLIS is loaded with dlopen(RTLD_LOCAL): it exports cblas_sgemm too, and linked beside OpenBLAS
// it could take over the engine's own calls. docs/perf.md "The CPU's sgemm: OpenBLAS, BLIS and
// oneDNN" holds the figures.
//
//   build/bench/anatomy_bench_gemm_libraries --benchmark_min_time=0.2s
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"

#if defined(ANATOMY_BENCH_WITH_ONEDNN)
#include <omp.h>

#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

using anatomy::CpuBlasLibrary;
using anatomy::Tensor;

struct Shape {
  const char* name;
  int64_t batch, n, k, m;  // [batch, n, k] @ [batch, k, m]
};

constexpr Shape kShapes[] = {
    {"square64", 1, 64, 64, 64},
    {"square128", 1, 128, 128, 128},
    {"square256", 1, 256, 256, 256},
    {"square512", 1, 512, 512, 512},
    {"square1024", 1, 1024, 1024, 1024},
    {"square2048", 1, 2048, 2048, 2048},
    {"square4096", 1, 4096, 4096, 4096},
    {"tall_8192x1024_1024x64", 1, 8192, 1024, 64},
    {"wide_64x4096_4096x1024", 1, 64, 4096, 1024},
    {"linear_2048x512_512x2048", 1, 2048, 512, 2048},
    {"k32_2048x32_32x2048", 1, 2048, 32, 2048},
    {"batched_512x16^3", 512, 16, 16, 16},
    {"batched_256x64^3", 256, 64, 64, 64},
    {"attention_64x128x64x128", 64, 128, 64, 128},
};

void set_flops(benchmark::State& state, const Shape& s) {
  const double flops = 2.0 * static_cast<double>(s.batch * s.n * s.k) * static_cast<double>(s.m);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

struct Operands {
  Tensor a, b, c;
  explicit Operands(const Shape& s)
      : a(anatomy::randn({s.batch, s.n, s.k})),
        b(anatomy::randn({s.batch, s.k, s.m})),
        c(anatomy::empty({s.batch, s.n, s.m})) {}
  const float* pa(int64_t i, const Shape& s) const { return a.data_ptr<float>() + i * s.n * s.k; }
  const float* pb(int64_t i, const Shape& s) const { return b.data_ptr<float>() + i * s.k * s.m; }
  float* pc(int64_t i, const Shape& s) const { return c.data_ptr<float>() + i * s.n * s.m; }
};

void product(benchmark::State& state, Shape s, CpuBlasLibrary library) {
  Operands o(s);
  anatomy::set_preferred_cpu_blas_library(library);
  const Tensor a = s.batch == 1 ? o.a.select(0, 0) : o.a, b = s.batch == 1 ? o.b.select(0, 0) : o.b;
  for (auto _ : state) {
    Tensor c = anatomy::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  anatomy::set_preferred_cpu_blas_library(CpuBlasLibrary::Default);
  set_flops(state, s);
}

void direct_openblas(benchmark::State& state, Shape s) {
  Operands o(s);
  openblas_set_num_threads(anatomy::get_num_threads());
  const int n = static_cast<int>(s.n), k = static_cast<int>(s.k), m = static_cast<int>(s.m);
  for (auto _ : state) {
    for (int64_t i = 0; i < s.batch; ++i) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, m, k, 1.0f, o.pa(i, s), k, o.pb(i, s), m, 0.0f,
                  o.pc(i, s), m);
    }
    benchmark::DoNotOptimize(o.c.data_ptr());
  }
  openblas_set_num_threads(1);  // back to what anatomy set
  set_flops(state, s);
}

#if defined(ANATOMY_BENCH_WITH_ONEDNN)
void direct_onednn(benchmark::State& state, Shape s) {
  Operands o(s);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(anatomy::get_num_threads());
  for (auto _ : state) {
    for (int64_t i = 0; i < s.batch; ++i) {
      dnnl_sgemm('N', 'N', s.n, s.m, s.k, 1.0f, o.pa(i, s), s.k, o.pb(i, s), s.m, 0.0f, o.pc(i, s), s.m);
    }
    benchmark::DoNotOptimize(o.c.data_ptr());
  }
  omp_set_num_threads(saved);
  set_flops(state, s);
}
#endif

// BLIS's typed API (blis.h): bli_sgemm(transa, transb, m, n, k, alpha, a, rsa, csa, b, rsb, csb,
// beta, c, rsc, csc) with 64-bit dims and strides; 0 is BLIS_NO_TRANSPOSE.
using BliSgemm = void (*)(int, int, int64_t, int64_t, int64_t, const float*, const float*, int64_t, int64_t,
                          const float*, int64_t, int64_t, const float*, float*, int64_t, int64_t);
using BliSetThreads = void (*)(int64_t);
struct Blis {
  BliSgemm sgemm = nullptr;
  BliSetThreads set_threads = nullptr;
};

Blis load_blis() {
  const char* path = std::getenv("ANATOMY_BENCH_BLIS");
  void* lib = dlopen(path != nullptr ? path : "libblis.so.4", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return {};
  Blis b;
  b.sgemm = reinterpret_cast<BliSgemm>(dlsym(lib, "bli_sgemm"));
  b.set_threads = reinterpret_cast<BliSetThreads>(dlsym(lib, "bli_thread_set_num_threads"));
  return b.sgemm != nullptr && b.set_threads != nullptr ? b : Blis{};
}

void direct_blis(benchmark::State& state, Shape s, Blis blis) {
  Operands o(s);
  blis.set_threads(anatomy::get_num_threads());
  const float one = 1.0f, zero = 0.0f;
  for (auto _ : state) {
    for (int64_t i = 0; i < s.batch; ++i) {
      blis.sgemm(0, 0, s.n, s.m, s.k, &one, o.pa(i, s), s.k, 1, o.pb(i, s), s.m, 1, &zero, o.pc(i, s), s.m, 1);
    }
    benchmark::DoNotOptimize(o.c.data_ptr());
  }
  set_flops(state, s);
}

void add(const std::string& name, std::function<void(benchmark::State&)> fn) {
  benchmark::RegisterBenchmark(name.c_str(), std::move(fn))->Unit(benchmark::kMicrosecond)->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  const Blis blis = load_blis();
  for (const Shape& s : kShapes) {
    const std::string shape = s.name;
    add("product/" + shape + "/default", [s](benchmark::State& st) { product(st, s, CpuBlasLibrary::Default); });
    add("product/" + shape + "/openblas", [s](benchmark::State& st) { product(st, s, CpuBlasLibrary::OpenBLAS); });
    if (anatomy::cpu_blas_library_available(CpuBlasLibrary::OneDNN)) {
      add("product/" + shape + "/onednn", [s](benchmark::State& st) { product(st, s, CpuBlasLibrary::OneDNN); });
    }
    add("direct/" + shape + "/openblas", [s](benchmark::State& st) { direct_openblas(st, s); });
#if defined(ANATOMY_BENCH_WITH_ONEDNN)
    add("direct/" + shape + "/onednn", [s](benchmark::State& st) { direct_onednn(st, s); });
#endif
    if (blis.sgemm != nullptr)
      add("direct/" + shape + "/blis", [s, blis](benchmark::State& st) { direct_blis(st, s, blis); });
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
