// The chapters of gpu-anatomy and their experiments, one file per experiment. Each add_* adds its
// experiment (options and the code it runs) to its chapter's subcommand; main.cpp makes the
// chapters in the order --help lists them.
#pragma once

#include <CLI/CLI.hpp>

namespace anatomy::tools {

// c00 device: device-info [--json F]: the build, the CUDA devices and their properties.
void add_device_info(CLI::App& chapter);
// c01 tensor semantics (seed 004).
void add_c01_contiguity_bench(CLI::App& chapter);
void add_c01_sync_points(CLI::App& chapter);
void add_c01_autograd_inspect(CLI::App& chapter);
void add_c01_layout(CLI::App& chapter);
void add_c01_all(CLI::App& chapter);  // suite.cpp: the four above, as the suite runs them
// c02 precision (seed 000): matmul speed and error in each precision.
void add_c02_precision(CLI::App& chapter);
// c03 memory: memory-snapshot [--simulated] [--html F] [--json F] [--svg F].
void add_memory_snapshot(CLI::App& chapter);
// c03 memory: fragmentation [--conf S]..., oom: the allocator's policy on the simulated device.
void add_c03_memory(CLI::App& chapter);
// c03 memory: lifecycle [--mib N]: allocated against reserved through a tensor's life, empty_cache.
void add_c03_lifecycle(CLI::App& chapter);
// c04 transfers (seed 003): host-device copies, pageable and pinned, blocking or not, overlapped.
void add_c04_transfers(CLI::App& chapter);
// c05 streams (seed 003): two streams against one, events, record_stream.
void add_c05_streams(CLI::App& chapter);
// c06 dispatch: dispatch-trace [--device cpu|cuda:N] [--files].
void add_dispatch_trace(CLI::App& chapter);
// c06 dispatch: overhead [--batch N]: host time of one small call by dispatch path.
void add_c06_overhead(CLI::App& chapter);
// c06 dispatch: custom-backend: a device registered from outside the engine.
void add_c06_custom_backend(CLI::App& chapter);
// c07 cpu-vs-gpu (seed 003): matmul and add over sizes on both, with and without the copies.
void add_c07_cpu_vs_gpu(CLI::App& chapter);
// c08 interop: dlpack [--sizes L] [--quick] [--batch N]: export, import and round trip against a copy.
void add_c08_dlpack(CLI::App& chapter);
// c09 graphs: graphs: eager against CUDA graph replays (100 dependent adds, an MLP and a
// transformer training step), the capture cost, the targets of a replayed add and a graphed step.
void add_c09_graphs(CLI::App& chapter);
// c10 profile: profile [--trace F] [--rows N] [--quick]: the profiler's table and trace of a
// transformer training step, and what profiling costs per operator.
void add_c10_profile(CLI::App& chapter);
// c11 memory formats: memory-format [--batch N] [--size N] [--precisions L] [--quick]: NCHW against
// channels_last for a 3x3 convolution and a ResNet-50 bottleneck block, forward and backward.
void add_c11_memory_format(CLI::App& chapter);
// suite [--quick]: every experiment that writes a report, one JSON document for all.
void add_suite(CLI::App& app);

}  // namespace anatomy::tools
