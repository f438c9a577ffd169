// anatomy_peer_torch: anatomy next to libtorch, same operations, same inputs, same run.
//
//   build/bench/peer/anatomy_peer_torch --benchmark_format=json > peer.json
//   scripts/peer-report.py peer.json
//
// Each library uses its default intra-op thread count (reported as num_threads); set
// ANATOMY_NUM_THREADS and OMP_NUM_THREADS to the same value to compare at equal threads.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
