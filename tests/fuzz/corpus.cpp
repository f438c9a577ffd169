// Replaying the corpus of past findings (driver.h), and running one case from the command
// line. Each corpus line runs in a child process, so a line that crashes or trips a sanitizer
// is reported as that line's failure and the lines after it still run.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "driver.h"
#include "fixtures.h"
#include "runner.h"
#include "supervisor.h"

namespace anatomy_fuzz {
namespace {

int replay(const std::string& line, const std::string& where, bool verbose) {
  try {
    Case c = parse_case(line);
    Outcome o = run_case(c);
    if (o.status == Outcome::Status::Finding) {
      fmt::print("FAIL {}: {}\n     [{}] call {} ({}): {}\n", where, line, o.kind, o.call,
                 o.call < c.calls.size() ? c.calls[o.call].op->name : "?", o.what);
      return kFindings;
    }
    if (verbose) {
      fmt::print("ok   {}: {}\n     {}\n", where, line,
                 o.status == Outcome::Status::Error ? "typed error: " + o.what : "ok");
    }
    return 0;
  } catch (const ParseError& e) {
    fmt::print("FAIL {}: {}\n     [bad line] {}\n", where, line, e.message);
  } catch (const BadCase& e) {
    fmt::print("FAIL {}: {}\n     [bad line] {}\n", where, line, e.message);
  } catch (const std::exception& e) {
    fmt::print("FAIL {}: {}\n     [check threw] {}: {}\n", where, line, current_exception_type(), e.what());
    return kFindings;
  }
  return kBadInput;
}

bool blank(const std::string& line) {
  const std::string body = line.substr(0, line.find('#'));
  return body.find_first_not_of(" \t\r") == std::string::npos;
}

}  // namespace

int run_corpus(const std::string& path, unsigned case_timeout, bool verbose) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "anatomy_fuzz: cannot read the corpus {}\n", path);
    return 2;
  }
  int cases = 0, failed = 0;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (blank(line)) continue;
    ++cases;
    const std::string where = fmt::format("{}:{}", path, number);
    ChildEnd end = run_supervised([&] {
      set_progress(0, static_cast<uint64_t>(number), "", line);
      case_time_limit(case_timeout);
      return replay(line, where, verbose);
    });
    if (end.crashed) {
      fmt::print("{}FAIL {}: {}\n     [crash] {}: {}\n", end.report, where, line, end.how, end.where);
    } else {
      std::fputs(end.report.c_str(), stderr);
    }
    if (end.crashed || end.status != kClean) ++failed;
  }
  fmt::print("anatomy_fuzz: corpus {}: {} cases, {} passed, {} failed\n", path, cases, cases - failed, failed);
  return failed ? 1 : 0;
}

int run_one(const std::string& line) { return replay(line, "--case", /*verbose=*/true) == kClean ? 0 : 1; }

}  // namespace anatomy_fuzz
