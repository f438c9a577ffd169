// Element-wise outputs written with streaming stores (Note [Streaming stores for large outputs]):
// the same values as stores in place, for every offset of the output against the 16-byte
// boundary, tails of every length, several element sizes, in-place forms and outputs split over
// the thread pool.
#include <cstdint>
#include <limits>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "anatomy/backends/cpu/streaming_store.h"
#include "test_util.h"

using namespace anatomy;

namespace {

constexpr size_t kNever = std::numeric_limits<size_t>::max();

// `n` elements of `dtype` starting `offset` elements into a larger tensor, so the data is not
// 16-byte aligned for most offsets.
Tensor offset_tensor(int64_t n, int64_t offset, DType dtype) {
  Tensor base = randn({n + offset + 3}).mul(7).to(dtype);
  return base.slice(0, offset, offset + n);
}

// Bit-for-bit equality of two CPU tensors of one dtype and shape.
bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), static_cast<size_t>(x.numel()) * x.element_size()) == 0;
}

}  // namespace

TEST_CASE("streaming stores: fp32 add and scalar mul match a reference at every offset and length") {
  const cpu::StreamingStoreThreshold always(0);
  for (int64_t n : {0, 1, 5, 1023, 2048, 2049, 3001, 4096 + 7}) {
    for (int64_t offset : {0, 1, 2, 3}) {
      CAPTURE(n);
      CAPTURE(offset);
      Tensor a = offset_tensor(n, offset, DType::Float32), b = offset_tensor(n, 3 - offset, DType::Float32);
      Tensor out_base = empty({n + 4});
      Tensor out = out_base.slice(0, offset, offset + n);  // an out= tensor off the 16-byte boundary
      add_out(out, a, b);
      Tensor scaled = a * 2.5;
      const float* pa = static_cast<const float*>(a.data_ptr());
      const float* pb = static_cast<const float*>(b.data_ptr());
      const float* po = static_cast<const float*>(out.data_ptr());
      const float* ps = static_cast<const float*>(scaled.data_ptr());
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (po[i] != pa[i] + pb[i]) ++wrong;
        if (ps[i] != pa[i] * 2.5f) ++wrong;
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("streaming stores: the same bits as stores in place, for every element size and in place") {
  for (DType dtype : {DType::Float32, DType::Float16, DType::Int64, DType::Int8, DType::Float64}) {
    for (int64_t n : {4095, 8192 + 13, 70001}) {
      for (int64_t offset : {0, 1, 5}) {
        CAPTURE(name(dtype));
        CAPTURE(n);
        CAPTURE(offset);
        Tensor a = offset_tensor(n, offset, dtype), b = offset_tensor(n, 5 - offset, dtype);
        Tensor plain_sum, plain_cmp, plain_inplace;
        {
          const cpu::StreamingStoreThreshold never(kNever);
          plain_sum = a + b;
          plain_cmp = lt(a, b);  // a 1-byte bool output
          plain_inplace = a.clone();
          plain_inplace.mul_(b);
        }
        const cpu::StreamingStoreThreshold always(0);
        CHECK(same_bits(a + b, plain_sum));
        CHECK(same_bits(lt(a, b), plain_cmp));
        Tensor inplace = a.clone();
        inplace.mul_(b);  // the output is an input, element for element
        CHECK(same_bits(inplace, plain_inplace));
      }
    }
  }
}

TEST_CASE("streaming stores: an output split over the thread pool, and the threshold's default") {
  CHECK(cpu::streaming_store_threshold() == size_t{16} << 20);
  const int64_t n = (int64_t{1} << 22) + 37;  // 16 MiB of fp32 and a tail: several chunks
  Tensor a = randn({n}), b = randn({n});
  Tensor plain;
  {
    const cpu::StreamingStoreThreshold never(kNever);
    plain = a + b;
  }
  // At the default threshold 16 MiB and more streams, into memory already written (a fresh
  // mapping is written in place: Note [Streaming stores for large outputs]).
  Tensor streamed = zeros({n});
  add_out(streamed, a, b);
  CHECK(same_bits(streamed, plain));
  CHECK(cpu::page_resident(streamed.data_ptr()));
}

#if defined(__linux__)
TEST_CASE("streaming stores: a page nothing has written is not resident, one written is") {
  // A mapping of our own: what the allocator returns depends on the allocator (a sanitizer's
  // fills the first bytes of each block).
  const size_t bytes = size_t{1} << 16;
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(map != MAP_FAILED);
  char* middle = static_cast<char*>(map) + bytes / 2;
  CHECK_FALSE(cpu::page_resident(middle));
  *middle = 1;
  CHECK(cpu::page_resident(middle));
  ::munmap(map, bytes);
}
#endif

TEST_CASE("streaming stores: a new output (written in place) and a reused one (streamed) agree") {
  Tensor a = randn({int64_t{16} << 20});
  Tensor into_fresh = a * 2.0;
  Tensor into_written = zeros({int64_t{16} << 20});
  mul_out(into_written, a, full({}, 2.0));
  CHECK(same_bits(into_fresh, into_written));
}
