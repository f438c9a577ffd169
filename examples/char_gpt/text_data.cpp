// See text_data.h.
#include "anatomy/examples/char_gpt/text_data.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace char_gpt {

using anatomy::DType;
using anatomy::Tensor;
using anatomy::TensorOptions;

std::optional<TextData> TextData::read(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!std::filesystem::is_regular_file(path) || !in) {
    error = "'" + path + "' is not a readable file";
    return std::nullopt;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (bytes.str().size() < 2) {
    error = "the data file '" + path + "' holds fewer than 2 characters";
    return std::nullopt;
  }
  return TextData(bytes.str());
}

TextData::TextData(std::string text) : text_(std::move(text)) {
  bool seen[256] = {};
  for (char c : text_) seen[static_cast<unsigned char>(c)] = true;
  for (int b = 0; b < 256; ++b) {
    index_[b] = -1;
    if (seen[b]) {
      index_[b] = static_cast<int>(chars_.size());
      chars_.push_back(static_cast<char>(b));
    }
  }
  const std::vector<int64_t> ids = encode(text_);
  ids_ = anatomy::tensor(ids, {static_cast<int64_t>(ids.size())}, TensorOptions().dtype(DType::Int64));
}

std::optional<char> TextData::first_unknown(const std::string& s) const {
  for (char c : s) {
    if (index_[static_cast<unsigned char>(c)] < 0) return c;
  }
  return std::nullopt;
}

std::vector<int64_t> TextData::encode(const std::string& s) const {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (char c : s) out.push_back(index_[static_cast<unsigned char>(c)]);
  return out;
}

TextData::Batch TextData::sample(int64_t batch, int64_t seq, anatomy::Device device) const {
  const int64_t n = static_cast<int64_t>(text_.size());
  ANATOMY_CHECK(seq + 1 <= n, ValueError, "TextData::sample: windows of {} characters from a text of {}", seq + 1, n);
  const TensorOptions ids = TensorOptions().dtype(DType::Int64);
  const Tensor starts = anatomy::randint(0, n - seq, {batch, 1}, ids);
  const Tensor window = starts + anatomy::arange(seq + 1, ids);  // [batch, seq + 1]
  const Tensor chars = anatomy::index_select(ids_, 0, window.flatten()).view({batch, seq + 1}).to(device);
  return {chars.narrow(1, 0, seq), chars.narrow(1, 1, seq)};
}

}  // namespace char_gpt
