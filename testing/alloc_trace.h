// A synthetic allocation trace of transformer training, and its replay: the trace the caching
// allocator's fragmentation figure (peak reserved / peak allocated) is measured on, on the
// simulated device in CI (tests/alloc/test_alloc_trace.cpp) and on CUDA next to PyTorch's
// allocator (bench/peer/alloc_trace.cpp). Header-only, so the libtorch benchmark uses it without
// the op table, and deterministic: sizes come from std::mt19937's raw output, which the standard
// fixes, so every build replays the same bytes. It knows no allocator: replay() takes any pair of
// functions, and a replay through the engine's caching allocator with its peaks is
// testing/alloc_trace_replay.h.
//
// The shape of it, per training step (the sequence length changes from step to step, as batches
// of varying length do, so cached blocks rarely fit the next step exactly):
//   - forward, per layer: the layer's activations saved for backward (layer-norm outputs and their
//     per-token statistics, qkv, attention probabilities, dropout mask and output, context,
//     the MLP's two wide activations, the residual stream), temporaries freed within the layer
//     (raw attention scores, projections before the residual add) and small scratch blocks;
//   - the loss: logits and fp32 log-probabilities (tens to a couple of hundred MiB);
//   - backward, layers in reverse: each op's input gradients allocated, its saved tensors and
//     output gradient freed, so the forward's allocations go back in reverse order, with weight
//     gradients allocated on the way and held until the step ends;
//   - the optimizer: its two fp32 moments per parameter on the first step (held), small scratch,
//     then the gradients freed (zero_grad with set_to_none, PyTorch's default).
// Parameters are allocated first and everything is freed at the end.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

namespace anatomy::testing {

// The sizes summarize() sorts requests by: the caching allocator's small-pool limit
// (alloc::kSmallSize, which tests/alloc/test_alloc_trace.cpp checks it equals) and a mebibyte.
inline constexpr size_t kTraceMiB = size_t{1} << 20;
inline constexpr size_t kTraceSmallSize = kTraceMiB;

struct AllocTraceEvent {
  bool is_alloc;  // false: a free
  uint32_t id;    // the allocation's number, 0, 1, 2, ... in order; its free names the same
  size_t size;    // bytes asked for (0 for a free)
};
using AllocTrace = std::vector<AllocTraceEvent>;

struct TransformerTraceConfig {
  int layers = 12;
  size_t batch = 4;
  size_t hidden = 1024;
  size_t heads = 16;
  size_t vocab = 8192;
  size_t elem = 2;  // bytes per element of weights and activations (bf16)
  // One training step per entry.
  std::vector<size_t> seq_lens = {512, 384, 640, 448, 704, 320, 576, 512};
  uint32_t seed = 2026;
};

namespace detail {

class TraceBuilder {
 public:
  explicit TraceBuilder(uint32_t seed) : rng_(seed) {}
  uint32_t alloc(size_t n) {
    events_.push_back({true, next_, n});
    return next_++;
  }
  void free(uint32_t id) { events_.push_back({false, id, 0}); }
  void free_all(const std::vector<uint32_t>& ids) {
    for (uint32_t id : ids) free(id);
  }
  // `count` small scratch blocks (reduction workspaces, index lists, scalars: 512 B to 256 KiB),
  // freed in a shuffled order.
  void scratch(int count) {
    std::vector<uint32_t> ids;
    for (int i = 0; i < count; ++i) ids.push_back(alloc(512 + rng_() % (256 * 1024)));
    while (!ids.empty()) {
      size_t i = rng_() % ids.size();
      free(ids[i]);
      ids[i] = ids.back();
      ids.pop_back();
    }
  }
  uint32_t random(uint32_t bound) { return static_cast<uint32_t>(rng_() % bound); }
  AllocTrace take() { return std::move(events_); }

