// Thread-local included and excluded dispatch keys, with RAII guards.
//
// A guard changes only the current thread: an autograd kernel excludes the autograd keys for
// its nested calls, an autocast scope includes Autocast, a tracing scope includes Tracer.
#pragma once

#include "anatomy/core/dispatch_key_set.h"
#include "anatomy/core/macros.h"

namespace anatomy::dispatch {

struct LocalDispatchKeySet {
  DispatchKeySet included;
  DispatchKeySet excluded;
};

// The calling thread's sets. Inline so the dispatcher's hot path reads them without a call.
inline thread_local LocalDispatchKeySet tls_local_key_set ANATOMY_TLS_FAST;

class IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKeySet keys) : saved_(tls_local_key_set.included) {
    tls_local_key_set.included = saved_ | keys;
  }
  explicit IncludeDispatchKeyGuard(DispatchKey k) : IncludeDispatchKeyGuard(DispatchKeySet(k)) {}
  IncludeDispatchKeyGuard(const IncludeDispatchKeyGuard&) = delete;
  IncludeDispatchKeyGuard& operator=(const IncludeDispatchKeyGuard&) = delete;
  ~IncludeDispatchKeyGuard() { tls_local_key_set.included = saved_; }

 private:
  DispatchKeySet saved_;
};

class ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKeySet keys) : saved_(tls_local_key_set.excluded) {
    tls_local_key_set.excluded = saved_ | keys;
  }
  explicit ExcludeDispatchKeyGuard(DispatchKey k) : ExcludeDispatchKeyGuard(DispatchKeySet(k)) {}
  ExcludeDispatchKeyGuard(const ExcludeDispatchKeyGuard&) = delete;
  ExcludeDispatchKeyGuard& operator=(const ExcludeDispatchKeyGuard&) = delete;
  ~ExcludeDispatchKeyGuard() { tls_local_key_set.excluded = saved_; }

 private:
  DispatchKeySet saved_;
};

// Every autograd key: what an autograd kernel excludes for the calls it makes below it.
inline constexpr DispatchKeySet kAutogradKeys{DispatchKey::AutogradCPU, DispatchKey::AutogradCUDA,
                                              DispatchKey::AutogradMeta, DispatchKey::AutogradPrivateUse1};

}  // namespace anatomy::dispatch
