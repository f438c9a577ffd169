// libFuzzer target over DLPack import (docs/fuzzing.md, "DLPack import: a libFuzzer target").
// Each input is decoded into a DLManagedTensor or DLManagedTensorVersioned over a heap buffer of
// exactly the extent it states, and from_dlpack is called on it. Built with clang's libFuzzer,
// AddressSanitizer and UndefinedBehaviorSanitizer, with interop/'s sources compiled in (so they
// are instrumented too), against the library.
//
// An import must either succeed with a tensor whose every element lies inside the producer's
// buffer (read here element by element, where ASan sees each byte, and compared with the
// engine's own contiguous copy), whose producer deleter runs once when the tensor goes; or
// throw an anatomy::Error other than InternalError, leave every byte of the managed tensor as it
// was and not call its deleter. A tensor the decoder made valid on purpose must be accepted.
// Anything else aborts: libFuzzer reports it with the input.
//
// The input, read front to back (bytes past its end read as 0, so every input is a case):
//   header  bit 0 versioned, 1 null managed tensor, 2 strides given, 3 null data, 4 no deleter,
//           5 raw device (int32 type, int32 id follow; else one byte: 0 CPU, 1 CUDAHost,
//           2 CUDA:0), 6 raw dtype (code, bits, uint16 lanes follow; else one byte picks one of
//           anatomy's dtypes), 7 data one byte past an aligned address
//   version (versioned only) one byte: below 240 major 1, else major byte - 240; one byte flags
//   ndim    one byte: below 200 -> 0..5; below 250 -> 0..69; else a raw int32 follows
//   shape, strides (when given): per dim one byte, a small value (sizes 0..7, strides -2..8),
//           or from 224 on an extreme (INT64_MAX, INT64_MIN, 2^62, -1, ..., or a raw int64)
//   byte_offset one byte: below 200 -> a multiple of the element size (0..7 of them); else a
//           raw uint64 follows
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/interop/dlpack.h"

