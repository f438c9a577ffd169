// gpu-anatomy c05 streams: seed 003's claims about CUDA streams, measured. Two independent chains
// of matmuls queued on one stream against the same chains on two streams (host time of queuing
// both and waiting for the device); a matmul timed with CUDA events and with a host clock around
// it and a wait (events time the device's work alone); and record_stream: a block used on a side
// stream and freed while that stream still runs is not handed out again until the side stream's
// work is done when record_stream was called, and is handed out at once when it was not. On the
// CPU there are no streams: the run measures the two chains one after the other (the baseline a
// second stream is compared with) and says so. With --peer torch, PyTorch's chains run on the same
// tensors one after the other and (on CUDA) on two of its streams, timed the same way beside ours.
#include <fmt/format.h>

#include <cmath>
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
  int64_t size = 2048;
  int chain = 4;
};

// x <- x @ w, `chain` times (each product depends on the one before).
Tensor run_chain(Tensor x, const Tensor& w, int chain) {
  for (int i = 0; i < chain; ++i) x = x.matmul(w);
  return x;
}

void run(const Options& o) {
  check_positive("--size", o.size);
  check_positive("--chain", o.chain);
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const DType dtype = resolve_dtype(o.common.dtype);
  const std::unique_ptr<Peer> peer = open_peer(o.common.peer);
  Report report("c05", "streams", o.common, device);
  report.set_option("size", o.size);
  report.set_option("chain", o.chain);
  manual_seed(0);
  // Scaled so that the chain's values stay near 1 in every precision.
  const Tensor w = random_tensor({o.size, o.size}, DType::Float32, device)
                       .mul(1.0 / std::sqrt(static_cast<double>(o.size)))
                       .to(dtype);
  const Tensor x1 = random_tensor({o.size, o.size}, dtype, device), x2 = random_tensor({o.size, o.size}, dtype, device);
  Tensor y1, y2;
  const Tensor want = run_chain(x1, w, o.chain);
  fmt::print("=== Two chains of {} matmuls ({} x {} {}) on {} ===\n", o.chain, o.size, o.size, long_dtype_name(dtype),
             device.str());
  std::vector<double> one = host_times_with_wait(device, o.common.warmup, o.common.iters, [&] {
    y1 = run_chain(x1, w, o.chain);
    y2 = run_chain(x2, w, o.chain);
  });
  // The peer's chains on the same tensors (x1's checked against ours), timed as ours; its median
  // printed after ours.
  const auto beside = [&](const std::string& name, const std::vector<double>& ours, bool two_streams) {
    if (!peer) {
      report.add_measurement("two chains", name, ours);
      return std::string();
    }
    const std::unique_ptr<PeerCall> call = peer->matmul_chains(x1, x2, w, o.chain, two_streams);
    call->run();
    const Tensor got = call->result();
    if (relative_error(got, want) > product_tolerance(dtype)) {
      throw ExperimentFailed(fmt::format("c05 streams: {}: {}'s chain differs from ours", name, peer->engine()));
    }
    const std::vector<double> ps = host_times_with_wait(device, o.common.warmup, o.common.iters, [&] { call->run(); });
    report.add_measurement("two chains", name, ours, peer->engine(), ps);
    return fmt::format("   {} {}", peer->engine(), peer_cell(median(ours), median(ps)));
  };
  fmt::print("{:<34}{:>10.4f} ms{}\n", "one stream", median(one), beside("one stream", one, false));
  if (!device.is_cuda()) {
    report.add_note(
        "no CUDA device: the two chains run one after the other on the CPU, the baseline a second "
        "stream is measured against; run with --device cuda:0 on a GPU machine");
  } else {
    const cuda::Stream side = cuda::get_stream_from_pool(false, device.index());
    std::vector<double> two = host_times_with_wait(device, o.common.warmup, o.common.iters, [&] {
      // The side stream starts after the inputs are ready on the current stream.
      side.wait_stream(cuda::current_stream(device.index()));
      {
        cuda::StreamGuard guard(side);
        y2 = run_chain(x2, w, o.chain);
      }
      y1 = run_chain(x1, w, o.chain);
    });
    if (relative_error(y1, want) > product_tolerance(dtype)) {
      throw ExperimentFailed("c05 streams: the chain's result differs from the one-stream run");
    }
    fmt::print("{:<34}{:>10.4f} ms   ({:.2f}x){}\n", "two streams", median(two), median(one) / median(two),
               beside("two streams", two, true));
    report.add_note(fmt::format("two streams take {:.2f}x the time of one: {}", median(two) / median(one),
                                median(two) < 0.9 * median(one)
                                    ? "the chains overlapped on the device"
                                    : "each chain already fills the GPU, so a second stream has nothing to fill"));

    // Events against a host clock around one matmul.
    fmt::print("\n=== One {} matmul: CUDA events against a host clock ===\n", o.size);
    std::vector<double> ev = time_iterations(device, o.common.warmup, o.common.iters, [&] { y1 = x1.matmul(w); });
    std::vector<double> host =
        host_times_with_wait(device, o.common.warmup, o.common.iters, [&] { y1 = x1.matmul(w); });
    fmt::print("{:<34}{:>10.4f} ms\n{:<34}{:>10.4f} ms\n", "events (device time)", median(ev), "host clock and a wait",
               median(host));
    report.add_measurement("one matmul", "events", ev);
    report.add_measurement("one matmul", "host clock", host);
    report.add_note(
        fmt::format("the host clock reads {:.4f} ms more than the events: the launch and the wait, which "
                    "are host time, not device time",
                    median(host) - median(ev)));

    // record_stream: is a block freed while a side stream still uses it handed out again at once?
    fmt::print("\n=== record_stream ===\n");
    nlohmann::json reuse = nlohmann::json::object();
    for (bool record : {false, true}) {
      wait_for(device);
      Tensor buf = random_tensor({o.size, o.size}, dtype, device);
      const void* address = buf.data_ptr();
      side.wait_stream(cuda::current_stream(device.index()));
      {
        cuda::StreamGuard guard(side);
        y2 = run_chain(buf, w, o.chain);  // long work reading buf on the side stream
      }
      if (record) cuda::record_stream(buf, side);
      buf = Tensor();  // freed while the side stream may still read it
      const Tensor next = empty({o.size, o.size}, TensorOptions().device(device).dtype(dtype));
      const bool reused = next.data_ptr() == address;
      fmt::print("{:<34}the next block of that size {}\n", record ? "with record_stream" : "without record_stream",
                 reused ? "is the same memory, handed out while the side stream may still read it"
                        : "is other memory: the freed block waits for the side stream");
      reuse[record ? "with_record_stream" : "without_record_stream"] = reused;
      wait_for(device);
    }
    report.results()["block_reused_at_once"] = reuse;
  }
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c05_streams(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("streams", "Two streams against one, events, record_stream");
  auto o = std::make_shared<Options>();
  CommonDefaults defaults{"fp16", {"fp16", "bf16", "fp32", "fp64"}, 10, 2};
  defaults.peer = true;
  add_common_options(cmd, o->common, defaults);
  cmd->add_option("--size", o->size, "rows and columns of the matrices")->capture_default_str();
  cmd->add_option("--chain", o->chain, "matmuls in each chain")->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
