// GPU tests of reading and writing by index on CUDA (index_select, gather, take, embedding,
// advanced indexing, scatter_, scatter_add_, index_put_): the same calls on the CPU and on CUDA
// give the same bits (accumulations included: repeated indices are added in the CPU's order; the
// sorted path of walks with few non-colliding positions is tested in test_cuda_scatter_sorted.cpp),
// over every dtype, both index dtypes, negative indices, transposed and offset operands,
// broadcast indices, zero-size and 0-dim tensors; bad index values raise the CPU's IndexError at
// the next wait and leave a written tensor unchanged.
#include <string>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::pending_index_error;
using gpu_test::same_values;

namespace {

// Random indices in [lo, hi) as `dtype` (int64 or int32), on the CPU.
Tensor random_index(IntArrayRef sizes, int64_t lo, int64_t hi, DType dtype = DType::Int64) {
  return randint(lo, hi, sizes, DType::Int64).to(dtype);
}

Tensor on_cuda(const Tensor& t) { return t.defined() ? t.to(kCuda) : t; }

std::vector<Tensor> on_cuda(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(on_cuda(t));
  return out;
}

// Values that make float sums round differently in another order: mixed signs and magnitudes
// (about 2^-12 to 2^12, finite in every float dtype).
Tensor wide_sample(IntArrayRef sizes, DType dtype) {
  if (!is_floating(dtype)) return gpu_test::sample(sizes, dtype);
  return (randn(sizes, DType::Float64) * 4.0).exp2().mul(randn(sizes, DType::Float64)).to(dtype);
}

const std::vector<DType> kIndexDtypes = {DType::Int64, DType::Int32};

// Runs `write` on a CPU tensor and on a CUDA copy of it and checks every element after.
template <typename Write>
void check_write(const Tensor& base, Write write) {
  Tensor cpu = base.clone();
  Tensor gpu = base.to(kCuda);
  write(cpu, false);
  write(gpu, true);
  CHECK(same_values(gpu, cpu));
}

}  // namespace

TEST_CASE("cuda index_select: every dtype and dim, int64 and int32, negative indices") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor self = gpu_test::sample({4, 5, 6}, d);
    for (int64_t dim = 0; dim < 3; ++dim) {
      for (DType id : kIndexDtypes) {
        const Tensor index = random_index({7}, -self.size(dim), self.size(dim), id);
        CHECK(same_values(on_cuda(self).index_select(dim, on_cuda(index)), self.index_select(dim, index)));
      }
    }
  }
}

TEST_CASE("cuda index_select: transposed, offset and strided operands, rows of every width") {
  ANATOMY_REQUIRE_GPU();
  const Tensor base = gpu_test::sample({6, 9, 10}, DType::Float32);
  const Tensor idx_base = random_index({20}, 0, 5);  // in range for every dim of every view
  for (int64_t dim = 0; dim < 3; ++dim) {
    CAPTURE(dim);
    const Tensor index = idx_base.slice(0, 1, 20, 3);  // offset and strided
    const Tensor views[] = {base, base.transpose(0, 2), base.slice(1, 2, 8), base.slice(0, 1, 6)};
    for (const Tensor& v : views) {
      const Tensor g = on_cuda(base);
      const Tensor gv = v.is_same(base) ? g : g.as_strided(v.sizes(), v.strides(), v.storage_offset());
      CHECK(same_values(gv.index_select(dim, on_cuda(index)), v.index_select(dim, index)));
    }
  }
  // Contiguous rows of odd byte widths (word copies of 1, 2, 4, 8 and 16 bytes), offset storage.
  for (DType d : {DType::UInt8, DType::Float16, DType::Float32, DType::Float64}) {
    for (int64_t width : {1, 3, 8, 17, 64}) {
      CAPTURE(name(d));
      CAPTURE(width);
      const Tensor self = gpu_test::sample({5, 6, width}, d);
      const Tensor index = random_index({9}, 0, 6);
      CHECK(same_values(on_cuda(self).index_select(1, on_cuda(index)), self.index_select(1, index)));
      const Tensor g = on_cuda(gpu_test::sample({31 * width + 1}, d));
      const Tensor gv = g.slice(0, 1).view({31, width});
      CHECK(same_values(gv.index_select(0, on_cuda(index)), gv.cpu().index_select(0, index)));
    }
  }
}

