// gpu-anatomy c08 dlpack: the claim "from_dlpack and back at most 2 us, constant in the tensor's
// size", measured on the engine's side of the exchange. For fp32 tensors from 1 KiB to
// 1 GiB: the host time of an export (to_dlpack_versioned), of an import of that capsule
// (from_dlpack), and of a round trip (export, import, and dropping the imported tensor, which
// calls the capsule's deleter). Every capsule and every imported tensor must point at the
// original's memory, or the run fails: a copy would make the time grow with the size. A clone of
// the same tensor, which copies every byte, is timed beside them for contrast. An exchange call
// takes well under a microsecond, so each sample is a batch of calls (host_batch_time), with the
// capsules to import made before the timed part and what the calls made released after it, so
// that each column times one step; the samples are taken in rounds over all the sizes. With --peer
// torch, PyTorch's own round trip of the same tensor (at::toDLPack, at::fromDLPack, the drop) is
// timed in the same rounds, beside ours.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "anatomy/interop/dlpack.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/checks.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

// Powers of 4 bytes: 1 KiB to 1 GiB, and to 1 MiB with --quick.
constexpr const char* kSizes = "1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456,1073741824";
constexpr const char* kQuickSizes = "1024,4096,16384,65536,262144,1048576";
constexpr double kLimitUs = 2.0;  // the claim's bound on the round trip
// Flat: the slowest size's round trip within this factor of the fastest's. The exchange reads
// only the tensor's metadata, so what is left is noise; a copy grows a millionfold over the range.
constexpr double kFlatRatio = 1.5;
// Clones of more than this many bytes take fewer samples (at least 3): a copy of 1 GiB takes
// most of a second on a CPU, and its spread is small against the exchange's.
constexpr int64_t kCloneBytesPerRun = int64_t{16} << 20;
// A batch's capsules and imported tensors are all alive at once; a bound keeps a typo from
// asking for more memory than the machine has.
constexpr int kMaxBatch = 1'000'000;

struct Options {
  CommonOptions common;
  std::string sizes = kSizes;  // kQuickSizes with --quick, unless --sizes is given
  bool quick = false;
  int batch = 100;
};

// One size: its tensor and the samples of each step, in milliseconds per call.
struct Exchange {
  int64_t bytes;
  Tensor t;
  std::vector<double> exports, imports, trips, clones;
  std::unique_ptr<PeerCall> peer_trip;  // --peer: the peer's round trip of t
  std::vector<double> peer_trips;
};

// One size's medians, in microseconds per call.
struct Row {
  int64_t bytes;
  double export_us, import_us, round_trip_us, clone_us;
};

double us(const std::vector<double>& samples_ms) { return median(samples_ms) * 1e3; }

[[noreturn]] void copied(const char* step, int64_t bytes) {
  throw ExperimentFailed(
      fmt::format("c08 dlpack: {} of {}: the result does not point at the original's memory (DLPack must not copy)",
                  step, bytes_string(bytes)));
}

// The capsules and imported tensors of one batch, reused by every size.
struct Batch {
  std::vector<DLManagedTensorVersioned*> capsules;
  std::vector<Tensor> imported;
};

