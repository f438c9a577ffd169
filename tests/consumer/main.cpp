// The README's embedding example, built against the installed package.
#include <anatomy/anatomy.h>

#include <iostream>

int main() {
  anatomy::manual_seed(0);
  anatomy::Tensor x = anatomy::randn({2, 3});
  anatomy::Tensor y = x.t().contiguous();  // a transposed view, then a copy in row-major order
  std::cout << y << "\n" << anatomy::describe(x.t());
  // Every view shares x's storage; the copy does not.
  bool ok = x.t().is_alias_of(x) && !y.is_alias_of(x) && y.sizes() == anatomy::IntArrayRef{3, 2} &&
            y[2][1].item<float>() == x[1][2].item<float>();
  std::cout << (ok ? "consumer: ok" : "consumer: FAILED") << "\n";
  return ok ? 0 : 1;
}