TEST_CASE("cuda index_select: large rows, zero-size and 0-dim") {
  ANATOMY_REQUIRE_GPU();
  const Tensor big = gpu_test::sample({3000, 130}, DType::Float32);
  const Tensor index = random_index({5000}, 0, 3000, DType::Int32);
  CHECK(same_values(on_cuda(big).index_select(0, on_cuda(index)), big.index_select(0, index)));
  CHECK(same_values(on_cuda(big).index_select(1, on_cuda(index.remainder(130))),
                    big.index_select(1, index.remainder(130))));
  const Tensor none = random_index({0}, 0, 1);
  CHECK(same_values(on_cuda(big).index_select(0, on_cuda(none)), big.index_select(0, none)));
  const Tensor empty_self = gpu_test::sample({0, 4}, DType::Float32);
  CHECK(same_values(on_cuda(empty_self).index_select(1, on_cuda(index.remainder(4))),
                    empty_self.index_select(1, index.remainder(4))));
  const Tensor scalar = gpu_test::sample({}, DType::Int64);
  const Tensor zero = tensor<int64_t>({0}).view({});
  CHECK(same_values(on_cuda(scalar).index_select(0, on_cuda(zero)), scalar.index_select(0, zero)));
  CHECK(same_values(on_cuda(big).index_select(1, on_cuda(zero)), big.index_select(1, zero)));
}

TEST_CASE("cuda gather: every dtype and dim, smaller index, transposed and offset operands") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor self = gpu_test::sample({4, 5, 6}, d);
    for (int64_t dim = 0; dim < 3; ++dim) {
      for (DType id : kIndexDtypes) {
        const Tensor index = random_index({3, 4, 5}, 0, self.size(dim), id);
        CHECK(same_values(on_cuda(self).gather(dim, on_cuda(index)), self.gather(dim, index)));
      }
    }
  }
  const Tensor self = gpu_test::sample({8, 7}, DType::Float64);
  const Tensor index = random_index({9, 8}, 0, 7);
  const Tensor sv = self.t().slice(0, 1);                  // [6, 8], transposed, offset
  const Tensor iv = index.slice(0, 2).t().slice(1, 0, 6);  // [8, 6] -> transposed, offset
  const Tensor gs = on_cuda(self).t().slice(0, 1), gi = on_cuda(index).slice(0, 2).t().slice(1, 0, 6);
  CHECK(same_values(gs.gather(1, gi.slice(0, 0, 6).remainder(8)), sv.gather(1, iv.slice(0, 0, 6).remainder(8))));
  CHECK(same_values(gs.gather(0, gi.slice(0, 0, 6).remainder(6)), sv.gather(0, iv.slice(0, 0, 6).remainder(6))));
  // 0-dim and zero-size.
  const Tensor scalar = gpu_test::sample({}, DType::Float32);
  const Tensor zero = tensor<int64_t>({0}).view({});
  CHECK(same_values(on_cuda(scalar).gather(0, on_cuda(zero)), scalar.gather(0, zero)));
  const Tensor none = random_index({0, 7}, 0, 1);
  CHECK(same_values(on_cuda(self).gather(0, on_cuda(none)), self.gather(0, none)));
}

TEST_CASE("cuda take: every dtype, negative indices, transposed and 0-dim self") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor self = gpu_test::sample({5, 6}, d);
    for (DType id : kIndexDtypes) {
      const Tensor index = random_index({3, 4}, -30, 30, id);
      CHECK(same_values(on_cuda(self).take(on_cuda(index)), self.take(index)));
      CHECK(same_values(on_cuda(self).t().take(on_cuda(index)), self.t().take(index)));
      CHECK(same_values(on_cuda(self).slice(1, 1, 6, 2).take(on_cuda(index.remainder(15))),
                        self.slice(1, 1, 6, 2).take(index.remainder(15))));
    }
  }
  const Tensor scalar = gpu_test::sample({}, DType::Int32);
  const Tensor idx = tensor<int64_t>({0, -1, 0});
  CHECK(same_values(on_cuda(scalar).take(on_cuda(idx)), scalar.take(idx)));
  const Tensor none = random_index({0}, 0, 1);
  CHECK(same_values(on_cuda(scalar).take(on_cuda(none)), scalar.take(none)));
}

