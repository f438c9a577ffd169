// Checkpoints in the safetensors format (nn/safetensors.h): round trips of every dtype and layout,
// the exact bytes of a written file against the reference writer's, loads that are views of the
// file mapping, and each malformed file as its ValueError.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/nn/linear.h"
#include "anatomy/nn/safetensors.h"

using namespace anatomy;
namespace fs = std::filesystem;

namespace {

// A folder of its own per test, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("anatomy-safetensors-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The 8-byte little-endian length of `header`, the header, then `data`.
std::string file_bytes(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  return {static_cast<const char*>(c.data_ptr()), c.nbytes()};
}

// Same dtype, shape and bytes.
void check_same(const Tensor& got, const Tensor& want) {
  CHECK(got.dtype() == want.dtype());
  CHECK(std::vector<int64_t>(got.sizes().begin(), got.sizes().end()) ==
        std::vector<int64_t>(want.sizes().begin(), want.sizes().end()));
  CHECK(bytes_of(got) == bytes_of(want));
}

const DType kAllDTypes[] = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                            DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// The address range of the mapping of `path` in this process (/proc/self/maps), or {0, 0}.
std::pair<uintptr_t, uintptr_t> mapping_of(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const std::string canonical = fs::canonical(path).string();
  while (std::getline(maps, line)) {
    if (line.size() < canonical.size() || line.compare(line.size() - canonical.size(), canonical.size(), canonical)) {
      continue;
    }
    std::istringstream in(line);
    std::string range;
    in >> range;
    const size_t dash = range.find('-');
    return {std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16)};
  }
  return {0, 0};
}

// doctest::Contains of a std::string (it takes C strings).
doctest::Contains contains(const std::string& text) { return doctest::Contains(text.c_str()); }

bool inside(const Tensor& t, std::pair<uintptr_t, uintptr_t> range) {
  const auto p = reinterpret_cast<uintptr_t>(t.data_ptr());
  return p >= range.first && p < range.second;
}

}  // namespace

TEST_CASE("safetensors: every dtype round trips, 0-d and zero-size shapes included") {
  TempDir dir;
  manual_seed(7);
  std::map<std::string, Tensor> tensors;
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 3}, {2, 0, 4}, {1, 2, 3, 2}};
  for (DType dtype : kAllDTypes) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      Tensor t = (randn(shapes[s]) * 50).to(dtype);
      tensors.emplace(fmt::format("{}.{}", name(dtype), s), t);
    }
  }
  const std::string path = dir.file("all.safetensors");
  nn::save(path, tensors);
  CHECK_FALSE(fs::exists(path + ".partial"));
  nn::Loaded loaded = nn::load(path);
  CHECK(loaded.metadata.empty());
  REQUIRE(loaded.tensors.size() == tensors.size());
  for (const auto& [key, t] : tensors) {
    CAPTURE(key);
    REQUIRE(loaded.tensors.count(key) == 1);
    check_same(loaded.tensors.at(key), t);
    CHECK(loaded.tensors.at(key).device().is_cpu());
  }
  // Every view is aligned to its element size: the reference's layout puts wider dtypes first.
  for (const auto& [key, t] : loaded.tensors) {
    CAPTURE(key);
    CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % t.element_size() == 0);
  }
}

TEST_CASE("safetensors: non-contiguous inputs are written C-contiguous") {
  TempDir dir;
  Tensor base = arange(24, TensorOptions().dtype(DType::Float32)).reshape({4, 6});
  std::map<std::string, Tensor> tensors = {
      {"transposed", base.t()},
      {"strided", base.slice(1, 1, 6, 2)},
      {"offset", base.narrow(0, 2, 2).to(DType::Int64)},
      {"expanded", tensor({1.5, 2.5}).expand({3, 2})},
  };
  const std::string path = dir.file("views.safetensors");
  nn::save(path, tensors);
  nn::Loaded loaded = nn::load(path);
  for (const auto& [key, t] : tensors) {
    CAPTURE(key);
    CHECK(loaded.tensors.at(key).is_contiguous());
    check_same(loaded.tensors.at(key), t);
  }
}