 private:
  std::mt19937 rng_;
  AllocTrace events_;
  uint32_t next_ = 0;
};

}  // namespace detail

inline AllocTrace transformer_trace(const TransformerTraceConfig& c = {}) {
  detail::TraceBuilder t(c.seed);
  const size_t H = c.hidden;
  // Parameters: per layer two layer norms, qkv, the output projection and the MLP's two
  // matrices, each with a bias; the embedding (shared with the output layer) and a final norm.
  std::vector<size_t> params = {c.vocab * H * c.elem};
  for (int l = 0; l < c.layers; ++l) {
    for (size_t n : {H, H, 3 * H * H, 3 * H, H * H, H, H, H, 4 * H * H, 4 * H, 4 * H * H, H})
      params.push_back(n * c.elem);
  }
  params.push_back(H * c.elem);
  params.push_back(H * c.elem);
  std::vector<uint32_t> param_ids, moment_ids;
  for (size_t n : params) param_ids.push_back(t.alloc(n));

  for (size_t step = 0; step < c.seq_lens.size(); ++step) {
    const size_t S = c.seq_lens[step], T = c.batch * S;
    const size_t act = T * H * c.elem, wide = 4 * act, stats = T * 4;
    const size_t scores = c.batch * c.heads * S * S * c.elem, mask = c.batch * c.heads * S * S;
    std::vector<uint32_t> grads;
    size_t next_param = 1;  // weight gradients follow the parameters' order, layer by layer
    auto grad_of_layer_params = [&](std::initializer_list<size_t> which) {
      for (size_t k : which) grads.push_back(t.alloc(params[next_param + k]));
    };

    // ---- forward ----
    const uint32_t tokens = t.alloc(T * 8);
    uint32_t x = t.alloc(act);  // the embedding's output: the residual stream
    struct Saved {
      uint32_t x, ln1, mean1, rstd1, qkv, probs, drop_mask, dropped, ctx, x_mid, ln2, mean2, rstd2, fc1, gelu;
    };
    std::vector<Saved> saved;
    for (int l = 0; l < c.layers; ++l) {
      Saved s{};
      s.x = x;
      s.ln1 = t.alloc(act);
      s.mean1 = t.alloc(stats);
      s.rstd1 = t.alloc(stats);
      s.qkv = t.alloc(3 * act);
      const uint32_t raw_scores = t.alloc(scores);
      t.scratch(2);
      s.probs = t.alloc(scores);
      t.free(raw_scores);
      s.drop_mask = t.alloc(mask);
      s.dropped = t.alloc(scores);
      s.ctx = t.alloc(act);
      const uint32_t proj = t.alloc(act);
      s.x_mid = t.alloc(act);  // x + proj
      t.free(proj);
      s.ln2 = t.alloc(act);
      s.mean2 = t.alloc(stats);
      s.rstd2 = t.alloc(stats);
      s.fc1 = t.alloc(wide);
      s.gelu = t.alloc(wide);
      const uint32_t fc2 = t.alloc(act);
      x = t.alloc(act);  // x_mid + fc2: the next layer's input
      t.free(fc2);
      t.scratch(static_cast<int>(t.random(4)));
      saved.push_back(s);
    }
    const uint32_t lnf = t.alloc(act), meanf = t.alloc(stats), rstdf = t.alloc(stats);
    const uint32_t logits = t.alloc(T * c.vocab * c.elem);
    const uint32_t log_probs = t.alloc(T * c.vocab * 4);
    const uint32_t loss = t.alloc(4);
    t.scratch(3);

    // ---- backward ----
    t.free(loss);
    const uint32_t dlogits = t.alloc(T * c.vocab * c.elem);
    t.free(log_probs);
    uint32_t g = t.alloc(act);            // the gradient of the residual stream, d lnf first
    grads.push_back(t.alloc(params[0]));  // the output layer's share of the embedding's gradient
    t.free(dlogits);
    t.free(logits);
    {
      const uint32_t dx = t.alloc(act);
      grads.push_back(t.alloc(params[params.size() - 2]));
      grads.push_back(t.alloc(params[params.size() - 1]));
      t.free(g);
      t.free_all({lnf, meanf, rstdf, x});
      g = dx;
    }
    for (int l = c.layers - 1; l >= 0; --l) {
      const Saved& s = saved[static_cast<size_t>(l)];
      next_param = 1 + static_cast<size_t>(l) * 12;
      // fc2, gelu, fc1
      const uint32_t dgelu = t.alloc(wide);
      grad_of_layer_params({10, 11});
      t.free(s.gelu);
      const uint32_t dfc1 = t.alloc(wide);
      t.free(dgelu);
      t.free(s.fc1);
      const uint32_t dln2 = t.alloc(act);
      grad_of_layer_params({8, 9});
      t.free(dfc1);
      t.free(s.ln2);
      // the second layer norm, plus the residual's gradient
      const uint32_t dmid = t.alloc(act);
      grad_of_layer_params({6, 7});
      t.free(dln2);
      t.free_all({s.rstd2, s.mean2, g});
      t.scratch(2);
      // the output projection and attention
      const uint32_t dctx = t.alloc(act);
      grad_of_layer_params({4, 5});
      t.free(s.ctx);
      const uint32_t ddropped = t.alloc(scores);
      t.free(s.dropped);
      const uint32_t dscores = t.alloc(scores);
      t.free(ddropped);
      t.free_all({s.drop_mask, s.probs});
      const uint32_t dqkv = t.alloc(3 * act);
      t.free(dscores);
      t.free(dctx);
      // qkv, the first layer norm, plus the residual's gradient
      const uint32_t dln1 = t.alloc(act);
      grad_of_layer_params({2, 3});
      t.free(dqkv);
      t.free(s.qkv);
      const uint32_t dx = t.alloc(act);
      grad_of_layer_params({0, 1});
      t.free(dln1);
      t.free_all({s.rstd1, s.mean1, s.ln1, s.x_mid, dmid});
      t.free(s.x);  // the layer's input: the previous layer's output, or the embedding's
      g = dx;
      t.scratch(static_cast<int>(t.random(3)));
    }
    const uint32_t dembedding = t.alloc(params[0]);  // the embedding's gradient, scattered from g
    t.free(g);
    t.free(tokens);
    t.free(dembedding);  // summed into the first embedding gradient

    // ---- optimizer ----
    if (moment_ids.empty()) {
      for (size_t n : params) {
        moment_ids.push_back(t.alloc(2 * n));  // fp32 exp_avg
        moment_ids.push_back(t.alloc(2 * n));  // fp32 exp_avg_sq
      }
    }
    t.scratch(4);
    t.free_all(grads);
  }
  t.free_all(moment_ids);
  t.free_all(param_ids);
  return t.take();
}

// What a trace asks for, independently of any allocator.
struct AllocTraceSummary {
  size_t allocs = 0;
  size_t small = 0;  // at most 1 MiB (the small pool's requests)
  size_t mid = 0;    // 10 MiB to 200 MiB
  size_t largest = 0;
  size_t peak_live = 0;  // the most bytes asked for and not yet freed at once: what no allocator beats
  bool balanced = true;  // every allocation freed exactly once, and nothing freed that was not live
};

inline AllocTraceSummary summarize(const AllocTrace& trace) {
  AllocTraceSummary s;
  std::vector<size_t> live_size;
  std::vector<bool> live;
  size_t live_bytes = 0;
  for (const AllocTraceEvent& e : trace) {
    if (e.is_alloc) {
      if (e.id != live.size()) s.balanced = false;
      live.push_back(true);
      live_size.push_back(e.size);
      live_bytes += e.size;
      s.peak_live = std::max(s.peak_live, live_bytes);
      ++s.allocs;
      s.small += e.size <= kTraceSmallSize ? 1 : 0;
      s.mid += e.size >= 10 * kTraceMiB && e.size <= 200 * kTraceMiB ? 1 : 0;
      s.largest = std::max(s.largest, e.size);
    } else if (e.id >= live.size() || !live[e.id]) {
      s.balanced = false;
    } else {
      live[e.id] = false;
      live_bytes -= live_size[e.id];
    }
  }
  for (bool l : live) s.balanced = s.balanced && !l;
  return s;
}

// Replays `trace` through any allocator: `alloc(size)` returns a pointer, `free(pointer)`.
template <class Alloc, class Free>
void replay(const AllocTrace& trace, Alloc&& alloc, Free&& free) {
  std::vector<void*> ptrs;
  for (const AllocTraceEvent& e : trace) {
    if (e.is_alloc) {
      ptrs.resize(std::max<size_t>(ptrs.size(), e.id + 1));
      ptrs[e.id] = alloc(e.size);
    } else {
      free(ptrs[e.id]);
    }
  }
}

}  // namespace anatomy::testing
