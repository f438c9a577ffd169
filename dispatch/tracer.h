// The Tracer layer: while a Tracer is alive on a thread, every operator call on that thread
// passes through the Tracer dispatch key, whose boxed fallback records the operator, its
// arguments and its host time, then redispatches below. One fallback serves every operator,
// which is what the boxed convention is for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anatomy/dispatch/local_key_set.h"

namespace anatomy::dispatch {

struct TracedCall {
  std::string op;                 // "aten::add.Tensor"
  std::vector<std::string> args;  // "Tensor[2, 3] fp32 cpu", "1", ...
  int depth;                      // 0 for calls made by the user, 1 for calls they make, ...
  int64_t host_ns;                // wall time of the call, including the calls below it
};

class Tracer {
 public:
  Tracer();
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  const std::vector<TracedCall>& calls() const { return calls_; }
  // One line per call, indented by depth.
  std::string to_string() const;

 private:
  friend struct TracerAccess;
  std::vector<TracedCall> calls_;
  Tracer* previous_;
  IncludeDispatchKeyGuard include_;
};

}  // namespace anatomy::dispatch
