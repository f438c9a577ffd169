// Anomaly mode: nodes remember the forward operator that made them, and a backward that
// produces a NaN gradient raises an error naming that operator. Off by default (it scans every
// gradient); DetectAnomalyGuard turns it on for a scope on this thread.
#pragma once

namespace anatomy::autograd {

namespace detail {
inline thread_local bool tls_anomaly_enabled = false;
}

class AnomalyMode {
 public:
  static bool is_enabled() { return detail::tls_anomaly_enabled; }
  static void set_enabled(bool on) { detail::tls_anomaly_enabled = on; }
};

class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : saved_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(saved_); }

 private:
  bool saved_;
};

}  // namespace anatomy::autograd
