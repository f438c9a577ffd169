// Profile, ThreadScope and Range (profiler.h): starting and stopping a recording.
#include <cstdio>
#include <utility>

#include "anatomy/profiler/profiler.h"
#include "anatomy/profiler/recording.h"

namespace anatomy::profiler {

Profile::Profile(ProfileOptions options) : recording_(std::make_shared<Recording>()) {
  recording_->options = options;
  start();
}

Profile::~Profile() {
  try {
    stop();
  } catch (const std::exception& e) {  // a destructor must not throw: the device times are lost
    std::fprintf(stderr, "anatomy: warning: stopping a profile failed: %s\n", e.what());
  }
}

void Profile::start() {
  Recording& r = *recording_;
  ANATOMY_CHECK(!r.active.load(), ValueError, "Profile::start: the profile is already recording");
  r.merged.clear();
  r.references.clear();
  r.logs.clear();
  r.start = Clock::now();
  r.active.store(true);
  try {
    attach_thread(recording_);
  } catch (...) {
    r.active.store(false);
    throw;
  }
}

void Profile::stop() {
  Recording& r = *recording_;
  if (!r.active.exchange(false)) return;
  if (thread_recording() == &r) detach_thread();
  std::lock_guard<std::mutex> lock(r.mutex);
  finish(r);
}

bool Profile::active() const { return recording_->active.load(); }

const std::vector<Event>& Profile::events() const {
  ANATOMY_CHECK(!active(), ValueError, "Profile::events: the profile is still recording (stop() it first)");
  return recording_->merged;
}

ThreadScope::ThreadScope(Profile& profile) : recording_(profile.recording_) { attach_thread(recording_); }

ThreadScope::~ThreadScope() {
  if (thread_recording() == recording_.get()) detach_thread();
}

Range::Range(std::string name) : nvtx_(name.c_str()) {
  Recording* r = thread_recording();
  if (r == nullptr || !r->active.load(std::memory_order_relaxed)) return;
  log_ = thread_log();
  index_ = begin_range(*r, *log_, std::move(name));
}

Range::~Range() {
  if (log_ == nullptr) return;
  Recording* r = thread_recording();
  // Stopped meanwhile (and maybe restarted, with a new log): nothing to end.
  if (r == nullptr || !r->active.load(std::memory_order_relaxed) || thread_log() != log_) return;
  end_event(*r, *log_, index_);
}

}  // namespace anatomy::profiler
