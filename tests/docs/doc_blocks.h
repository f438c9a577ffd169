// What the tests of docs/architecture.md read from the page and from the calls it describes: the
// page's text, one of its fenced blocks, its tables of steps, a call's dispatch trace and the
// path a call takes (core/call_path.h). Shared by the CPU test
// (tests/docs/test_architecture_doc.cpp) and the GPU one (tests/gpu/test_cuda_architecture_doc.cpp),
// whose files are compiled with ANATOMY_SOURCE_DIR and ANATOMY_BINARY_DIR.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

// One row of a table of steps: the step's number and the file that defines it.
struct PathRow {
  int step;
  std::string file;
};

// The tables of steps in the section under `heading` (up to the next heading), in the page's
// order; a table is a run of rows `| N | `file` | ... |`.
inline std::vector<std::vector<PathRow>> path_tables(const std::string& doc, const std::string& heading) {
  const size_t begin = doc.find(heading + "\n");
  REQUIRE(begin != std::string::npos);
  const size_t end = doc.find("\n#", begin + heading.size());
  std::istringstream section(doc.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
  const std::regex row(R"(^\| (\d+) \| `([^`]+)` \|.*)");
  std::vector<std::vector<PathRow>> tables;
  bool in_table = false;
  for (std::string line; std::getline(section, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) {
      in_table = false;
      continue;
    }
    if (!in_table) tables.emplace_back();
    in_table = true;
    tables.back().push_back({std::stoi(m[1]), m[2]});
  }
  return tables;
}

// A file as the page names it: relative to the source root (a header included through the build
// tree's include/anatomy link is named by its path under that link). __FILE__ is absolute, or,
// where ccache rewrote the command line (CCACHE_BASEDIR, scripts/build.sh), relative to the build
// directory the compiler ran in.
inline std::string source_relative(const std::string& file) {
  std::filesystem::path path(file);
  if (path.is_relative()) path = std::filesystem::path(ANATOMY_BINARY_DIR) / path;
  const std::string normal = path.lexically_normal().generic_string();
  const std::string link = "/include/anatomy/";
  if (const size_t at = normal.rfind(link); at != std::string::npos) return normal.substr(at + link.size());
  const std::string root = std::filesystem::path(ANATOMY_SOURCE_DIR "/").lexically_normal().generic_string();
  return normal.rfind(root, 0) == 0 ? normal.substr(root.size()) : normal;
}

// The files of the steps `call` takes, in order, a step that stays in the file of the one before
// it folded into it. The dispatch trace is on too: the dispatcher marks its step in its traced
// branch (Note [Recording the path of a call]).
inline std::string recorded_path(const std::function<void()>& call) {
  anatomy::dispatch::TraceCapture trace;
  anatomy::CallPathRecorder recorder;
  call();
  std::string path;
  std::string last;
  for (const anatomy::CallPathStep& step : recorder.steps()) {
    const std::string file = source_relative(step.file);
    if (file == last) continue;
    path += (path.empty() ? "" : " -> ") + file;
    last = file;
  }
  return path;
}

inline std::string path_of(const std::vector<PathRow>& rows) {
  std::string path;
  for (const PathRow& r : rows) path += (path.empty() ? "" : " -> ") + r.file;
  return path;
}

// A file keeps its step number wherever it comes back, the numbers are 1..N for N files, and N
// is at most `most`.
inline void check_step_numbers(const std::vector<PathRow>& rows, int most) {
  std::map<std::string, int> number_of;
  std::set<int> numbers;
  for (const PathRow& r : rows) {
    INFO("step ", r.step, ", ", r.file);
    const auto [it, first] = number_of.emplace(r.file, r.step);
    CHECK(it->second == r.step);
    if (first) CHECK(numbers.insert(r.step).second);
  }
  CHECK(static_cast<int>(numbers.size()) == static_cast<int>(number_of.size()));
  CHECK(*numbers.begin() == 1);
  CHECK(*numbers.rbegin() == static_cast<int>(numbers.size()));
  CHECK(static_cast<int>(numbers.size()) <= most);
}

}  // namespace doc_blocks