TEST_CASE("safetensors: metadata round trips, escapes and UTF-8 included") {
  TempDir dir;
  const std::map<std::string, std::string> metadata = {
      {"format", "pt"}, {"quote\"back\\slash", "line\nbreak\ttab"}, {"utf8", "\xc3\xa9t\xc3\xa9"}, {"empty", ""}};
  const std::string path = dir.file("meta.safetensors");
  nn::save(path, {{"x", tensor({1, 2, 3})}}, metadata);
  nn::Loaded loaded = nn::load(path);
  CHECK(loaded.metadata == metadata);
  check_same(loaded.tensors.at("x"), tensor({1, 2, 3}));
  // No tensors at all is a file too.
  nn::save(path, {}, {{"only", "metadata"}});
  loaded = nn::load(path);
  CHECK(loaded.tensors.empty());
  CHECK(loaded.metadata.at("only") == "metadata");
}

TEST_CASE("safetensors: the bytes of a small file, header text exact") {
  TempDir dir;
  const std::string path = dir.file("small.safetensors");
  nn::save(path, {{"a", tensor({1.0f, 2.0f})}}, {{"k", "v"}});
  // 79 bytes of JSON and 1 space of padding: 8 + 80 is a multiple of 8.
  const std::string header = R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} )";
  const std::string data("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);  // 1.0f and 2.0f, little-endian
  const std::string expected = std::string("\x50\0\0\0\0\0\0\0", 8) + header + data;
  CHECK(read_file(path) == expected);
}

// A file as the reference implementation writes it, bytes typed in by hand: Python's
//   safetensors.torch.save_file({"weight": torch.tensor([[1., 2.], [3., 4.]]),
//                                "bias": torch.tensor([0.5], dtype=torch.float16)},
//                               path, metadata={"format": "pt"})
// lays out the F32 tensor before the F16 one (wider dtypes first), metadata first in the JSON.
TEST_CASE("safetensors: a file of the reference writer loads, and saving gives its bytes back") {
  TempDir dir;
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("bias":{"dtype":"F16","shape":[1],"data_offsets":[16,18]}} )";
  const std::string data =
      std::string("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40", 16) + std::string("\x00\x38", 2);
  const std::string golden = file_bytes(header, data);
  REQUIRE(golden.substr(0, 8) == std::string("\x98\0\0\0\0\0\0\0", 8));
  const std::string path = dir.file("golden.safetensors");
  write_file(path, golden);
  nn::Loaded loaded = nn::load(path);
  CHECK(loaded.metadata == std::map<std::string, std::string>{{"format", "pt"}});
  check_same(loaded.tensors.at("weight"), tensor({{1.0f, 2.0f}, {3.0f, 4.0f}}));
  check_same(loaded.tensors.at("bias"), tensor({0.5}).to(DType::Float16));

  const std::string again = dir.file("again.safetensors");
  nn::save(again, loaded.tensors, loaded.metadata);
  CHECK(read_file(again) == golden);
}

TEST_CASE("safetensors: a CPU load is a view of the file mapping, and writes do not reach the file") {
  TempDir dir;
  const std::string path = dir.file("mapped.safetensors");
  nn::save(path, {{"w", arange(8, TensorOptions().dtype(DType::Float32))}, {"i", tensor({7, 8})}});
  const std::string before = read_file(path);
  {
    nn::Loaded loaded = nn::load(path);
    const auto range = mapping_of(path);
    REQUIRE(range.second > range.first);
    CHECK(inside(loaded.tensors.at("w"), range));
    CHECK(inside(loaded.tensors.at("i"), range));
    loaded.tensors.at("w").fill_(-1.0);
    CHECK(loaded.tensors.at("w")[3].item().to<double>() == -1.0);
    CHECK(read_file(path) == before);
    // A view kept past the Loaded keeps the mapping alive.
    Tensor kept = loaded.tensors.at("i");
    loaded = {};
    CHECK(mapping_of(path).second > 0);
    CHECK(kept[1].item().to<int64_t>() == 8);
  }
  CHECK(mapping_of(path).second == 0);  // the last view gone, the file is unmapped
  check_same(nn::load(path).tensors.at("w"), arange(8, TensorOptions().dtype(DType::Float32)));
}

