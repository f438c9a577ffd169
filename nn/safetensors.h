// Checkpoints in the safetensors format (docs/nn.md, "Checkpoints"): a name-to-tensor map and a
// string-to-string metadata map in one file that PyTorch's `safetensors` package reads and
// writes. The file is an 8-byte little-endian header length N, N bytes of JSON naming each
// tensor's dtype, shape and byte range, then the tensors' raw little-endian bytes, C-contiguous.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "anatomy/anatomy.h"

namespace anatomy::nn {

// Writes `tensors` (of any device, layout and the dtypes the format has: every anatomy dtype) and
// `metadata` to `path`. The bytes go to path + ".partial" first, which is renamed over `path`
// once complete, so a reader never sees half a checkpoint. Tensors are laid out as the reference
// writer lays them out (widest dtype first, then by name), so each one starts at a multiple of
// its element size, and the header is padded with spaces to a multiple of 8 bytes.
void save(const std::string& path, const std::map<std::string, Tensor>& tensors,
          const std::map<std::string, std::string>& metadata = {});

struct Loaded {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Reads a safetensors file. The file is memory-mapped privately (copy-on-write): for `kCPU` each
// tensor is a view of the mapping, with no copy, that keeps the mapping alive as long as any view
// of it lives. Writing into such a tensor changes this process's pages only, never the file. A
// tensor whose bytes do not start at a multiple of its element size (files from other writers)
// is copied into fresh memory instead. For a CUDA device every tensor is copied to the device and
// the mapping is released before load returns. A malformed file is a ValueError that names the
// file and the field; the file must not be truncated by another process while views of it live.
Loaded load(const std::string& path, Device device = kCPU);

// The same reader over `size` bytes in memory, every tensor copied (the bytes are not kept);
// `name` stands for the file in error messages. The fuzz target drives this.
Loaded load_bytes(const void* data, size_t size, Device device = kCPU, const std::string& name = "<bytes>");

}  // namespace anatomy::nn
