// GPU tests of the tiled path for element-wise ops with an operand transposed against the output
// (Note [Transposed element-wise operands], backends/cuda/elementwise/elementwise.cuh): results equal the
// CPU's bit for bit, for shapes that are not multiples of the tile, batched transposes, several
// transposed inputs, CPU scalars, broadcast inputs and every width of element.
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::sample;

TEST_CASE("cuda transposed operands: binary ops match the CPU for ragged shapes and every dtype") {
  ANATOMY_REQUIRE_GPU();
  const std::vector<std::vector<int64_t>> shapes = {{32, 32}, {67, 45}, {33, 100}, {1000, 40}, {31, 64}};
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int8, DType::Int64}) {
    for (const auto& shape : shapes) {
      CAPTURE(name(d));
      CAPTURE(shape[0]);
      CAPTURE(shape[1]);
      const Tensor a = sample(shape, d), b = sample({shape[1], shape[0]}, d);
      const Tensor ga = a.to(kCuda), gb = b.to(kCuda);
      CHECK(same_values(ga + gb.t(), a + b.t()));
      CHECK(same_values(gb.t() * ga, b.t() * a));
      CHECK(same_values(gb.t() * Scalar(3), b.t() * Scalar(3)));
      // Both inputs transposed, output contiguous.
      Tensor out = empty(shape, TensorOptions().dtype(d).device(kCuda));
      add_out(out, gb.t(), gb.t());
      CHECK(same_values(out, b.t() + b.t()));
      // A row vector broadcast next to a transposed input.
      const Tensor row = sample({shape[1]}, d);
      CHECK(same_values(gb.t() - row.to(kCuda), b.t() - row));
      // A comparison: bool output of the same layout.
      CHECK(same_values(ga < gb.t(), a < b.t()));
    }
  }
}

TEST_CASE("cuda transposed operands: batched transposes, ternary ops, offsets and in-place") {
  ANATOMY_REQUIRE_GPU();
  const Tensor a = rand({5, 70, 90}), b = rand({5, 90, 70}), w = rand({90, 70});
  const Tensor ga = a.to(kCuda), gb = b.to(kCuda), gw = w.to(kCuda);
  CHECK(same_values(ga + gb.transpose(1, 2), a + b.transpose(1, 2)));
  // lerp's CUDA arithmetic may fuse a multiply-add the CPU's does not: compare with the same
  // kernel on contiguous copies instead.
  CHECK(same_values(lerp(ga, gb.transpose(1, 2), gw.t()),
                    lerp(ga, gb.transpose(1, 2).contiguous(), gw.t().contiguous().expand({5, 70, 90}).contiguous())));
  CHECK(same_values(where(ga > Scalar(0.5), gb.transpose(1, 2), ga), where(a > Scalar(0.5), b.transpose(1, 2), a)));
  // A transposed view with a storage offset.
  const Tensor big = rand({100, 120});
  const Tensor view = big.narrow(0, 3, 90).narrow(1, 5, 70);  // [90, 70] at an offset
  const Tensor gview = big.to(kCuda).narrow(0, 3, 90).narrow(1, 5, 70);
  CHECK(same_values(ga.select(0, 1) + gview.t(), a.select(0, 1) + view.t()));
  // In place: self contiguous, other transposed.
  Tensor self = a.select(0, 2).clone();
  Tensor gself = self.to(kCuda);
  self.mul_(b.select(0, 2).t());
  gself.mul_(gb.select(0, 2).t());
  CHECK(same_values(gself, self));
  // Mixed dtypes: the promoted computation still reads the transposed input correctly.
  const Tensor i = randint(0, 100, {90, 70}, DType::Int32);
  CHECK(same_values(ga.select(0, 0) + i.to(kCuda).t(), a.select(0, 0) + i.t()));
}

TEST_CASE("cuda transposed operands: copies of transposed views are exact for every element size") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::Int8, DType::Bool}) {
    CAPTURE(name(d));
    const Tensor a = sample({97, 130}, d), batched = sample({3, 40, 65}, d);
    CHECK(same_values(a.to(kCuda).t().contiguous(), a.t().contiguous()));
    CHECK(same_values(batched.to(kCuda).transpose(1, 2).contiguous(), batched.transpose(1, 2).contiguous()));
    Tensor dst = empty({130, 97}, TensorOptions().dtype(d).device(kCuda));
    dst.copy_(a.to(kCuda).t());
    CHECK(same_values(dst, a.t()));
  }
}
