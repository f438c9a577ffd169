// gpu-anatomy c04 transfers: seed 003's claims about moving data, measured. Over sizes from 4 KiB
// to 256 MiB: host-to-device and device-to-host bandwidth from pageable and from pinned host
// memory (host time of the copy and a wait for it, so the figure is what a program sees); how
// long a blocking and a non_blocking copy keep the host before returning; and a pinned copy on a
// side stream overlapped with a matmul on the current stream, against the two one after the
// other. On the CPU there is no device to copy to: the run measures host-to-host copies (the
// bandwidth a device transfer is measured against) and says so. With --peer torch, PyTorch makes
// each bandwidth row's copy from the same tensors (its `to` and `copy_`), its rate in brackets.
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "anatomy/cuda.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/checks.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

struct Options {
  CommonOptions common;
  std::string sizes = "4096,65536,1048576,16777216,268435456";  // bytes
};

using clock = std::chrono::steady_clock;

double ms_since(clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); }

double gbs(int64_t bytes, double ms) { return static_cast<double>(bytes) / (ms * 1e-3) / 1e9; }

// The copy is right: every element of `got` equals `want`'s.
void check_copy(const Tensor& got, const Tensor& want, const std::string& what) {
  if (!got.to(kCPU).equal(want.to(kCPU))) throw ExperimentFailed(fmt::format("c04 {}: the copy differs", what));
}

// The peer's copy checked (every element equal to `want`), then timed as ours (host time with the
// wait).
std::vector<double> time_copy(PeerCall& call, const Tensor& want, const std::string& what, const Peer& peer,
                              const Options& o, Device device) {
  call.run();
  if (!call.result().to(kCPU).equal(want)) {
    throw ExperimentFailed(fmt::format("c04 {}: {}'s copy differs", what, peer.engine()));
  }
  return host_times_with_wait(device, o.common.warmup, o.common.iters, [&] { call.run(); });
}