// Times one batch of each step on e.t, keeping the samples unless this is a warm-up round.
void time_round(Exchange& e, Batch& b, bool keep) {
  const Tensor& t = e.t;
  const void* data = t.data_ptr();
  const int batch = static_cast<int>(b.capsules.size());
  const auto none = [] {};
  // Gives every capsule back to its deleter, having checked that it viewed t's memory.
  const auto release_capsules = [&] {
    bool same = true;
    for (DLManagedTensorVersioned*& m : b.capsules) {
      same = same && m->dl_tensor.data == data;
      m->deleter(m);
      m = nullptr;
    }
    if (!same) copied("an export", e.bytes);
  };
  const auto make_capsules = [&] {
    for (DLManagedTensorVersioned*& m : b.capsules) m = interop::to_dlpack_versioned(t);
  };
  // Drops the imported tensors (each calls its capsule's deleter), having checked their memory.
  const auto drop_imported = [&] {
    bool same = true;
    for (Tensor& u : b.imported) {
      same = same && u.data_ptr() == data;
      u = Tensor();
    }
    if (!same) copied("an import", e.bytes);
  };
  bool round_trip_same = true;
  const double exported = host_batch_time(
      batch, none, [&](int i) { b.capsules[i] = interop::to_dlpack_versioned(t); }, release_capsules);
  const double imported = host_batch_time(
      batch, make_capsules, [&](int i) { b.imported[i] = interop::from_dlpack(b.capsules[i]); }, drop_imported);
  const double trip = host_batch_time(
      batch, none,
      [&](int) {
        const Tensor u = interop::from_dlpack(interop::to_dlpack_versioned(t));
        round_trip_same = round_trip_same && u.data_ptr() == data;
      },
      none);
  if (!round_trip_same) copied("a round trip", e.bytes);
  const double peer_trip = e.peer_trip ? host_batch_time(
                                             batch, none, [&](int) { e.peer_trip->run(); }, none)
                                       : 0;
  if (!keep) return;
  if (e.peer_trip) e.peer_trips.push_back(peer_trip);
  e.exports.push_back(exported);
  e.imports.push_back(imported);
  e.trips.push_back(trip);
}

// The clone of e.t, timed with the copy's wait; large ones take fewer samples.
void time_clones(Exchange& e, const CommonOptions& c) {
  const int iters = static_cast<int>(std::clamp<int64_t>(c.iters * kCloneBytesPerRun / e.bytes, 3, c.iters));
  e.clones = host_times_with_wait(e.t.device(), std::min(c.warmup, 1), iters, [&] {
    const Tensor copy = e.t.clone();
    (void)copy;
  });
}

