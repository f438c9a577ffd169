// libFuzzer target over safetensors loading (docs/fuzzing.md, "safetensors loading: a libFuzzer
// target"). Each input is a whole file: it is read by nn::load_bytes from a heap copy of exactly
// its size (so ASan sees any read past it), and by nn::load from a file of the same bytes (the
// memory-mapped reader). Built with clang's libFuzzer, AddressSanitizer and
// UndefinedBehaviorSanitizer, with nn/'s safetensors sources compiled in (so the reader is
// instrumented too), against the library.
//
// A load must either succeed, both readers alike, with every tensor's bytes equal to the bytes
// its header entry names in the input (its dtype, shape and offsets read again by the header
// parser); or both must throw an anatomy::Error other than InternalError, with the same message
// but for the file's name
// at its start. Anything else aborts: libFuzzer reports it with the input.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/nn/safetensors.h"
#include "anatomy/nn/safetensors_header.h"

namespace {

using namespace anatomy;

[[noreturn]] void finding(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz_safetensors: FINDING: %s %s\n", what, detail.c_str());
  std::abort();
}

// One file per process, written for each input and removed once read, so that nothing stays in
// /tmp however the run ends (an exit handler registered while this path was being built ran
// after the path's destructor, and the files stayed).
const std::string& scratch_path() {
  static const std::string path = "/tmp/fuzz_safetensors_" + std::to_string(::getpid()) + ".safetensors";
  return path;
}

void write_scratch(const uint8_t* data, size_t size) {
  FILE* f = std::fopen(scratch_path().c_str(), "wb");
  if (!f) finding("cannot write the scratch file", scratch_path());
  if (size > 0 && std::fwrite(data, 1, size, f) != size) finding("cannot write the scratch file", scratch_path());
  std::fclose(f);
}

// The outcome of one reader: the tensors, or the error's message with the file's name taken out.
struct Outcome {
  bool ok = false;
  nn::Loaded loaded;
  std::string error;
};

template <typename Load>
Outcome attempt(Load load, const std::string& name) {
  Outcome out;
  try {
    out.loaded = load();
    out.ok = true;
  } catch (const InternalError& e) {
    finding("an InternalError", e.what());
  } catch (const Error& e) {
    out.error = e.what();
    const std::string prefix = "load: '" + name + "'";
    if (out.error.rfind(prefix, 0) == 0) out.error.replace(0, prefix.size(), "load: <file>");
  } catch (const std::exception& e) {
    finding("an exception that is not an anatomy::Error", e.what());
  }
  return out;
}

// Every tensor holds the bytes its entry names, with the entry's dtype and shape.
void check_tensors(const nn::Loaded& loaded, const uint8_t* data, size_t size) {
  const auto header = nn::safetensors::parse_header(data, size, "<input>");
  if (loaded.tensors.size() != header.entries.size()) finding("a tensor count differs from the header's");
  for (const auto& e : header.entries) {
    auto it = loaded.tensors.find(e.name);
    if (it == loaded.tensors.end()) finding("a header entry has no tensor", e.name);
    const Tensor& t = it->second;
    if (t.dtype() != e.dtype || !t.is_contiguous()) finding("a tensor's dtype or layout is wrong", e.name);
    if (std::vector<int64_t>(t.sizes().begin(), t.sizes().end()) != e.shape)
      finding("a tensor's shape is wrong", e.name);
    if (t.nbytes() != e.end - e.begin) finding("a tensor's size is wrong", e.name);
    if (t.nbytes() > 0 && std::memcmp(t.data_ptr(), data + header.data_start + e.begin, t.nbytes()) != 0) {
      finding("a tensor's bytes differ from the file's", e.name);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A heap copy of exactly `size` bytes: libFuzzer's own buffer may have slack past the end.
  std::vector<uint8_t> copy(data, data + size);
  const uint8_t* bytes = copy.empty() ? nullptr : copy.data();
  const Outcome from_bytes = attempt([&] { return nn::load_bytes(bytes, size, kCPU, "<input>"); }, "<input>");
  write_scratch(data, size);
  Outcome from_file = attempt([&] { return nn::load(scratch_path()); }, scratch_path());
  ::unlink(scratch_path().c_str());  // a loaded file's tensors keep their mapping
  if (from_bytes.ok != from_file.ok) {
    finding("load and load_bytes disagree", from_bytes.ok ? from_file.error : from_bytes.error);
  }
  if (!from_bytes.ok) {
    if (from_bytes.error != from_file.error)
      finding("the readers' errors differ", from_bytes.error + " | " + from_file.error);
    return 0;
  }
  check_tensors(from_bytes.loaded, bytes, size);
  check_tensors(from_file.loaded, bytes, size);
  if (from_bytes.loaded.metadata != from_file.loaded.metadata) finding("the readers' metadata differ");
  return 0;
}
