// save and load of safetensors files (nn/safetensors.h): the header through safetensors_header,
// the bytes through POSIX files and a private memory mapping.
#include "anatomy/nn/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "anatomy/nn/safetensors_header.h"

namespace anatomy::nn {

namespace {

using safetensors::Entry;

std::string os_error() { return std::strerror(errno); }

// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now, reporting a failure (a write may only fail at close on some file systems).
  bool close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

// The whole file, mapped copy-on-write; the views load returns share it through a shared_ptr.
class Mapping {
 public:
  Mapping(void* data, size_t size) : data_(data), size_(size) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { ::munmap(data_, size_); }
  uint8_t* data() const { return static_cast<uint8_t*>(data_); }
  size_t size() const { return size_; }

 private:
  void* data_;
  size_t size_;
};

void write_all(int fd, const void* data, size_t size, const std::string& path) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    ANATOMY_CHECK(n > 0, ValueError, "save: cannot write '{}': {}", path, os_error());
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// The tensors of `header`, whose bytes start at `base`. With `keep` (a load of a mapping), each
// tensor whose bytes are aligned to its element size is first a view of them that holds `keep`;
// every other tensor a host copy. For another device the view or copy is then copied there.
Loaded materialize(safetensors::Header header, const uint8_t* base, const std::shared_ptr<Mapping>& keep,
                   Device device) {
  Loaded out;
  out.metadata = std::move(header.metadata);
  for (const Entry& e : header.entries) {
    const uint8_t* bytes = base + e.begin;
    const size_t size = element_size(e.dtype);
    Tensor t;
    if (keep && reinterpret_cast<uintptr_t>(bytes) % size == 0) {
      t = from_blob(const_cast<uint8_t*>(bytes), e.shape, TensorOptions().dtype(e.dtype),
                    [keep](void*) {});  // the view keeps the mapping alive
    } else {
      t = empty(e.shape, TensorOptions().dtype(e.dtype));
      if (e.end > e.begin) std::memcpy(t.data_ptr(), bytes, e.end - e.begin);
    }
    if (!device.is_cpu()) t = t.to(device);
    out.tensors.emplace(e.name, std::move(t));
  }
  return out;
}

}  // namespace

void save(const std::string& path, const std::map<std::string, Tensor>& tensors,
          const std::map<std::string, std::string>& metadata) {
  // The bytes of each tensor, on the host and C-contiguous, laid out in the reference's order.
  std::vector<Entry> entries;
  std::map<std::string, Tensor> host;
  for (const auto& [name, t] : tensors) {
    ANATOMY_CHECK(name != "__metadata__", ValueError, "save: '{}': \"__metadata__\" cannot name a tensor", path);
    ANATOMY_CHECK(t.defined(), ValueError, "save: '{}': tensor '{}' is undefined", path, name);
    Entry e;
    e.name = name;
    e.dtype = t.dtype();
    e.shape.assign(t.sizes().begin(), t.sizes().end());
    entries.push_back(std::move(e));
    host.emplace(name, t.detach().to(kCPU).contiguous());
  }
  std::sort(entries.begin(), entries.end(), safetensors::reference_order);
  uint64_t offset = 0;
  for (Entry& e : entries) {
    e.begin = offset;
    offset += host.at(e.name).nbytes();
    e.end = offset;
  }
  const std::string header = safetensors::format_header(entries, metadata);

  // Written beside the target and renamed over it: a reader sees the old file or the new one.
  const std::string partial = path + ".partial";
  Fd fd(::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  ANATOMY_CHECK(fd.get() >= 0, ValueError, "save: cannot create '{}': {}", partial, os_error());
  try {
    const uint64_t n = header.size();
    write_all(fd.get(), &n, 8, partial);
    write_all(fd.get(), header.data(), header.size(), partial);
    for (const Entry& e : entries) {
      const Tensor& t = host.at(e.name);
      if (t.nbytes() > 0) write_all(fd.get(), t.data_ptr(), t.nbytes(), partial);
    }
    ANATOMY_CHECK(::fsync(fd.get()) == 0, ValueError, "save: cannot flush '{}': {}", partial, os_error());
    ANATOMY_CHECK(fd.close(), ValueError, "save: cannot close '{}': {}", partial, os_error());
    ANATOMY_CHECK(::rename(partial.c_str(), path.c_str()) == 0, ValueError, "save: cannot rename '{}' to '{}': {}",
                  partial, path, os_error());
  } catch (...) {
    ::unlink(partial.c_str());
    throw;
  }
}

Loaded load(const std::string& path, Device device) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ANATOMY_CHECK(fd.get() >= 0, ValueError, "load: cannot open '{}': {}", path, os_error());
  struct stat st {};
  ANATOMY_CHECK(::fstat(fd.get(), &st) == 0, ValueError, "load: cannot stat '{}': {}", path, os_error());
  ANATOMY_CHECK(S_ISREG(st.st_mode), ValueError, "load: '{}' is not a regular file", path);
  const auto size = static_cast<size_t>(st.st_size);
  ANATOMY_CHECK(size >= 8, ValueError, "load: '{}': the file is {} bytes, shorter than the 8-byte header length", path,
                size);
  // Private and writable: a write into a loaded tensor copies the page for this process alone.
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
  ANATOMY_CHECK(data != MAP_FAILED, ValueError, "load: cannot map '{}': {}", path, os_error());
  auto mapping = std::make_shared<Mapping>(data, size);
  safetensors::Header header = safetensors::parse_header(mapping->data(), size, path);
  const uint8_t* base = mapping->data() + header.data_start;
  // For another device the views are copied there, and the mapping goes when this returns.
  return materialize(std::move(header), base, mapping, device);
}

Loaded load_bytes(const void* data, size_t size, Device device, const std::string& name) {
  ANATOMY_CHECK(data != nullptr || size == 0, ValueError, "load: '{}': null data for {} bytes", name, size);
  const auto* bytes = static_cast<const uint8_t*>(data);
  safetensors::Header header = safetensors::parse_header(bytes, size, name);
  const uint8_t* base = bytes + header.data_start;
  return materialize(std::move(header), base, nullptr, device);
}

}  // namespace anatomy::nn
