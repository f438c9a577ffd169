// What the tests of docs/architecture.md read from the page and from the calls it describes: the
// page's text, one of its fenced blocks, and a call's dispatch trace. Shared by the CPU test
// (tests/docs/test_architecture_doc.cpp) and the GPU one (tests/gpu/test_cuda_architecture_doc.cpp),
// whose files are compiled with ANATOMY_SOURCE_DIR.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "anatomy/anatomy.h"

namespace doc_blocks {

inline std::string architecture_doc() {
  std::ifstream in(ANATOMY_SOURCE_DIR "/docs/architecture.md");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fenced block of the page whose first line starts with `first_line`; empty when none does.
inline std::string block_starting_with(const std::string& doc, const std::string& first_line) {
  const size_t at = doc.find("```\n" + first_line);
  if (at == std::string::npos) return "";
  const size_t begin = at + 4;
  return doc.substr(begin, doc.find("```", begin) - begin);
}

inline std::string trace_of(const std::function<void()>& call,
                            anatomy::dispatch::TraceDetail detail = anatomy::dispatch::TraceDetail::Kernels) {
  anatomy::dispatch::TraceCapture capture(detail);
  call();
  return capture.text();
}

}  // namespace doc_blocks