TEST_CASE("cuda embedding: every dtype, aligned and misaligned rows, strided weight, many rows") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    for (int64_t dim : {1, 3, 16, 33}) {
      CAPTURE(name(d));
      CAPTURE(dim);
      const Tensor weight = gpu_test::sample({11, dim}, d);
      for (DType id : kIndexDtypes) {
        const Tensor indices = random_index({4, 5}, 0, 11, id);
        CHECK(same_values(embedding(on_cuda(weight), on_cuda(indices)), embedding(weight, indices)));
      }
      // Rows starting one element into the storage, and a transposed weight.
      const Tensor g = on_cuda(gpu_test::sample({12 * dim + 1}, d));
      const Tensor gw = g.slice(0, 1).view({12, dim});
      const Tensor indices = random_index({7}, 0, 12);
      CHECK(same_values(embedding(gw, on_cuda(indices)), embedding(gw.cpu(), indices)));
      const Tensor wt = gpu_test::sample({dim, 12}, d).t();
      CHECK(same_values(embedding(on_cuda(wt), on_cuda(indices)), embedding(wt, indices)));
    }
  }
  const Tensor weight = gpu_test::sample({50000, 256}, DType::BFloat16);
  const Tensor indices = random_index({8, 1024}, 0, 50000);
  CHECK(same_values(embedding(on_cuda(weight), on_cuda(indices)), embedding(weight, indices)));
  const Tensor none = random_index({0, 3}, 0, 1);
  CHECK(same_values(embedding(on_cuda(weight), on_cuda(none)), embedding(weight, none)));
}

TEST_CASE("cuda index: one and several index tensors, broadcast, slices, non-adjacent dims") {
  ANATOMY_REQUIRE_GPU();
  // self [5, 6, 7, 3] as a contiguous tensor and as a transposed, offset view of a bigger one.
  const Tensor contiguous = gpu_test::sample({5, 6, 7, 3}, DType::Float32);
  const Tensor base = gpu_test::sample({6, 7, 5, 3}, DType::Float32);
  const Tensor i0 = random_index({4, 1}, -5, 5), i1 = random_index({3}, -6, 6, DType::Int32);
  const Tensor i2 = random_index({2, 4, 3}, 0, 7), i3 = random_index({9}, 0, 3);
  const std::vector<std::vector<Tensor>> cases = {
      {i0},                                      // one index
      {i0, i1},                                  // broadcast [4, 1] and [3]
      {Tensor(), i1},                            // a slice first: the block stays in place
      {i0, Tensor(), i2.select(0, 1)},           // non-adjacent: the block moves to the front
      {i0, i1, random_index({3, 4}, 0, 7).t()},  // a transposed index, broadcast to [4, 3]
      {Tensor(), Tensor(), i2},                  // a 3-D index in the middle
      {Tensor(), Tensor(), Tensor(), i3},
      {random_index({0}, 0, 1), Tensor(), random_index({0}, 0, 1)},  // zero-size
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    CAPTURE(c);
    CHECK(same_values(on_cuda(contiguous).index(on_cuda(cases[c])), contiguous.index(cases[c])));
    const Tensor view = base.permute({2, 0, 1, 3});
    const Tensor gview = on_cuda(base).permute({2, 0, 1, 3});
    CHECK(same_values(gview.index(on_cuda(cases[c])), view.index(cases[c])));
    // CPU indices next to a CUDA self are copied to the device, as in PyTorch.
    CHECK(same_values(on_cuda(contiguous).index(cases[c]), contiguous.index(cases[c])));
  }
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor self = gpu_test::sample({4, 5}, d);
    const std::vector<Tensor> idx = {random_index({6}, -4, 4), random_index({6}, 0, 5, DType::Int32)};
    CHECK(same_values(on_cuda(self).index(on_cuda(idx)), self.index(idx)));
  }
  // A 0-dim index gives a 0-dim result.
  const Tensor v = gpu_test::sample({5}, DType::Int64);
  const std::vector<Tensor> scalar_index = {tensor<int64_t>({-2}).view({})};
  CHECK(same_values(on_cuda(v).index(on_cuda(scalar_index)), v.index(scalar_index)));
}

