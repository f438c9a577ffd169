// Autograd from several threads at once over shared leaves (docs/autograd.md, "Threads"): each
// thread records its own graph through the same weight, runs grad() or backward() on it, and the
// results match a single-threaded run. scripts/test-tsan.sh runs this file under
// ThreadSanitizer (CI does).
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

constexpr int kThreads = 8;
constexpr int kIterations = 200;

// The largest absolute difference between two fp64 tensors of one shape.
double max_diff(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

TEST_CASE("autograd threads: grad() of graphs that share a leaf, from 8 threads, matches one thread") {
  manual_seed(7);
  const TensorOptions f64 = TensorOptions().dtype(DType::Float64);
  const Tensor w = randn({4, 3}, f64).requires_grad_();
  const Tensor x = randn({5, 4}, f64);
  const Tensor expected = autograd::grad({x.mm(w).pow(2).sum()}, {w})[0];

  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIterations; ++i) {
        try {
          const Tensor g = autograd::grad({x.mm(w).pow(2).sum()}, {w})[0];
          if (max_diff(g, expected) > 1e-12) ++mismatches;
        } catch (const std::exception&) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK(mismatches.load() == 0);
  CHECK(!w.grad().defined());  // grad() leaves .grad alone
}

TEST_CASE("autograd threads: backward() from 8 threads accumulates every thread's gradient into one .grad") {
  const TensorOptions f64 = TensorOptions().dtype(DType::Float64);
  const Tensor w = ones({3}, f64).requires_grad_();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIterations / 4; ++i) {
        try {
          (w * 2).sum().backward();  // adds 2 to each element of w.grad
        } catch (const std::exception&) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(failures.load() == 0);
  REQUIRE(w.grad().defined());
  const double want = 2.0 * kThreads * (kIterations / 4);
  CHECK(max_diff(w.grad(), full({3}, want, f64)) == 0);
}

TEST_CASE("autograd threads: graphs made and dropped while other threads record through the same leaf") {
  const TensorOptions f64 = TensorOptions().dtype(DType::Float64);
  const Tensor w = randn({3}, f64).requires_grad_();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        try {
          // Short-lived graphs: the leaf's AccumulateGrad dies and is made again many times,
          // while other threads take references to it.
          Tensor y = (w * static_cast<double>(t + 1)).exp();
          if (i % 3 == 0) {
            const Tensor g = autograd::grad({y.sum()}, {w})[0];
            if (g.numel() != 3) ++failures;
          }
        } catch (const std::exception&) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(failures.load() == 0);
}
