// Internal to optim/: included by the room's own files only (its launcher header is launch.h).
// How the multi-tensor kernels (fused_adam.cu, foreach_norm.cu, foreach_mul.cu) split a list of
// tensors into launches: PyTorch's multi_tensor_apply scheme. A launch carries, in its kernel
// parameters (at most 4 KB), a table of up to kTensors tensors and, for each of up to kBlocks
// blocks, which tensor of the table and which chunk of it the block takes. A list of 100 tensors
// is then a few launches instead of one or more per tensor. Host code, compiled by nvcc.
#pragma once

#include <cstdint>
#include <vector>

namespace anatomy::cuda {

// Which tensor of the launch's table, and which chunk of it, each block takes.
template <int kTensors, int kBlocks>
struct BlockMap {
  static_assert(kTensors <= 256, "tensor_of_block is one byte");
  uint8_t tensor_of_block[kBlocks];
  int32_t chunk_of_block[kBlocks];
};

// Walks the chunks of `chunk` elements of tensors of numels[0], numels[1], ... in order (empty
// tensors take none), filling `map`. enter(slot, i): tensor i takes the table's slot `slot`.
// launch(blocks): the map's first `blocks` blocks are ready; launch them. A launch happens when
// the blocks or the table are full; a tensor whose chunks continue past a launch enters the next
// table again, as its slot 0. Blocks are numbered in launch order: the k-th chunk overall is
// block k minus the blocks of the launches before.
template <int kTensors, int kBlocks, typename Enter, typename Launch>
void plan_multi_tensor_launches(const std::vector<int64_t>& numels, int64_t chunk, BlockMap<kTensors, kBlocks>& map,
                                Enter&& enter, Launch&& launch) {
  int tensors = 0, blocks = 0;
  for (size_t i = 0; i < numels.size(); ++i) {
    const int64_t chunks = (numels[i] + chunk - 1) / chunk;
    for (int64_t c = 0; c < chunks; ++c) {
      if (c == 0) enter(tensors++, i);
      map.tensor_of_block[blocks] = static_cast<uint8_t>(tensors - 1);
      map.chunk_of_block[blocks] = static_cast<int32_t>(c);
      ++blocks;
      const bool table_full = tensors == kTensors && c + 1 == chunks;
      if (blocks == kBlocks || table_full) {
        launch(blocks);
        blocks = 0;
        tensors = 0;
        if (c + 1 < chunks) enter(tensors++, i);
      }
    }
  }
  if (blocks > 0) launch(blocks);
}

// The table of kernels that need only each tensor's elements and count (the multi-tensor norm and
// scale).
template <int kTensors, int kBlocks>
struct DataTable {
  void* data[kTensors];
  int64_t numel[kTensors];
  BlockMap<kTensors, kBlocks> map;
};

// plan_multi_tensor_launches over tensors[i].data and tensors[i].numel, filling `table`.
template <int kTensors, int kBlocks, typename Tensors, typename Launch>
void plan_data_launches(const Tensors& tensors, int64_t chunk, DataTable<kTensors, kBlocks>& table, Launch&& launch) {
  std::vector<int64_t> numels;
  numels.reserve(tensors.size());
  for (const auto& t : tensors) numels.push_back(t.numel);
  plan_multi_tensor_launches(
      numels, chunk, table.map,
      [&](int slot, size_t i) {
        table.data[slot] = tensors[i].data;
        table.numel[slot] = tensors[i].numel;
      },
      launch);
}

}  // namespace anatomy::cuda