TEST_CASE("cuda index and index_put_: CPU bool masks next to a CUDA self") {
  ANATOMY_REQUIRE_GPU();
  const Tensor self = gpu_test::sample({4, 5, 3}, DType::Float32);
  const Tensor mask = gpu_test::sample({4, 5}, DType::Bool);
  const Tensor values = gpu_test::sample({3}, DType::Float32);
  CHECK(same_values(on_cuda(self).index({mask}), self.index({mask})));
  check_write(self, [&](const Tensor& t, bool cuda) { t.index_put_({mask}, cuda ? on_cuda(values) : values, true); });
}

// CUDA masks take the nonzero operator on CUDA.
TEST_CASE("cuda index and index_put_: bool masks") {
  ANATOMY_REQUIRE_GPU();
  const Tensor self = gpu_test::sample({4, 5, 3}, DType::Float32);
  const Tensor mask2 = gpu_test::sample({4, 5}, DType::Bool), mask1 = gpu_test::sample({5}, DType::Bool);
  const std::vector<std::vector<Tensor>> cases = {{mask2}, {Tensor(), mask1}, {random_index({1}, 0, 4), mask1}};
  for (size_t c = 0; c < cases.size(); ++c) {
    CAPTURE(c);
    CHECK(same_values(on_cuda(self).index(on_cuda(cases[c])), self.index(cases[c])));
    const Tensor values = gpu_test::sample({3}, DType::Float32);
    check_write(self, [&](const Tensor& t, bool cuda) {
      t.index_put_(cuda ? on_cuda(cases[c]) : cases[c], cuda ? on_cuda(values) : values, false);
    });
    check_write(self, [&](const Tensor& t, bool cuda) {
      t.index_put_(cuda ? on_cuda(cases[c]) : cases[c], cuda ? on_cuda(values) : values, true);
    });
  }
}

TEST_CASE("cuda scatter_, scatter_.value and scatter_add_: every dtype, repeated indices") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor self = wide_sample({6, 7, 5}, d);
    for (int64_t dim = 0; dim < 3; ++dim) {
      for (DType id : kIndexDtypes) {
        CAPTURE(dim);
        // Few distinct values along dim: many repeats, written and added in the CPU's order.
        const Tensor index = random_index({5, 6, 4}, 0, std::min<int64_t>(2, self.size(dim)), id);
        const Tensor src = wide_sample({6, 7, 5}, d);
        check_write(self, [&](const Tensor& t, bool cuda) {
          t.scatter_(dim, cuda ? on_cuda(index) : index, cuda ? on_cuda(src) : src);
        });
        check_write(self, [&](const Tensor& t, bool cuda) {
          t.scatter_add_(dim, cuda ? on_cuda(index) : index, cuda ? on_cuda(src) : src);
        });
        const Scalar value = d == DType::Bool ? Scalar(true) : Scalar(3);
        check_write(
            self, [&](const Tensor& t, bool cuda) { t.copy_(scatter(t, dim, cuda ? on_cuda(index) : index, value)); });
      }
    }
  }
}

// Walks with many non-colliding positions (here more than 8192 columns) run on the serial kernel
// (Note [Deterministic scatter on CUDA]); those with few take the sorted path, whose floating
// sums may round differently (test_cuda_scatter_sorted.cpp).
TEST_CASE("cuda scatter_add_: float sums are the CPU's bit for bit over long repeated ranges") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64}) {
    CAPTURE(name(d));
    const Tensor self = wide_sample({3, 8200}, d);
    const Tensor index = random_index({300, 8200}, 0, 3);
    const Tensor src = wide_sample({300, 8200}, d);
    check_write(self, [&](const Tensor& t, bool cuda) {
      t.scatter_add_(0, cuda ? on_cuda(index) : index, cuda ? on_cuda(src) : src);
    });
  }
}

