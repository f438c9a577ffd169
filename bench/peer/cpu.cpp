// CPU pairs: host overhead of a 1-element add end to end, bandwidth of add, mul and sum over 64 MiB
// of fp32 next to a threaded memcpy of the same size, and a 1024-cube fp32 matrix product.
// Bandwidth counts bytes read plus written per call (memcpy 2 x 64 MiB, add and mul 3 x, sum 1 x),
// so scripts/peer-report.py divides it by memcpy's to get "percent of memcpy".
#include <cstring>

#include "peer.h"

namespace peer {
namespace {

// The two 64 MiB inputs every large CPU case reads, made once per process: anatomy's, and a
// torch copy of the same values.
struct LargeInputs {
  anatomy::Tensor a = anatomy::randn({k64MiBFloats});
  anatomy::Tensor b = anatomy::randn({k64MiBFloats});
  at::Tensor ta = to_torch(a);
  at::Tensor tb = to_torch(b);
};
const LargeInputs& large() {
  static const LargeInputs inputs;
  return inputs;
}

// End to end: dispatch, type promotion and broadcasting, output allocation, one element of work.
// Neither input requires grad: the plain default a C++ user gets from either library.
struct AddTinyCpu : CaseDefaults {
  static constexpr const char* kName = "add_tiny_cpu";
  anatomy::Tensor a = anatomy::randn({1}), b = anatomy::randn({1});
  at::Tensor ta = to_torch(a), tb = to_torch(b);
  anatomy::Tensor run_anatomy() { return a + b; }
  at::Tensor run_torch() { return ta + tb; }
};

struct LargeCase : CaseDefaults {
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMillisecond;
  static constexpr int64_t kBytes = 3 * k64MiBFloats * 4;
  const LargeInputs& in = large();
};

// Into an output allocated once: the kernels' streaming rate.
struct AddOutCpu : LargeCase {
  static constexpr const char* kName = "add_out_64mib_cpu";
  anatomy::Tensor out = anatomy::empty({k64MiBFloats});
  at::Tensor tout = at::empty({k64MiBFloats});
  anatomy::Tensor run_anatomy() { return anatomy::add_out(out, in.a, in.b); }
  at::Tensor run_torch() { return at::add_out(tout, in.ta, in.tb); }
};

struct MulOutCpu : LargeCase {
  static constexpr const char* kName = "mul_out_64mib_cpu";
  anatomy::Tensor out = anatomy::empty({k64MiBFloats});
  at::Tensor tout = at::empty({k64MiBFloats});
  anatomy::Tensor run_anatomy() { return anatomy::mul_out(out, in.a, in.b); }
  at::Tensor run_torch() { return at::mul_out(tout, in.ta, in.tb); }
};

// A fresh 64 MiB output per call: what the allocator and first-touch page faults add.
struct AddCpu : LargeCase {
  static constexpr const char* kName = "add_64mib_cpu";
  anatomy::Tensor run_anatomy() { return in.a + in.b; }
  at::Tensor run_torch() { return in.ta + in.tb; }
};

// The two libraries sum in different orders, so the results differ by rounding. For 16M standard
// normal values (a sum of about +-4096) even one serial fp32 accumulator stays within about 1 of
// the exact sum, far below this atol; a lost or doubled block of 32K elements (one parallel
// grain) moves the sum by about 180.
struct SumCpu : LargeCase {
  static constexpr const char* kName = "sum_64mib_cpu";
  static constexpr int64_t kBytes = k64MiBFloats * 4;
  static constexpr Tolerance kTol{16.0, 1e-5};
  anatomy::Tensor run_anatomy() { return anatomy::sum(in.a); }
  at::Tensor run_torch() { return at::sum(in.ta); }
};

// Each element is a 1024-term dot product of standard normals (magnitude about 32); the BLAS
// libraries behind the two sides block the k loop differently.
struct MmCpu : CaseDefaults {
  static constexpr const char* kName = "mm_1024_cpu";
  static constexpr benchmark::TimeUnit kUnit = benchmark::kMillisecond;
  static constexpr int64_t kN = 1024;
  static constexpr double kFlops = 2.0 * kN * kN * kN;
  static constexpr Tolerance kTol{1e-3, 1e-4};
  anatomy::Tensor a = anatomy::randn({kN, kN}), b = anatomy::randn({kN, kN});
  at::Tensor ta = to_torch(a), tb = to_torch(b);
  anatomy::Tensor run_anatomy() { return anatomy::mm(a, b); }
  at::Tensor run_torch() { return at::mm(ta, tb); }
};

// Transcendental functions over 64 MiB into a reused output: anatomy's vectorized fp32 functions
// (backends/cpu/vec_math.h) against torch's. Bytes are read plus written (2 x 64 MiB); the two
// sides' functions round differently, within a few ulp.
struct UnaryOutCpu : LargeCase {
  static constexpr int64_t kBytes = 2 * k64MiBFloats * 4;
  static constexpr Tolerance kTol{1e-6, 1e-5};
  anatomy::Tensor out = anatomy::empty({k64MiBFloats});
  at::Tensor tout = at::empty({k64MiBFloats});
};
struct ExpOutCpu : UnaryOutCpu {
  static constexpr const char* kName = "exp_out_64mib_cpu";
  anatomy::Tensor run_anatomy() { return anatomy::exp_out(out, in.a); }
  at::Tensor run_torch() { return at::exp_out(tout, in.ta); }
};
struct SigmoidOutCpu : UnaryOutCpu {
  static constexpr const char* kName = "sigmoid_out_64mib_cpu";
  anatomy::Tensor run_anatomy() { return anatomy::sigmoid_out(out, in.a); }
  at::Tensor run_torch() { return at::sigmoid_out(tout, in.ta); }
};
struct GeluOutCpu : UnaryOutCpu {
  static constexpr const char* kName = "gelu_out_64mib_cpu";
  anatomy::Tensor run_anatomy() { return anatomy::gelu_out(out, in.a); }
  at::Tensor run_torch() { return at::gelu_out(tout, in.ta); }
};
struct TanhOutCpu : UnaryOutCpu {
  static constexpr const char* kName = "tanh_out_64mib_cpu";
  anatomy::Tensor run_anatomy() { return anatomy::tanh_out(out, in.a); }
  at::Tensor run_torch() { return at::tanh_out(tout, in.ta); }
};

// The bandwidth ceiling in the same run: one plain std::memcpy per thread over equal contiguous
// parts. Both sides run this same code, each on its own thread pool with its own thread count,
// so each side's bandwidth rows divide by a memcpy that had the same threads available.
void copy_part(void* dst, const void* src, size_t bytes, int64_t parts, int64_t part) {
  const size_t chunk = (bytes / static_cast<size_t>(parts) + 63) & ~size_t{63};  // whole cache lines
  const size_t begin = std::min(bytes, static_cast<size_t>(part) * chunk);
  const size_t end = std::min(bytes, begin + chunk);
  std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin);
}

struct MemcpyCpu : LargeCase {
  static constexpr const char* kName = "memcpy_64mib_cpu";
  static constexpr int64_t kBytes = 2 * k64MiBFloats * 4;
  anatomy::Tensor out = anatomy::empty({k64MiBFloats});
  at::Tensor tout = at::empty({k64MiBFloats});
  anatomy::Tensor run_anatomy() {
    const int64_t parts = anatomy::get_num_threads();
    anatomy::parallel_for(0, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) copy_part(out.data_ptr(), in.a.data_ptr(), out.nbytes(), parts, p);
    });
    return out;
  }
  at::Tensor run_torch() {
    const int64_t parts = at::get_num_threads();
    at::parallel_for(0, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) copy_part(tout.data_ptr(), in.ta.data_ptr(), tout.nbytes(), parts, p);
    });
    return tout;
  }
};

const int registered =
    (register_pair<AddTinyCpu>(), register_pair<MemcpyCpu>(), register_pair<AddOutCpu>(), register_pair<MulOutCpu>(),
     register_pair<AddCpu>(), register_pair<SumCpu>(), register_pair<MmCpu>(), register_pair<ExpOutCpu>(),
     register_pair<SigmoidOutCpu>(), register_pair<GeluOutCpu>(), register_pair<TanhOutCpu>(), 0);

}  // namespace
}  // namespace peer