void run(const Options& o) {
  const std::vector<int64_t> sizes = parse_sizes("--sizes", o.sizes);
  for (int64_t b : sizes) {
    if (b % 4 != 0) throw UsageError(fmt::format("--sizes: {} bytes is not a whole number of fp32 elements", b));
  }
  check_positive("--batch", o.batch);
  if (o.batch > kMaxBatch) throw UsageError(fmt::format("--batch: at most {}, got {}", kMaxBatch, o.batch));
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const std::unique_ptr<Peer> peer = open_peer(o.common.peer);
  Report report("c08", "dlpack", o.common, device);
  report.set_option("sizes", sizes);
  report.set_option("batch", o.batch);
  report.set_option("quick", o.quick);
  manual_seed(0);
  Progress progress("c08 dlpack", o.common.quiet);
  fmt::print("=== DLPack exchange of a float32 tensor on {}: host time per call in us (batches of {}) ===\n",
             device.str(), o.batch);
  fmt::print("{:>10} {:>10} {:>10} {:>11} {:>14} {:>11}{}\n", "size", "export", "import", "round trip", "clone",
             "clone GB/s", peer ? fmt::format("   {} round trip (its time / ours)", peer->engine()) : "");
  std::vector<Exchange> exchanges;
  for (int64_t bytes : sizes) {
    progress.update(fmt::format("making the tensor of {}", bytes_string(bytes)));
    exchanges.push_back({bytes, random_tensor({bytes / 4}, DType::Float32, device), {}, {}, {}, {}, nullptr, {}});
    if (peer) exchanges.back().peer_trip = peer->dlpack_round_trip(exchanges.back().t);
  }
  wait_for(device);
  // Rounds over the sizes, not one size after the other: a neighbour that takes the CPU for a
  // while then slows a sample of every size instead of every sample of one.
  Batch b{std::vector<DLManagedTensorVersioned*>(static_cast<size_t>(o.batch)),
          std::vector<Tensor>(static_cast<size_t>(o.batch))};
  for (int round = -o.common.warmup; round < o.common.iters; ++round) {
    progress.update(fmt::format("round {} of {}", round + o.common.warmup + 1, o.common.warmup + o.common.iters));
    for (Exchange& e : exchanges) time_round(e, b, round >= 0);
  }
  std::vector<Row> rows;
  nlohmann::json table = nlohmann::json::array();
  for (Exchange& e : exchanges) {
    progress.update(fmt::format("clone of {}", bytes_string(e.bytes)));
    time_clones(e, o.common);
    const Row r{e.bytes, us(e.exports), us(e.imports), us(e.trips), us(e.clones)};
    const std::string at = fmt::format("bytes={}", e.bytes);
    report.add_measurement("dlpack", "export " + at, std::move(e.exports));
    report.add_measurement("dlpack", "import " + at, std::move(e.imports));
    const double peer_trip_us = e.peer_trip ? us(e.peer_trips) : -1;
    if (e.peer_trip) {
      report.add_measurement("dlpack", "round trip " + at, std::move(e.trips), peer->engine(), e.peer_trips);
      e.peer_trip.reset();  // its view holds the tensor
    } else {
      report.add_measurement("dlpack", "round trip " + at, std::move(e.trips));
    }
    report.add_measurement("dlpack", "clone " + at, std::move(e.clones));
    e.t = Tensor();  // freed once measured: the larger clones that follow need the memory
    const double clone_gbs = static_cast<double>(r.bytes) / (r.clone_us * 1e-6) / 1e9;
    fmt::print("{:>10} {:>10.3f} {:>10.3f} {:>11.3f} {:>14.3f} {:>11.2f}{}\n", bytes_string(r.bytes), r.export_us,
               r.import_us, r.round_trip_us, r.clone_us, clone_gbs,
               peer ? "   " + peer_cell(r.round_trip_us, peer_trip_us) : "");
    table.push_back({{"bytes", r.bytes},
                     {"export_us", r.export_us},
                     {"import_us", r.import_us},
                     {"round_trip_us", r.round_trip_us},
                     {"clone_us", r.clone_us},
                     {"clone_gbs", clone_gbs},
                     {"zero_copy", true}});
    rows.push_back(r);
  }
  const auto [lo, hi] = std::minmax_element(
      rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.round_trip_us < b.round_trip_us; });
  const double ratio = hi->round_trip_us / lo->round_trip_us;
  const bool flat = ratio <= kFlatRatio, within = hi->round_trip_us <= kLimitUs;
  fmt::print("\nround trip from {} to {}: {:.3f} to {:.3f} us, max/min {:.2f}: {} (max/min <= {}), {} {} us\n",
             bytes_string(sizes.front()), bytes_string(sizes.back()), lo->round_trip_us, hi->round_trip_us, ratio,
             flat ? "flat" : "NOT flat", kFlatRatio, within ? "within" : "ABOVE", kLimitUs);
  report.results()["rows"] = table;
  report.results()["round_trip"] = {
      {"min_us", lo->round_trip_us}, {"max_us", hi->round_trip_us}, {"max_over_min", ratio}, {"flat", flat},
      {"flat_ratio", kFlatRatio},    {"within_limit", within},      {"limit_us", kLimitUs}};
  report.add_note(
      fmt::format("every capsule and imported tensor pointed at the original's memory: no copy at any "
                  "of the {} sizes",
                  sizes.size()));
  if (rows.size() > 1) {
    report.add_note(fmt::format(
        "from {} to {} the clone grew {:.0f}x and the round trip {:.2f}x: the exchange "
        "hands over sizes, strides and a pointer, never the bytes",
        bytes_string(rows.front().bytes), bytes_string(rows.back().bytes), rows.back().clone_us / rows.front().clone_us,
        rows.back().round_trip_us / rows.front().round_trip_us));
  }
  report.add_note(
      "an export allocates the managed tensor with its shape and strides and holds a reference to the storage; "
      "an import checks every field and wraps the pointer with from_blob; the drop calls the producer's deleter");
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c08_dlpack(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("dlpack", "DLPack export, import and round trip over sizes, against a copy");
  auto o = std::make_shared<Options>();
  CommonDefaults defaults{std::nullopt, {}, 30, 3};
  defaults.peer = true;
  add_common_options(cmd, o->common, defaults);
  CLI::Option* sizes =
      cmd->add_option("--sizes", o->sizes, "comma-separated sizes in bytes, multiples of 4")->capture_default_str();
  cmd->add_flag("--quick", o->quick, fmt::format("sizes {} unless --sizes is given", kQuickSizes));
  cmd->add_option("--batch", o->batch, "exchange calls per timed sample")->capture_default_str();
  cmd->callback([o, sizes] {
    if (o->quick && sizes->count() == 0) o->sizes = kQuickSizes;
    run(*o);
  });
}

}  // namespace anatomy::tools