TEST_CASE("cuda scatter_: transposed, offset and 0-dim operands, zero-size index, self as src") {
  ANATOMY_REQUIRE_GPU();
  const Tensor base = wide_sample({8, 9}, DType::Float32);
  const Tensor index = random_index({10, 10}, 0, 3);
  const Tensor src = wide_sample({10, 10}, DType::Float32);
  // self transposed and offset, index and src transposed and offset.
  check_write(base, [&](const Tensor& t, bool cuda) {
    const Tensor i = (cuda ? on_cuda(index) : index).t().slice(0, 1, 8);
    const Tensor s = (cuda ? on_cuda(src) : src).slice(1, 2).t();
    t.t().slice(0, 1).scatter_add_(1, i.slice(0, 0, 7), s);
  });
  check_write(base, [&](const Tensor& t, bool cuda) {
    const Tensor i = (cuda ? on_cuda(index) : index).slice(0, 1, 5);
    t.slice(1, 2).scatter_(0, i.slice(1, 0, 7), t.slice(0, 1));  // src overlaps self
  });
  // 0-dim self, index and src.
  const Tensor scalar = wide_sample({}, DType::Float64);
  const Tensor zero = tensor<int64_t>({0}).view({});
  const Tensor value = wide_sample({}, DType::Float64);
  check_write(scalar, [&](const Tensor& t, bool cuda) {
    t.scatter_add_(0, cuda ? on_cuda(zero) : zero, cuda ? on_cuda(value) : value);
  });
  // An empty index writes nothing.
  const Tensor none = random_index({0, 9}, 0, 1);
  check_write(
      base, [&](const Tensor& t, bool cuda) { t.scatter_(0, cuda ? on_cuda(none) : none, cuda ? on_cuda(src) : src); });
}

TEST_CASE("cuda index_put_: accumulate or not, repeated and broadcast indices, broadcast values") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor self = wide_sample({5, 6, 4}, d);
    const Tensor i0 = random_index({8, 1}, -5, 5), i1 = random_index({3}, 0, 2, DType::Int32);
    const std::vector<std::vector<Tensor>> cases = {{i0}, {i0, i1}, {Tensor(), i1}, {i0, Tensor(), i1}};
    for (size_t c = 0; c < cases.size(); ++c) {
      for (bool accumulate : {false, true}) {
        CAPTURE(c);
        CAPTURE(accumulate);
        const Tensor result = on_cuda(self).index(on_cuda(cases[c]));
        const Tensor values = wide_sample(result.sizes(), d);
        check_write(self, [&](const Tensor& t, bool cuda) {
          t.index_put_(cuda ? on_cuda(cases[c]) : cases[c], cuda ? on_cuda(values) : values, accumulate);
        });
        // Values broadcast over the result's last dim.
        const Tensor row = wide_sample({result.size(-1)}, d);
        check_write(self, [&](const Tensor& t, bool cuda) {
          t.index_put_(cuda ? on_cuda(cases[c]) : cases[c], cuda ? on_cuda(row) : row, accumulate);
        });
      }
    }
  }
}