TEST_CASE("safetensors: a tensor not aligned to its element size is copied, not viewed") {
  TempDir dir;
  // Another writer's layout: one U8 byte, then an F32 at data offset 1. The header (88 bytes with
  // the length) keeps the data at a multiple of 8 in the file.
  std::string header = R"({"u":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"f":{"dtype":"F32","shape":[1],)"
                       R"("data_offsets":[1,5]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  const std::string path = dir.file("unaligned.safetensors");
  write_file(path, file_bytes(header, std::string("\x09\x00\x00\xc0\x3f", 5)));
  nn::Loaded loaded = nn::load(path);
  const auto range = mapping_of(path);
  CHECK(inside(loaded.tensors.at("u"), range));
  CHECK_FALSE(inside(loaded.tensors.at("f"), range));
  CHECK(loaded.tensors.at("f").item().to<double>() == 1.5);
  CHECK(loaded.tensors.at("u").item().to<int64_t>() == 9);
}

TEST_CASE("safetensors: load_bytes copies") {
  const std::string bytes = file_bytes(R"({"x":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})",
                                       std::string("\x01\0\0\0\xfe\xff\xff\xff", 8));
  nn::Loaded loaded = nn::load_bytes(bytes.data(), bytes.size());
  check_same(loaded.tensors.at("x"), tensor({1, -2}).to(DType::Int32));
  const auto p = reinterpret_cast<uintptr_t>(loaded.tensors.at("x").data_ptr());
  CHECK(
      (p < reinterpret_cast<uintptr_t>(bytes.data()) || p >= reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size()));
}

TEST_CASE("safetensors: save refuses what the format cannot hold") {
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  CHECK_THROWS_WITH_AS(nn::save(path, {{"__metadata__", tensor({1})}}),
                       doctest::Contains("\"__metadata__\" cannot name a tensor"), ValueError);
  CHECK_THROWS_WITH_AS(nn::save(path, {{"x", Tensor()}}), doctest::Contains("tensor 'x' is undefined"), ValueError);
  CHECK_THROWS_WITH_AS(nn::save(path, {{"bad\xff", tensor({1})}}),
                       doctest::Contains("tensor name \"bad\xff\" is not valid UTF-8"), ValueError);
  CHECK_THROWS_WITH_AS(nn::save(path, {}, {{"k", "\xc3"}}), doctest::Contains("metadata value"), ValueError);
  const std::string missing = dir.file("no/such/folder/x.safetensors");
  CHECK_THROWS_WITH_AS(nn::save(missing, {{"x", tensor({1})}}), contains("save: cannot create '" + missing),
                       ValueError);
  CHECK_FALSE(fs::exists(path));
  CHECK_FALSE(fs::exists(path + ".partial"));
}

TEST_CASE("safetensors: a nonexistent or too short file names the path") {
  TempDir dir;
  const std::string missing = dir.file("missing.safetensors");
  CHECK_THROWS_WITH_AS(nn::load(missing), contains("load: cannot open '" + missing + "'"), ValueError);
  const std::string short_file = dir.file("short.safetensors");
  write_file(short_file, "abc");
  CHECK_THROWS_WITH_AS(nn::load(short_file),
                       contains("load: '" + short_file + "': the file is 3 bytes, shorter than the 8-byte"),
                       ValueError);
  write_file(short_file, "");
  CHECK_THROWS_WITH_AS(nn::load(short_file), doctest::Contains("the file is 0 bytes"), ValueError);
  CHECK_THROWS_WITH_AS(nn::load(dir.path.string()), doctest::Contains("is not a regular file"), ValueError);
}