namespace {

using namespace anatomy;

[[noreturn]] void finding(const char* what, const char* detail = "") {
  std::fprintf(stderr, "fuzz_dlpack: FINDING: %s %s\n", what, detail);
  std::abort();
}

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  template <typename T>
  T raw() {
    unsigned char bytes[sizeof(T)] = {};
    for (unsigned char& b : bytes) b = byte();
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kExtremes[] = {
    kInt64Max,     kInt64Min,     int64_t{1} << 62, int64_t{1} << 61, int64_t{1} << 32,    int64_t{1} << 31, -1,
    kInt64Max / 2, kInt64Max / 3, kInt64Max - 1,    int64_t{1} << 40, -(int64_t{1} << 62), int64_t{1} << 20, 65536,
    100000,        kInt64Max / 8};

// A size (0..7) or stride (-2..8), or an extreme.
int64_t small_or_extreme(Reader& in, bool stride) {
  const uint8_t pick = in.byte();
  if (pick < 224) return stride ? pick % 11 - 2 : pick % 8;
  const size_t i = pick - 224;
  return i < std::size(kExtremes) ? kExtremes[i] : in.raw<int64_t>();
}

const DLDataType kDtypes[] = {{kDLBool, 8, 1},    {kDLUInt, 8, 1},   {kDLInt, 8, 1},
                              {kDLInt, 32, 1},    {kDLInt, 64, 1},   {kDLFloat, 16, 1},
                              {kDLBfloat, 16, 1}, {kDLFloat, 32, 1}, {kDLFloat, 64, 1}};

// One decoded case: the managed tensor and everything it points at, owned here.
struct Case {
  bool versioned = false, null_managed = false, strides_given = false, null_data = false, no_deleter = false;
  bool raw_device = false, raw_dtype = false, misaligned = false;
  uint32_t major = 1;
  uint64_t flags = 0;
  int32_t ndim = 0;
  std::vector<int64_t> shape, strides;  // as many entries as ndim says, or 2 when ndim is absurd
  DLDataType dtype{kDLFloat, 32, 1};
  int32_t device_type = kDLCPU, device_id = 0;
  uint64_t byte_offset = 0;
};

Case decode(Reader& in) {
  Case c;
  const uint8_t h = in.byte();
  c.versioned = h & 1;
  c.null_managed = h & 2;
  c.strides_given = h & 4;
  c.null_data = h & 8;
  c.no_deleter = h & 16;
  c.raw_device = h & 32;
  c.raw_dtype = h & 64;
  c.misaligned = h & 128;
  if (c.versioned) {
    const uint8_t v = in.byte();
    c.major = v < 240 ? 1 : v - 240;
    c.flags = in.byte() & 3;
  }
  const uint8_t n = in.byte();
  c.ndim = n < 200 ? n % 6 : n < 250 ? n % 70 : in.raw<int32_t>();
  const size_t entries = c.ndim >= 0 && c.ndim <= 70 ? static_cast<size_t>(c.ndim) : 2;
  for (size_t i = 0; i < entries; ++i) c.shape.push_back(small_or_extreme(in, false));
  if (c.strides_given) {
    for (size_t i = 0; i < entries; ++i) c.strides.push_back(small_or_extreme(in, true));
  }
  if (c.raw_dtype) {
    c.dtype.code = in.byte();
    c.dtype.bits = in.byte();
    c.dtype.lanes = in.raw<uint16_t>();
  } else {
    c.dtype = kDtypes[in.byte() % std::size(kDtypes)];
  }
  if (c.raw_device) {
    c.device_type = in.raw<int32_t>();
    c.device_id = in.raw<int32_t>();
  } else {
    const int32_t types[] = {kDLCPU, kDLCUDAHost, kDLCUDA};
    c.device_type = types[in.byte() % 3];
  }
  const uint8_t b = in.byte();
  const uint64_t esize = c.dtype.bits / 8 ? c.dtype.bits / 8 : 1;
  c.byte_offset = b < 200 ? (b % 8) * esize : in.raw<uint64_t>();
  return c;
}

// Where the elements lie, computed independently of the importer in 128-bit arithmetic:
// [first, end) in bytes from `data`, or nullopt when the stated layout addresses nothing a
// buffer could hold (negative offsets, or past int64).
struct Extent {
  bool empty;
  __int128 numel, first, end;
};
std::optional<Extent> stated_extent(const Case& c) {
  if (c.ndim < 0 || c.ndim > 70) return std::nullopt;
  // The shape: sizes >= 0 whose product (an empty dim counting as 1) fits int64.
  __int128 span = 1;
  bool empty = false;
  for (int32_t i = 0; i < c.ndim; ++i) {
    if (c.shape[i] < 0) return std::nullopt;
    empty = empty || c.shape[i] == 0;
    span *= c.shape[i] > 0 ? c.shape[i] : 1;
    if (span > kInt64Max) return std::nullopt;
  }
  if (empty) return Extent{true, 0, 0, 0};
  const __int128 esize = c.dtype.bits / 8;
  __int128 lo = 0, hi = 0, row_major = 1;
  for (int32_t i = c.ndim - 1; i >= 0; --i) {
    const __int128 size = c.shape[i];
    const __int128 stride = c.strides_given ? c.strides[i] : row_major;
    (stride < 0 ? lo : hi) += (size - 1) * stride;
    row_major *= size;
    // Far past int64 already; stopping here keeps the next step within 128 bits (a sum below
    // 2^100 plus a term below 2^126).
    const __int128 far = __int128{1} << 100;
    if (hi > far || lo < -far) return std::nullopt;
  }
  const __int128 first = c.byte_offset + lo * esize, end = c.byte_offset + (hi + 1) * esize;
  if (first < 0 || end > kInt64Max) return std::nullopt;
  return Extent{false, span, first, end};
}

// What a case may allocate, and read: a broadcast (stride 0) dim reads many elements of a
// small buffer.
constexpr __int128 kMaxBuffer = 1 << 20;
constexpr __int128 kMaxElements = 1 << 18;

// Made valid on purpose: the importer must accept it.
bool valid_by_construction(const Case& c, bool has_buffer) {
  if (c.null_managed || c.major != 1 || c.raw_dtype || c.raw_device || c.device_type == kDLCUDA) return false;
  if (c.ndim < 0 || c.ndim > 5) return false;
  for (int32_t i = 0; i < c.ndim; ++i) {
    if (c.shape[i] < 0 || c.shape[i] > 7 || (c.strides_given && (c.strides[i] < 0 || c.strides[i] > 8))) return false;
  }
  const uint64_t esize = c.dtype.bits / 8;
  const bool empty = stated_extent(c) && stated_extent(c)->empty;
  return c.byte_offset % esize == 0 && c.byte_offset < 8 * esize && (!c.misaligned || esize == 1) &&
         (empty || (has_buffer && !c.null_data));
}

int g_deleted = 0;

template <typename Managed>
void count_delete(Managed*) {
  ++g_deleted;
}

template <typename Managed>
void fill(Managed& m, const Case& c, void* data) {
  DLTensor& dl = m.dl_tensor;
  dl.data = data;
  std::memcpy(&dl.device.device_type, &c.device_type, sizeof(int32_t));  // any code, as an int32
  dl.device.device_id = c.device_id;
  dl.ndim = c.ndim;
  dl.dtype = c.dtype;
  dl.shape = const_cast<int64_t*>(c.shape.data());
  dl.strides = c.strides_given ? const_cast<int64_t*>(c.strides.data()) : nullptr;
  dl.byte_offset = c.byte_offset;
  m.manager_ctx = nullptr;
  m.deleter = c.no_deleter ? nullptr : &count_delete<Managed>;
}

// Every element of `t` (a CPU tensor over the case's buffer), read here byte by byte in
// row-major order: each read is checked by ASan against the buffer's bounds.
std::vector<unsigned char> read_elements(const Tensor& t) {
  const size_t esize = t.element_size();
  std::vector<unsigned char> out;
  out.reserve(static_cast<size_t>(t.numel()) * esize);
  std::vector<int64_t> index(static_cast<size_t>(t.dim()), 0);
  for (int64_t k = 0; k < t.numel(); ++k) {
    int64_t offset = 0;
    for (int64_t d = 0; d < t.dim(); ++d) offset += index[d] * t.stride(d);
    const auto* p = static_cast<const unsigned char*>(t.data_ptr()) + offset * static_cast<int64_t>(esize);
    out.insert(out.end(), p, p + esize);
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

// A successful import: its shape and strides are the stated ones, it lies where stated, and when
// its memory is a real buffer, every element is read and matches the engine's copy.
void check_import(const Tensor& t, const Case& c, const std::optional<Extent>& extent, void* data, bool readable) {
  if (!extent) finding("an import succeeded whose stated extent is negative or past int64");
  if (t.dim() != c.ndim) finding("the import's dims differ from ndim");
  for (int32_t i = 0; i < c.ndim; ++i) {
    if (t.size(i) != c.shape[i]) finding("the import's sizes differ from the shape");
    if (c.strides_given && !extent->empty && c.shape[i] > 1 && t.stride(i) != c.strides[i]) {
      finding("the import's strides differ from the given ones");
    }
  }
  if (extent->empty) return;
  if (reinterpret_cast<uintptr_t>(t.data_ptr()) != reinterpret_cast<uintptr_t>(data) + c.byte_offset) {
    finding("the import does not start at data + byte_offset");
  }
  if (!readable || !t.is_cpu()) return;
  const std::vector<unsigned char> elements = read_elements(t);
  const Tensor copy = t.contiguous();
  if (copy.nbytes() != elements.size() ||
      (!elements.empty() && std::memcmp(copy.data_ptr(), elements.data(), elements.size()) != 0)) {
    finding("the engine's contiguous copy differs from the elements read in place");
  }
  (void)t.sum();  // a reduction over the strided view, inside the library
}

template <typename Managed>
void run(const Case& c) {
  const std::optional<Extent> extent = stated_extent(c);
  // A buffer of exactly the stated extent (one more byte when the data is misaligned), so that
  // any read past it is ASan's to report; a stated extent too large to allocate gets an address
  // that is never read.
  std::vector<unsigned char>* buffer = nullptr;
  void* data = nullptr;
  const bool readable = extent && !extent->empty && extent->end <= kMaxBuffer && extent->numel <= kMaxElements;
  if (!c.null_data) {
    if (readable) {
      const size_t bytes = static_cast<size_t>(extent->end) + (c.misaligned ? 1 : 0);
      buffer = new std::vector<unsigned char>(bytes);
      for (size_t i = 0; i < bytes; ++i) (*buffer)[i] = static_cast<unsigned char>(i % 2);  // valid bools too
      data = buffer->data() + (c.misaligned ? 1 : 0);
    } else {
      data = reinterpret_cast<void*>(uintptr_t{1} << 44 | (c.misaligned ? 1 : 0));
    }
  }
  const bool must_accept = valid_by_construction(c, readable);
  g_deleted = 0;
  auto* managed = new Managed{};
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    managed->version = DLPackVersion{c.major, 0};
    managed->flags = c.flags;
  }
  fill(*managed, c, data);
  unsigned char before[sizeof(Managed)];
  std::memcpy(before, managed, sizeof(Managed));
  Tensor t;
  try {
    t = interop::from_dlpack(managed);
  } catch (const InternalError& e) {
    finding("InternalError:", e.what());
  } catch (const Error& e) {
    if (must_accept) finding("a valid tensor was refused:", e.what());
    if (g_deleted != 0) finding("a refused import called the deleter");
    if (std::memcmp(before, managed, sizeof(Managed)) != 0) finding("a refused import changed the managed tensor");
  } catch (const std::exception& e) {
    finding("an exception that is not an anatomy::Error:", e.what());
  }
  if (t.defined()) {
    try {
      check_import(t, c, extent, data, readable);
    } catch (const std::exception& e) {
      finding("reading a successful import threw:", e.what());
    }
    t = Tensor();
    if (!c.no_deleter && g_deleted != 1) finding("the producer's deleter did not run exactly once");
  }
  delete managed;
  delete buffer;
}

// A versioned tensor of another major version: only its version exists in memory, so reading
// any further is ASan's to report.
void run_other_major(uint32_t major) {
  void* bytes = std::malloc(sizeof(DLPackVersion));
  const DLPackVersion version{major, 0};
  std::memcpy(bytes, &version, sizeof(version));
  try {
    (void)interop::from_dlpack(static_cast<DLManagedTensorVersioned*>(bytes));
    finding("a tensor of another major version was imported");
  } catch (const NotImplementedError&) {
  }
  std::free(bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const Case c = decode(in);
  if (c.null_managed) {
    try {
      if (c.versioned) (void)interop::from_dlpack(static_cast<DLManagedTensorVersioned*>(nullptr));
      else (void)interop::from_dlpack(static_cast<DLManagedTensor*>(nullptr));
      finding("a null managed tensor was imported");
    } catch (const ValueError&) {
    }
  } else if (c.versioned && c.major != 1) {
    run_other_major(c.major);
  } else if (c.versioned) {
    run<DLManagedTensorVersioned>(c);
  } else {
    run<DLManagedTensor>(c);
  }
  return 0;
}
