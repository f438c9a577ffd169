// Random cases from seeds (driver.h). Iteration i of seed s draws from its own generator
// (Gen::for_iteration), so any finding replays alone with --seed s --iteration i, or from the
// printed line with --case. A case is one call, sometimes followed by more calls on its result.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <set>

#include "catalogue.h"
#include "driver.h"
#include "fixtures.h"
#include "generator.h"
#include "runner.h"
#include "supervisor.h"

namespace anatomy_fuzz {
namespace {

using Clock = std::chrono::steady_clock;

// Results with more elements than this only go on to operators that compute nothing per
// element (views) or that must allocate them first and are refused: a sum over 2^62 broadcast
// elements would run for years.
constexpr int64_t kComputeLimit = int64_t{1} << 20;
// Results with a dim larger than this (empty or broadcast ones) only go on to operators without
// other tensor arguments: those are drawn in self's shape, and would be as large.
constexpr int64_t kShapeLimit = int64_t{1} << 16;

bool chainable(const OpDef& op, const anatomy::Tensor& self) {
  const std::string_view sig = op.sig;
  if (sig[0] != 'T') return false;
  const auto sizes = self.sizes();
  if (std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s > kShapeLimit; }) &&
      sig.find_first_of("TX", 1) != std::string_view::npos) {
    return false;
  }
  // Views compute nothing per element (split and chunk draw few pieces of a long dim). A copy
  // (reshape, contiguous, to) of more than 2^40 elements is refused by every allocator; one of
  // billions would really be made, outside ASan's 1 GiB limit.
  if (self.numel() <= kComputeLimit || op.kind == Kind::View) return true;
  return op.kind == Kind::MayAlias && self.numel() > (int64_t{1} << 40);
}

Call draw_call(Gen& g, const OpDef& op, const anatomy::Tensor* self) {
  Call call{&op, {}};
  SelfInfo info{anatomy::DType::Float32, {}};
  if (op.sig[0] == 'T') {
    if (self) {
      call.args.emplace_back(Chained{});
      info = {self->dtype(), self->sizes().vec()};
    } else {
      TensorSpec s = op.make_self ? op.make_self(g) : g.tensor();
      info = {s.dtype, s.sizes};
      call.args.emplace_back(std::move(s));
    }
  }
  try {
    op.gen(g, info, call.args);
  } catch (const std::exception& e) {
    throw ParseError{fmt::format("drawing arguments for {} threw {}: {}", op.name, current_exception_type(), e.what())};
  }
  // What runs is what the printed line says: the call goes through its text form.
  return parse_call(format_call(call), self != nullptr);
}

std::string op_name(const Case& c, size_t call) { return call < c.calls.size() ? c.calls[call].op->name : "?"; }

std::string replay_lines(uint64_t seed, uint64_t iteration, const Case& c) {
  const std::string line = format_case(c);
  return fmt::format("  repro:  {}\n  replay: anatomy_fuzz --case '{}'   (or --seed {} --iteration {})\n", line, line,
                     seed, iteration);
}

size_t op_index(const OpDef* op) { return static_cast<size_t>(op - catalogue().data()); }

// One case: the first call drawn from scratch, each next one (sometimes) from the last result.
Outcome run_one_case(const RandomOptions& options, Gen& g, Case& c, size_t si, uint64_t seed, uint64_t it) {
  CaseRun run;
  c.calls.push_back(draw_call(g, pick_op(g), nullptr));
  while (true) {
    set_progress(si, it, c.calls.back().op->name, replay_lines(seed, it, c));
    if (options.verbose) fmt::print("{} {}: {}\n", seed, it, format_case(c));
    Outcome out = run.step(c.calls.back());
    const size_t k = op_index(c.calls.back().op);
    (out.status == Outcome::Status::Error ? tally().op_error[k] : tally().op_ok[k]) += 1;
    if (out.status != Outcome::Status::Ok) return out;
    if (c.calls.size() >= options.max_chain || !run.has_last() || !g.chance(0.3)) return run.finish();
    const OpDef* next = &pick_op(g);
    for (int tries = 0; tries < 16 && !chainable(*next, run.last()); ++tries) next = &pick_op(g);
    if (!chainable(*next, run.last())) return run.finish();
    c.calls.push_back(draw_call(g, *next, &run.last()));
  }
}