TEST_CASE("safetensors: a malformed header is a ValueError naming the file and the field") {
  TempDir dir;
  struct Case {
    const char* what;
    std::string bytes;
    std::string message;
  };
  const std::string f4 = std::string("\0\0\0\0", 4);
  const auto one = [](const std::string& entry) { return "{\"t\":" + entry + "}"; };
  std::string huge(8, '\0');
  huge[4] = 1;  // 2^32
  const std::vector<Case> cases = {
      {"header past the end", file_bytes("{}").substr(0, 9), "the header length 2 runs past the end of the file (9"},
      {"absurd header length", huge + "{}", "the header length 4294967296 is larger than the 100000000 byte limit"},
      {"invalid JSON", file_bytes("{\"t\":"), "the header is not valid JSON"},
      {"invalid UTF-8", file_bytes("{\"\xff\":1}"), "the header is not valid JSON"},
      {"not an object", file_bytes("[1, 2]"), "the header is not a JSON object (it is array)"},
      {"entry not an object", file_bytes(one("3")), "tensor 't' is not a JSON object (it is number)"},
      {"no dtype", file_bytes(one(R"({"shape":[],"data_offsets":[0,4]})"), f4), "tensor 't' has no \"dtype\""},
      {"dtype not a string", file_bytes(one(R"({"dtype":5,"shape":[],"data_offsets":[0,4]})"), f4),
       "tensor 't': dtype is not a string"},
      {"unknown dtype", file_bytes(one(R"({"dtype":"F8_E4M3","shape":[],"data_offsets":[0,4]})"), f4),
       "tensor 't': unknown dtype \"F8_E4M3\""},
      {"no shape", file_bytes(one(R"({"dtype":"F32","data_offsets":[0,4]})"), f4), "tensor 't' has no \"shape\""},
      {"shape not an array", file_bytes(one(R"({"dtype":"F32","shape":4,"data_offsets":[0,4]})"), f4),
       "tensor 't': shape is not an array"},
      {"negative shape", file_bytes(one(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})"), f4),
       "tensor 't': shape[0] is negative (-1)"},
      {"fractional shape", file_bytes(one(R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,4]})"), f4),
       "tensor 't': shape[0] is not a non-negative integer (it is 1.5)"},
      {"shape past int64", file_bytes(one(R"({"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,4]})"), f4),
       "tensor 't': shape[0] (9223372036854775808) is too large"},
      {"overflowing elements",
       file_bytes(one(R"({"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]})")),
       "tensor 't': shape [4294967296,4294967296,0] overflows a 64-bit element count"},
      {"overflowing bytes", file_bytes(one(R"({"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,8]})")),
       "tensor 't': shape [4611686018427387904] overflows a 64-bit byte count"},
      {"no data_offsets", file_bytes(one(R"({"dtype":"F32","shape":[]})"), f4), "tensor 't' has no \"data_offsets\""},
      {"data_offsets of three", file_bytes(one(R"({"dtype":"F32","shape":[],"data_offsets":[0,4,4]})"), f4),
       "tensor 't': data_offsets is not an array [begin, end] (it is [0,4,4])"},
      {"data_offsets reversed", file_bytes(one(R"({"dtype":"F32","shape":[],"data_offsets":[4,0]})"), f4),
       "tensor 't': data_offsets [4, 0] end before they begin"},
      {"data_offsets against shape", file_bytes(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,4]})"), f4),
       "tensor 't': data_offsets [0, 4] hold 4 bytes, but shape [2] of F32 needs 8"},
      {"data_offsets past the end", file_bytes(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), f4),
       "tensor 't': data_offsets [0, 8] run past the end of the data (4 bytes)"},
      {"overlap",
       file_bytes(
           R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
           std::string(6, '\0')),
       "tensor 'b': data_offsets [2, 6] overlap tensor 'a''s [0, 4]"},
      {"gap",
       file_bytes(
           R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})",
           std::string(6, '\0')),
       "bytes [2, 4) of the data belong to no tensor"},
      {"trailing bytes", file_bytes(one(R"({"dtype":"U8","shape":[2],"data_offsets":[0,2]})"), f4),
       "the tensors' data_offsets cover 2 bytes, but the data after the header is 4 bytes"},
      {"duplicate names",
       file_bytes(
           R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})"),
       "the key \"a\" appears twice in the header"},
      {"duplicate field", file_bytes(one(R"({"dtype":"U8","dtype":"F32","shape":[0],"data_offsets":[0,0]})")),
       "the key \"dtype\" appears twice in one object of the header"},
      {"metadata not an object", file_bytes(R"({"__metadata__":["a"]})"),
       "__metadata__ is not a JSON object (it is array)"},
      {"metadata not a string", file_bytes(R"({"__metadata__":{"epoch":3}})"),
       "__metadata__[\"epoch\"] is not a string (it is 3)"},
      {"nested too deep", file_bytes(one(R"({"dtype":"U8","shape":[[0]],"data_offsets":[0,0]})")),
       "the header nests deeper than 3 levels"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK_THROWS_WITH_AS(nn::load_bytes(c.bytes.data(), c.bytes.size()), contains("load: '<bytes>': " + c.message),
                         ValueError);
    // Through a file, the error names the file.
    const std::string path = dir.file("case.safetensors");
    write_file(path, c.bytes);
    CHECK_THROWS_WITH_AS(nn::load(path), contains("load: '" + path + "': " + c.message), ValueError);
  }
}

