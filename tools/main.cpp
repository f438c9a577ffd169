// gpu-anatomy: the command-line tool of anatomy, `gpu-anatomy <chapter> <experiment> [options]`.
// Chapters and experiments live in their own files (tools/chapters.h); this file wires them
// together and turns every failure into one line on stderr and an exit status:
//   0 done; 1 an anatomy error, or a result that differed from its reference; 2 bad usage (an
//   unknown chapter, experiment or option, with the closest valid name; a bad value); 3 out of
//   memory (the allocator's message).
#include <fmt/format.h>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/suggest.h"

namespace {

using anatomy::tools::closest;

int usage_error(const std::string& message) {
  std::cerr << "gpu-anatomy: error: " << message << "\n";
  return 2;
}

std::vector<std::string> names_of(const std::vector<CLI::App*>& apps) {
  std::vector<std::string> v;
  for (const CLI::App* a : apps) v.push_back(a->get_name());
  return v;
}

// The names a word could have meant, as " (did you mean 'x'?)" or nothing.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& names) {
  const std::string best = closest(word, names);
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

// The first option from argv[from] on that `cmd` does not take, with the closest it does.
int unknown_option(const CLI::App& cmd, const std::string& where, int from, int argc, char** argv) {
  std::vector<std::string> options;
  for (const CLI::Option* opt : cmd.get_options()) {
    for (const std::string& n : opt->get_lnames()) options.push_back("--" + n);
  }
  for (int i = from; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("--", 0) != 0) continue;
    const std::string name = word.substr(0, word.find('='));
    if (std::find(options.begin(), options.end(), name) == options.end()) {
      return usage_error(fmt::format("{}: unknown option '{}'{}", where, name, did_you_mean(name, options)));
    }
  }
  return usage_error(fmt::format("{}: unexpected argument(s)", where));
}

// CLI11 reports a word it did not expect; find where it was: a chapter, an experiment or an option.
int unexpected(CLI::App& app, int argc, char** argv) {
  const auto all = [](CLI::App*) { return true; };
  const std::vector<std::string> chapters = names_of(app.get_subcommands(all));
  if (argc < 2) return usage_error(fmt::format("no chapter given (chapters: {})", fmt::join(chapters, ", ")));
  const std::string first = argv[1];
  CLI::App* chapter = nullptr;
  for (CLI::App* c : app.get_subcommands(all)) {
    if (c->get_name() == first) chapter = c;
  }
  if (!chapter) {
    return usage_error(fmt::format("unknown chapter '{}'{}; chapters: {}", first, did_you_mean(first, chapters),
                                   fmt::join(chapters, ", ")));
  }
  // A command without experiments (suite) takes its options right after its name.
  if (chapter->get_subcommands(all).empty()) return unknown_option(*chapter, first, 2, argc, argv);
  const std::vector<std::string> experiments = names_of(chapter->get_subcommands(all));
  if (argc < 3 || argv[2][0] == '-') {
    return usage_error(fmt::format("{}: no experiment given; experiments: {}", first, fmt::join(experiments, ", ")));
  }
  const std::string second = argv[2];
  const CLI::App* experiment = nullptr;
  for (CLI::App* e : chapter->get_subcommands(all)) {
    if (e->get_name() == second) experiment = e;
  }
  if (!experiment) {
    return usage_error(fmt::format("{}: unknown experiment '{}'{}; experiments: {}", first, second,
                                   did_you_mean(second, experiments), fmt::join(experiments, ", ")));
  }
  return unknown_option(*experiment, first + " " + second, 3, argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpu-anatomy: experiments that look inside the anatomy tensor engine, chapter by chapter"};
  app.require_subcommand(1);
  auto chapter = [&](const char* name, const char* about) {
    CLI::App* c = app.add_subcommand(name, about);
    c->require_subcommand(1);
    return c;
  };
  anatomy::tools::add_device_info(*chapter("c00", "device: the build, the GPUs and their properties"));
  CLI::App* c01 = chapter("c01", "tensor semantics (seed 004): layouts and what they cost");
  anatomy::tools::add_c01_contiguity_bench(*c01);
  anatomy::tools::add_c01_sync_points(*c01);
  anatomy::tools::add_c01_autograd_inspect(*c01);
  anatomy::tools::add_c01_layout(*c01);
  anatomy::tools::add_c01_all(*c01);
  anatomy::tools::add_c02_precision(*chapter("c02", "precision (seed 000): what fp32, tf32, fp16, bf16 and int8 cost"));
  CLI::App* c03 = chapter("c03", "memory: the caching allocator's policy, summary and snapshot");
  anatomy::tools::add_c03_lifecycle(*c03);
  anatomy::tools::add_c03_memory(*c03);
  anatomy::tools::add_memory_snapshot(*c03);
  anatomy::tools::add_c04_transfers(*chapter("c04", "transfers (seed 003): moving data between host and device"));
  anatomy::tools::add_c05_streams(*chapter("c05", "streams (seed 003): queues of work on one device"));
  CLI::App* c06 = chapter("c06", "dispatch: the dispatcher's steps and what they cost");
  anatomy::tools::add_dispatch_trace(*c06);
  anatomy::tools::add_c06_overhead(*c06);
  anatomy::tools::add_c06_custom_backend(*c06);
  anatomy::tools::add_c07_cpu_vs_gpu(*chapter("c07", "cpu-vs-gpu (seed 003): where the GPU starts to pay off"));
  anatomy::tools::add_c08_dlpack(*chapter("c08", "interop: DLPack exchange without a copy"));
  anatomy::tools::add_c09_graphs(*chapter("c09", "graphs: CUDA graphs, captured once and replayed"));
  anatomy::tools::add_c10_profile(*chapter("c10", "profiler: where the time of a step goes"));
  anatomy::tools::add_c11_memory_format(
      *chapter("c11", "memory formats (seeds 001, 002): NCHW against channels_last for convolutions"));
  anatomy::tools::add_suite(app);
  try {
    app.parse(argc, argv);  // runs the chosen experiment's callback
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError&) {
    return unexpected(app, argc, argv);
  } catch (const CLI::RequiredError& e) {
    // A chapter without an experiment, or no chapter at all.
    if (argc < 2 || argv[1][0] != '-') return unexpected(app, argc, argv);
    return usage_error(e.what());
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  } catch (const anatomy::tools::UsageError& e) {
    return usage_error(e.what());
  } catch (const anatomy::OutOfMemoryError& e) {
    std::cerr << "gpu-anatomy: out of memory: " << e.what() << "\n";
    return 3;
  } catch (const anatomy::tools::ExperimentFailed& e) {
    std::cerr << "gpu-anatomy: error: " << e.what() << "\n";
    return 1;
  } catch (const anatomy::Error& e) {
    std::cerr << "gpu-anatomy: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    // Not the engine's nor the tool's (a library's: the standard library's, libtorch's beside
    // --peer): still one line and exit status 1, never std::terminate.
    std::cerr << "gpu-anatomy: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