// Fewer than 256 indices: the serial kernel (Note [Deterministic scatter on CUDA]); more take the
// sorted path (test_cuda_scatter_sorted.cpp).
TEST_CASE("cuda index_put_: embedding-style accumulation is the CPU's bit for bit, transposed self") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::BFloat16}) {
    CAPTURE(name(d));
    // index_put_(zeros, {indices}, grad, accumulate=True): many repeats of few rows.
    const Tensor grad = wide_sample({250, 64}, d);
    const std::vector<Tensor> indices = {random_index({250}, 0, 50)};
    check_write(zeros({50, 64}, d), [&](const Tensor& t, bool cuda) {
      t.index_put_(cuda ? on_cuda(indices) : indices, cuda ? on_cuda(grad) : grad, true);
    });
    // A 1-D self: every write may collide, so one thread walks them all.
    const Tensor flat_values = wide_sample({250}, d);
    const std::vector<Tensor> flat_indices = {random_index({250}, -20, 20)};
    check_write(wide_sample({20}, d), [&](const Tensor& t, bool cuda) {
      t.index_put_(cuda ? on_cuda(flat_indices) : flat_indices, cuda ? on_cuda(flat_values) : flat_values, true);
    });
    check_write(wide_sample({20}, d), [&](const Tensor& t, bool cuda) {
      t.index_put_(cuda ? on_cuda(flat_indices) : flat_indices, cuda ? on_cuda(flat_values) : flat_values, false);
    });
  }
  // Transposed, offset self and values that overlap self.
  const Tensor base = wide_sample({7, 8}, DType::Float64);
  const std::vector<Tensor> idx = {random_index({5}, 0, 6)};
  check_write(base, [&](const Tensor& t, bool cuda) {
    const Tensor view = t.t().slice(0, 1);  // [7, 7]
    view.index_put_(cuda ? on_cuda(idx) : idx, view.slice(0, 1, 6), true);
  });
}

TEST_CASE("cuda index ops: host-checkable errors raise the CPU's types at the call") {
  ANATOMY_REQUIRE_GPU();
  const Tensor self = on_cuda(gpu_test::sample({4, 5}, DType::Float32));
  const Tensor findex = on_cuda(gpu_test::sample({3}, DType::Float32));
  CHECK_THROWS_AS(self.index_select(0, findex), TypeError);
  CHECK_THROWS_AS(self.gather(0, on_cuda(random_index({3}, 0, 4))), ValueError);
  CHECK_THROWS_AS(self.index({findex}), TypeError);
  CHECK_THROWS_AS(self.index({on_cuda(random_index({3}, 0, 4)), on_cuda(random_index({2}, 0, 4))}), IndexError);
  CHECK_THROWS_AS(
      self.scatter_(0, on_cuda(random_index({2, 5}, 0, 4)), on_cuda(gpu_test::sample({2, 5}, DType::Int32))),
      TypeError);
  // Index tensors of gather, scatter, take, index_select and embedding must be on self's device.
  CHECK_THROWS_AS(self.index_select(0, random_index({3}, 0, 4)), DeviceError);
  CHECK_THROWS_AS(self.gather(0, random_index({3, 5}, 0, 4)), DeviceError);
  CHECK_THROWS_AS(self.scatter_add_(0, random_index({3, 5}, 0, 4), self.slice(0, 0, 3).clone()), DeviceError);
  CHECK_THROWS_AS(self.take(random_index({3}, 0, 4)), DeviceError);
  CHECK_THROWS_AS(embedding(self, random_index({3}, 0, 4)), DeviceError);
  // Nothing raised on the device.
  CHECK(pending_index_error().empty());
}