// The cases of seeds[seed_index..] from iteration `first` on (in a supervised child, or in
// this process for --iteration). Returns kClean, kFindings or kBadInput.
int random_loop(const RandomOptions& options, Clock::time_point start, size_t seed_index, uint64_t first) {
  Tally& t = tally();
  bool found = false;
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const size_t nseeds = options.only_iteration ? 1 : options.seeds.size();
  for (size_t si = seed_index; si < nseeds; ++si, first = 0) {
    const uint64_t seed = options.seeds[si];
    // Each seed gets its share of the time, so the seed list, not the machine, decides coverage.
    const double deadline = options.seconds > 0
                                ? options.seconds * static_cast<double>(si + 1) / static_cast<double>(nseeds)
                                : std::numeric_limits<double>::infinity();
    if (options.only_iteration) first = *options.only_iteration;
    const uint64_t end = options.only_iteration ? first + 1
                         : options.iterations   ? options.iterations
                                                : std::numeric_limits<uint64_t>::max();
    for (uint64_t it = first; it < end; ++it) {
      if (it % 16 == 0 && elapsed() > deadline) break;
      Gen g = Gen::for_iteration(seed, it);
      Case c;
      Outcome out;
      case_time_limit(options.case_timeout);
      try {
        out = run_one_case(options, g, c, si, seed, it);
      } catch (const BadCase& e) {
        // An input the engine rightly refuses to make (a fixture as large as a huge self): the
        // case is skipped, not failed. Seen often, it means the generator needs a look.
        if (++t.skipped[si] == 1 || options.verbose) {
          fmt::print("anatomy_fuzz: skipped a case whose input cannot be made (seed {}, iteration {}): {}\n", seed, it,
                     e.message);
        }
        case_time_limit(0);
        continue;
      } catch (const ParseError& e) {
        fmt::print("anatomy_fuzz: a bug of the fuzzer's generator (seed {}, iteration {}): {}\n", seed, it, e.message);
        return kBadInput;
      } catch (const std::exception& e) {
        out.status = Outcome::Status::Finding;
        out.kind = "check threw";
        out.what = fmt::format("a check on the results threw {}: {}", current_exception_type(), e.what());
        out.call = c.calls.empty() ? 0 : c.calls.size() - 1;
      }
      case_time_limit(0);
      ++t.cases[si];
      t.errors[si] += out.status == Outcome::Status::Error;
      if (out.status == Outcome::Status::Finding) {
        found = true;
        if (t.first_time(op_name(c, out.call) + " / " + out.kind)) {
          ++t.findings;
          fmt::print("anatomy_fuzz: FINDING [{}] seed {}, iteration {}, call {} ({}):\n  {}\n{}", out.kind, seed, it,
                     out.call, op_name(c, out.call), out.what, replay_lines(seed, it, c));
        }
        if (!options.keep_going) return kFindings;
      } else if (options.only_iteration) {
        fmt::print("{}\n  {}\n", format_case(c),
                   out.status == Outcome::Status::Error ? "typed error: " + out.what : std::string("ok"));
      }
    }
  }
  return found ? kFindings : kClean;
}

void print_summary(const RandomOptions& options, double seconds) {
  const Tally& t = tally();
  for (size_t si = 0; si < options.seeds.size() && si < Tally::kSeeds; ++si) {
    fmt::print("anatomy_fuzz: seed {}: {} cases ({} ended in a typed error, {} skipped)\n", options.seeds[si],
               t.cases[si], t.errors[si], t.skipped[si]);
  }
  fmt::print("anatomy_fuzz: {:.1f} s\n", seconds);
  if (!options.stats) return;
  fmt::print("{:<18} {:>9} {:>9}\n", "operator", "ok", "error");
  for (size_t k = 0; k < catalogue().size(); ++k) {
    fmt::print("{:<18} {:>9} {:>9}\n", catalogue()[k].name, t.op_ok[k], t.op_error[k]);
  }
}

}  // namespace

int run_random(const RandomOptions& options) {
  const Clock::time_point start = Clock::now();
  if (options.seeds.size() > Tally::kSeeds || catalogue().size() > Tally::kOps) {
    fmt::print(stderr, "anatomy_fuzz: at most {} seeds and {} operators\n", Tally::kSeeds, Tally::kOps);
    return 2;
  }
  // One case again: in this process, where a debugger can follow it.
  if (options.only_iteration) return random_loop(options, start, 0, 0) == kClean ? 0 : 1;
  size_t seed_index = 0;
  uint64_t first = 0, crashes = 0;
  std::set<std::string> crash_sites;
  while (true) {
    ChildEnd end = run_supervised([&] { return random_loop(options, start, seed_index, first); });
    if (!end.crashed) {
      std::fputs(end.report.c_str(), stderr);
      if (end.status == kBadInput) return 2;
      print_summary(options, std::chrono::duration<double>(Clock::now() - start).count());
      const uint64_t findings = tally().findings + crashes;
      if (findings > 0) fmt::print("anatomy_fuzz: {} findings (each kind printed once)\n", findings);
      return end.status == kFindings || crashes > 0 ? 1 : 0;
    }
    const Progress& p = end.progress;
    if (crash_sites.insert(end.where).second) {
      ++crashes;
      fmt::print("{}anatomy_fuzz: FINDING [crash] {}, seed {}, iteration {} ({}):\n  {}\n{}", end.report, end.how,
                 options.seeds.at(p.seed_index), p.iteration, p.op, end.where, p.current);
    }
    // Go on after the case that crashed (unless nothing ran: then it would crash again).
    if (!options.keep_going || p.current.empty()) return 1;
    seed_index = p.seed_index;
    first = p.iteration + 1;
  }
}

}  // namespace anatomy_fuzz
