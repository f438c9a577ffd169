// anatomy_fuzz: the engine's own fuzzer (docs/fuzzing.md). Calls views, indexing, padding,
// factories, reductions and conversions with adversarial arguments and checks that each either
// succeeds with sound results or throws a typed error with its inputs unchanged.
//
//   anatomy_fuzz --seed 7 --seconds 60            random cases from one seed, for a minute
//   anatomy_fuzz --seeds 1,2,3 --iterations 1000  a thousand cases from each of three seeds
//   anatomy_fuzz --seed 7 --iteration 1234        one case again
//   anatomy_fuzz --case 'unfold fp32[3,2] 0 1 9223372036854775807'
//   anatomy_fuzz --corpus tests/fuzz/corpus.txt   replay past findings
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "catalogue.h"
#include "driver.h"

int main(int argc, char** argv) {
  CLI::App app{"anatomy's fuzzer: adversarial calls checked for typed errors and sound results"};
  anatomy_fuzz::RandomOptions random;
  uint64_t seed = 1;
  uint64_t iteration = 0;
  std::string corpus, line;
  bool list = false;
  auto* seed_opt = app.add_option("--seed", seed, "seed of the random cases");
  app.add_option("--seeds", random.seeds, "several seeds, each given its share of --seconds")
      ->delimiter(',')
      ->excludes(seed_opt);
  app.add_option("--iterations", random.iterations, "cases per seed (default: until --seconds, else 1000)");
  app.add_option("--seconds", random.seconds, "time for all seeds together");
  auto* it_opt = app.add_option("--iteration", iteration, "run only this iteration of the seed");
  app.add_option("--corpus", corpus, "replay a corpus file, one case per line");
  app.add_option("--case", line, "run one case written in the corpus format");
  app.add_flag("--keep-going", random.keep_going, "go on after a finding (each kind of finding is printed once)");
  app.add_option("--max-chain", random.max_chain, "calls in one random case at most");
  app.add_option("--case-timeout", random.case_timeout, "seconds one case may run before it counts as a hang");
  app.add_flag("--stats", random.stats, "print per operator how many calls succeeded and how many threw");
  app.add_flag("-v,--verbose", random.verbose, "print every case");
  app.add_flag("--list", list, "list the operators and their signatures");
  CLI11_PARSE(app, argc, argv);

  if (list) {
    for (const auto& op : anatomy_fuzz::catalogue()) fmt::print("{:<18} {}\n", op.name, op.sig);
    return 0;
  }
  if (!line.empty()) return anatomy_fuzz::run_one(line);
  if (!corpus.empty()) return anatomy_fuzz::run_corpus(corpus, random.case_timeout, random.verbose);
  if (app.count("--seeds") == 0) random.seeds = {seed};
  if (*it_opt) random.only_iteration = iteration;
  if (random.iterations == 0 && random.seconds <= 0) random.iterations = 1000;
  return anatomy_fuzz::run_random(random);
}