TEST_CASE("cuda index ops: a bad index in device memory raises IndexError at the next wait") {
  ANATOMY_REQUIRE_GPU();
  const Tensor self = on_cuda(gpu_test::sample({4, 5}, DType::Float32));
  const Tensor before = self.cpu();
  auto bad = [](std::initializer_list<int64_t> v) { return on_cuda(tensor<int64_t>(v)); };
  auto expect = [&](const char* message) {
    const std::string what = pending_index_error();
    CAPTURE(what);
    CHECK(what.find(message) != std::string::npos);
    CHECK(same_values(self, before));  // nothing written
    // The next op works and raises nothing.
    CHECK(same_values(self.index_select(0, bad({1, 2})), before.index_select(0, tensor<int64_t>({1, 2}))));
    CHECK(pending_index_error().empty());
  };
  (void)self.index_select(1, bad({0, 7}));
  expect("index_select: index 7 is out of bounds for dimension 1 with size 5");
  (void)self.index_select(0, bad({-5}));
  expect("index_select: index -5 is out of bounds for dimension 0 with size 4");
  (void)self.gather(0, bad({1, -1}).view({1, 2}));
  expect("gather: index -1 is out of bounds for dimension 0 with size 4");
  (void)self.take(bad({20}));
  expect("take: index 20 is out of bounds for dimension 0 with size 20");
  (void)embedding(self, bad({0, 4}));
  expect("embedding: index 4 is out of bounds for dimension 0 with size 4");
  (void)self.index({Tensor(), bad({5})});
  expect("index: index 5 is out of bounds for dimension 1 with size 5");
  // Writes: the other, valid indices of the call are not written either.
  self.scatter_(1, bad({0, 9}).view({1, 2}), on_cuda(gpu_test::sample({1, 2}, DType::Float32)));
  expect("scatter_: index 9 is out of bounds for dimension 1 with size 5");
  (void)scatter(self, 1, bad({0, 9}).view({1, 2}), Scalar(2.0));
  expect("scatter_: index 9 is out of bounds for dimension 1 with size 5");
  self.scatter_add_(0, bad({1, 4}).view({2, 1}), on_cuda(gpu_test::sample({2, 1}, DType::Float32)));
  expect("scatter_add_: index 4 is out of bounds for dimension 0 with size 4");
  self.index_put_({bad({0, 1, -6})}, on_cuda(gpu_test::sample({5}, DType::Float32)), true);
  expect("index_put_: index -6 is out of bounds for dimension 0 with size 4");
  self.index_put_({bad({0}), bad({5})}, on_cuda(gpu_test::sample({}, DType::Float32)), false);
  expect("index_put_: index 5 is out of bounds for dimension 1 with size 5");
}

// Python-style indices (anatomy::indexing) on a CUDA self: the same views and copies as on the
// CPU, with CPU and CUDA index tensors and masks, and index_put_ through each form.
TEST_CASE("cuda tensor index: basic and advanced indices read and write as on the CPU") {
  ANATOMY_REQUIRE_GPU();
  using namespace anatomy::indexing;
  const Tensor self = gpu_test::sample({4, 5, 3}, DType::Float32);
  // Index tensors for dims 1 (size 5) and 0 (size 4): in range whatever the draw.
  const Tensor idx = random_index({2}, -5, 5), idx0 = random_index({2}, -4, 4);
  const Tensor mask = gpu_test::sample({4}, DType::Bool);
  const std::vector<std::vector<TensorIndex>> cases = {
      {Slice(1, None), 0},                       // a view
      {"...", Slice(None, None, 2), None},       // a view with a step and a new dim
      {Slice(1, None), idx},                     // an index tensor after a slice
      {idx0, Slice(), random_index({2}, 0, 3)},  // separated index tensors: the block goes first
      {mask, Slice(), -1},                       // a mask and a select
      {true, 2},                                 // a bool
  };
  // The CUDA self gets the index tensors on the CPU (copied over by the operator) or on CUDA.
  auto device_indices = [](const std::vector<TensorIndex>& ix, bool to_cuda) {
    std::vector<TensorIndex> out;
    for (const TensorIndex& i : ix) out.push_back(i.is_tensor() && to_cuda ? TensorIndex(on_cuda(i.tensor())) : i);
    return out;
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    CAPTURE(c);
    for (bool to_cuda : {false, true}) {
      CHECK(same_values(on_cuda(self).index(device_indices(cases[c], to_cuda)), self.index(cases[c])));
    }
    check_write(self, [&](const Tensor& t, bool cuda) { t.index_put_(device_indices(cases[c], cuda), Scalar(2.5)); });
  }
  const Tensor values = gpu_test::sample({3}, DType::Float32);
  check_write(self, [&](const Tensor& t, bool cuda) {
    t.index_put_({Slice(), idx}, cuda ? on_cuda(values) : values);
    t.index_put_({0, Slice(1, None, 2)}, cuda ? on_cuda(values) : values);
  });
  // A basic index is a view: writes through it reach the CUDA tensor.
  const Tensor g = on_cuda(self);
  g.index({Slice(), 1}).fill_(7);
  CHECK(gpu_test::values_of(g.select(1, 1)) == std::vector<double>(12, 7.0));
}
