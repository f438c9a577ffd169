// The training text: its bytes, the vocabulary (the distinct bytes, in byte order) and random
// windows of it as batches.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"

namespace char_gpt {

class TextData {
 public:
  // The file's bytes; std::nullopt with `error` set if it is not a readable file or holds fewer
  // than 2 bytes.
  static std::optional<TextData> read(const std::string& path, std::string& error);
  explicit TextData(std::string text);

  const std::string& text() const { return text_; }
  int64_t vocab_size() const { return static_cast<int64_t>(chars_.size()); }
  // The vocabulary's bytes in order, as one string (what a checkpoint records).
  const std::string& chars() const { return chars_; }
  // The index of each byte of s; the first byte that is not in the vocabulary if one is not.
  std::optional<char> first_unknown(const std::string& s) const;
  std::vector<int64_t> encode(const std::string& s) const;
  char decode(int64_t id) const { return chars_[static_cast<size_t>(id)]; }

  // `batch` windows of seq + 1 consecutive characters, their starts drawn uniformly with randint
  // from the CPU generator: inputs [batch, seq] and targets (the next characters) on `device`.
  struct Batch {
    anatomy::Tensor inputs, targets;
  };
  Batch sample(int64_t batch, int64_t seq, anatomy::Device device) const;

 private:
  std::string text_;
  std::string chars_;
  int index_[256];
  anatomy::Tensor ids_;  // the text's ids, int64 on the CPU
};

}  // namespace char_gpt
