// The fuzzer's three modes: random cases from seeds, replay of a corpus file, one case given on
// the command line. Each returns the process's exit status: 0 when nothing was found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace anatomy_fuzz {

struct RandomOptions {
  std::vector<uint64_t> seeds = {1};
  uint64_t iterations = 0;                 // per seed; 0: no limit but the time
  double seconds = 0;                      // for all seeds together; 0: no limit but iterations
  std::optional<uint64_t> only_iteration;  // replay this iteration of the (first) seed
  bool keep_going = false;                 // report each kind of finding once, and go on
  size_t max_chain = 4;                    // calls in one case at most
  unsigned case_timeout = 60;              // seconds one case may run
  bool stats = false;                      // per operator: how many calls succeeded or threw
  bool verbose = false;                    // print every case
};

int run_random(const RandomOptions& options);
int run_corpus(const std::string& path, unsigned case_timeout, bool verbose);
int run_one(const std::string& line);  // prints the outcome either way

}  // namespace anatomy_fuzz