TEST_CASE("safetensors: a shape of more than 64 dims is refused") {
  std::string dims = "1";
  for (int i = 1; i < 65; ++i) dims += ",1";
  const std::string bytes =
      file_bytes(R"({"t":{"dtype":"U8","shape":[)" + dims + R"(],"data_offsets":[0,1]}})", std::string(1, '\0'));
  CHECK_THROWS_WITH_AS(nn::load_bytes(bytes.data(), bytes.size(), kCPU, "deep.safetensors"),
                       doctest::Contains("load: 'deep.safetensors': tensor 't': shape has 65 dims, more than 64"),
                       ValueError);
}

TEST_CASE("safetensors: header spellings the reference reads") {
  // Whitespace around the JSON, an entry's unknown field (ignored), -0 as a shape entry, and an
  // empty __metadata__.
  const std::string bytes =
      file_bytes(R"(  {"__metadata__":{}, "x": {"dtype":"U8", "shape":[-0, 2], "data_offsets":[0,0], "extra":[1]},)"
                 R"( "y": {"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}    )",
                 std::string("\x01\x00", 2));
  nn::Loaded loaded = nn::load_bytes(bytes.data(), bytes.size());
  CHECK(loaded.metadata.empty());
  CHECK(loaded.tensors.at("x").sizes() == IntArrayRef{0, 2});
  check_same(loaded.tensors.at("y"), tensor({true, false}));
}

TEST_CASE("safetensors: a module and an optimizer through a checkpoint") {
  anatomy::manual_seed(1);
  anatomy::nn::Linear a(3, 2), b(3, 2);
  const std::string path = "test_module_checkpoint.safetensors";
  a.save(path, {{"format", "pt"}});
  CHECK_FALSE(anatomy::allclose(a.forward(anatomy::ones({1, 3})), b.forward(anatomy::ones({1, 3}))));
  const anatomy::nn::LoadResult r = b.load(path);
  CHECK(r.missing_keys.empty());
  CHECK(anatomy::allclose(a.forward(anatomy::ones({1, 3})), b.forward(anatomy::ones({1, 3}))));
  // An optimizer's state round trips too.
  anatomy::optim::AdamW opt(a.parameters(), {.lr = 0.1});
  a.forward(anatomy::ones({1, 3})).sum().backward();
  opt.step();
  anatomy::nn::save(path, opt.state_dict());
  anatomy::optim::AdamW fresh(b.parameters(), {.lr = 0.5});
  fresh.load_state_dict(anatomy::nn::load(path).tensors);
  CHECK(fresh.lr() == 0.1);
  std::remove(path.c_str());
}