void run(const Options& o) {
  const std::vector<int64_t> sizes = parse_sizes("--sizes", o.sizes);
  for (int64_t b : sizes) {
    if (b % 4 != 0) throw UsageError(fmt::format("--sizes: {} bytes is not a whole number of fp32 elements", b));
  }
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const std::unique_ptr<Peer> peer = open_peer(o.common.peer);
  Report report("c04", "transfers", o.common, device);
  report.set_option("sizes", sizes);
  manual_seed(0);
  Progress progress("c04 transfers", o.common.quiet);
  const bool gpu = device.is_cuda();
  if (gpu) {
    fmt::print("=== Bandwidth between the host and {} (GB/s; host time of the copy and its wait) ===\n", device.str());
    fmt::print("{:>10} {:>14} {:>14} {:>14} {:>14}\n", "size", "H2D pageable", "H2D pinned", "D2H pageable",
               "D2H pinned");
  } else {
    fmt::print("=== Host-to-host copies (GB/s): no CUDA device in this run ===\n{:>10} {:>14}\n", "size", "clone");
  }
  if (peer) fmt::print("(each rate followed by {}'s on the same tensors in brackets)\n", peer->engine());
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t bytes : sizes) {
    const int64_t n = bytes / 4;
    progress.update(bytes_string(bytes));
    const Tensor host = random_tensor({n}, DType::Float32, kCPU);
    if (!gpu) {
      Tensor out;
      std::vector<double> s =
          host_times_with_wait(device, o.common.warmup, o.common.iters, [&] { out = host.clone(); });
      check_copy(out, host, "clone");
      const double ms = median(s);
      std::string line = fmt::format("{:>10} {:>14.2f}", bytes_string(bytes), gbs(bytes, ms));
      if (peer) {
        const std::vector<double> ps = time_copy(*peer->clone(host), host, "clone", *peer, o, device);
        line += fmt::format(" [{:.2f}]", gbs(bytes, median(ps)));
        report.add_measurement("host copy", bytes_string(bytes), std::move(s), peer->engine(), ps);
      } else {
        report.add_measurement("host copy", bytes_string(bytes), std::move(s));
      }
      fmt::print("{}\n", line);
      rows.push_back({{"bytes", bytes}, {"clone_gbs", gbs(bytes, ms)}});
      continue;
    }
    const Tensor pinned = cuda::pin_memory(host);
    const Tensor dev = host.to(device);
    Tensor pinned_out = cuda::pin_memory(zeros({n}));
    Tensor d_out, h_out;
    struct Copy {
      const char* name;
      std::function<void()> fn;
      std::function<void()> check;
      std::function<std::unique_ptr<PeerCall>()> peer_call;  // the same copy by the peer
    };
    const std::vector<Copy> copies = {
        {"H2D pageable", [&] { d_out = host.to(device); }, [&] { check_copy(d_out, host, "H2D pageable"); },
         [&] { return peer->to(host, device, false); }},
        {"H2D pinned", [&] { d_out = pinned.to(device, /*non_blocking=*/true); },
         [&] { check_copy(d_out, host, "H2D pinned"); }, [&] { return peer->to(pinned, device, true); }},
        {"D2H pageable", [&] { h_out = dev.to(kCPU); }, [&] { check_copy(h_out, host, "D2H pageable"); },
         [&] { return peer->to(dev, kCPU, false); }},
        {"D2H pinned", [&] { pinned_out.copy_(dev, /*non_blocking=*/true); },
         [&] { check_copy(pinned_out, host, "D2H pinned"); }, [&] { return peer->copy(pinned_out, dev, true); }},
    };
    nlohmann::json row = {{"bytes", bytes}};
    std::string line = fmt::format("{:>10}", bytes_string(bytes));
    for (const Copy& c : copies) {
      c.fn();
      wait_for(device);
      c.check();
      std::vector<double> s = host_times_with_wait(device, o.common.warmup, o.common.iters, c.fn);
      const double rate = gbs(bytes, median(s));
      line += fmt::format(" {:>14.2f}", rate);
      row[c.name] = rate;
      if (peer) {
        const std::vector<double> ps = time_copy(*c.peer_call(), host, c.name, *peer, o, device);
        line += fmt::format(" [{:.2f}]", gbs(bytes, median(ps)));
        report.add_measurement(c.name, bytes_string(bytes), std::move(s), peer->engine(), ps);
      } else {
        report.add_measurement(c.name, bytes_string(bytes), std::move(s));
      }
    }
    fmt::print("{}\n", line);
    rows.push_back(row);
  }
  report.results()["bandwidth"] = rows;

  if (gpu) {
    // How long each kind of copy keeps the host, at the largest size.
    const int64_t n = sizes.back() / 4;
    const Tensor host = random_tensor({n}, DType::Float32, kCPU), pinned = cuda::pin_memory(host);
    fmt::print("\n=== How long a {} host-to-device copy keeps the host ===\n", bytes_string(sizes.back()));
    nlohmann::json returns = nlohmann::json::object();
    for (const auto& [name, src, non_blocking] :
         {std::tuple{"blocking, pageable", host, false}, std::tuple{"non_blocking, pageable", host, true},
          std::tuple{"non_blocking, pinned", pinned, true}}) {
      wait_for(device);
      const auto t0 = clock::now();
      Tensor d = src.to(device, non_blocking);
      const double returned = ms_since(t0);
      wait_for(device);
      const double done = ms_since(t0);
      fmt::print("{:<26} returns after {:>9.3f} ms, done after {:>9.3f} ms\n", name, returned, done);
      returns[name] = {{"returned_ms", returned}, {"done_ms", done}};
    }
    report.results()["host_blocked"] = returns;

    // A pinned copy on a side stream overlapped with a matmul on the current stream.
    const Tensor a = random_tensor({4096, 4096}, DType::Float16, device),
                 b = random_tensor({4096, 4096}, DType::Float16, device);
    const cuda::Stream side = cuda::get_stream_from_pool(false, device.index());
    Tensor d, c;
    auto serial = [&] {
      d = pinned.to(device, true);
      c = a.matmul(b);
    };
    auto overlapped = [&] {
      {
        cuda::StreamGuard guard(side);
        d = pinned.to(device, true);
      }
      c = a.matmul(b);
    };
    std::vector<double> s1 = host_times_with_wait(device, o.common.warmup, o.common.iters, serial),
                        s2 = host_times_with_wait(device, o.common.warmup, o.common.iters, overlapped);
    fmt::print(
        "\n=== A {} pinned copy and a 4096 fp16 matmul ===\none stream: {:.3f} ms; the copy on a side "
        "stream: {:.3f} ms ({:.2f}x)\n",
        bytes_string(sizes.back()), median(s1), median(s2), median(s1) / median(s2));
    report.add_measurement("copy and matmul", "one stream", std::move(s1));
    report.add_measurement("copy and matmul", "copy on a side stream", std::move(s2));
  }

  if (gpu) {
    const nlohmann::json& last = rows.back();
    report.add_note(
        fmt::format("at {}, pinned memory moves {:.2f}x faster to the device than pageable "
                    "(pageable copies are staged through a pinned buffer by the driver)",
                    bytes_string(sizes.back()), last["H2D pinned"].get<double>() / last["H2D pageable"].get<double>()));
    report.add_note(
        "a non_blocking copy from pinned memory returns before it is done: the host can queue the "
        "next work while the copy engine runs; from pageable memory it cannot");
  } else {
    report.add_note(
        "no CUDA device: the host-to-host figures are the ceiling a device transfer is compared with; "
        "run with --device cuda:0 on a GPU machine for H2D and D2H");
  }
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c04_transfers(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("transfers", "Host-device copies: pageable and pinned, blocking or not");
  auto o = std::make_shared<Options>();
  CommonDefaults defaults{std::nullopt, {}, 10, 2};
  defaults.peer = true;
  add_common_options(cmd, o->common, defaults);
  cmd->add_option("--sizes", o->sizes, "comma-separated sizes in bytes (multiples of 4)")->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
