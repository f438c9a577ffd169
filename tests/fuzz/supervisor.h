// Cases run in a child process, so that a crash, a sanitizer report or a hang is reported with
// the case that caused it: before each case the child writes it to memory it shares with its
// parent, and when the child dies the parent prints what it was running. (The sanitizers' death
// callbacks are no help: GCC links ASan and UBSan as two runtimes, each with its own callback.)
// The child's stderr, where the sanitizers report, goes to a file that the parent reads, so a
// crash seen before is summed up in one line instead of a second report.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace anatomy_fuzz {

// The child's exit statuses. Any other status (ASan and UBSan exit with 1) or a signal is a
// crash.
inline constexpr int kClean = 0;
inline constexpr int kFindings = 10;  // it finished, and printed what it found
inline constexpr int kBadInput = 11;  // a corpus line or a drawn case the fuzzer cannot run

// Counts kept in the shared memory, so that a crash loses none of them.
struct Tally {
  static constexpr size_t kOps = 512, kSeeds = 64;
  uint64_t op_ok[kOps], op_error[kOps];                     // by catalogue index
  uint64_t cases[kSeeds], errors[kSeeds], skipped[kSeeds];  // by seed index
  uint64_t findings;                                        // printed by children (crashes not included)
  uint64_t reported[256];                                   // hashes of the kinds of finding printed
  size_t nreported;
  // Whether `key` is new (then it is remembered): each kind of finding is printed once.
  bool first_time(const std::string& key);
};
Tally& tally();

// Where the child is, read by the parent after the child ends.
struct Progress {
  uint64_t seed_index = 0;
  uint64_t iteration = 0;
  std::string op;       // the operator of the call that ran last
  std::string current;  // a few lines: the case, and how to replay it
};
// In the child: records the case about to run (and the operator of its last call).
void set_progress(uint64_t seed_index, uint64_t iteration, const std::string& op, const std::string& current);
// In the child: the current case may run this many seconds more (0: no limit); past it the
// child is ended by SIGALRM, which the parent reports as a timeout.
void case_time_limit(unsigned seconds);

struct ChildEnd {
  bool crashed = false;  // a signal, a timeout, or a status that is not one of the above
  int status = kClean;   // the child's status when it did not crash
  std::string how;       // "killed by signal 11", "timed out", "exit status 1"
  std::string report;    // what the child wrote to stderr (less ASan's refused-allocation notes)
  std::string where;     // for a crash: the first line of the report that names a source location
  Progress progress;     // as the child last recorded it
};

// Runs `child` (which returns its exit status) in a child process and waits for it.
ChildEnd run_supervised(const std::function<int()>& child);

}  // namespace anatomy_fuzz
