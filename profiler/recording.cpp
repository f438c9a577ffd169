// The Profiler dispatch key's fallback and the per-thread logs it fills (recording.h).
#include "anatomy/profiler/recording.h"

#include <fmt/format.h>

#include <algorithm>

#include "anatomy/anatomy.h"

namespace anatomy::profiler {
namespace {

// The calling thread's recording: what it logs into, and the key set it had before.
struct ThreadState {
  std::shared_ptr<Recording> recording;
  ThreadLog* log = nullptr;
  DispatchKeySet included_before;
};

// A pointer, so that the thread's static TLS stays small (the Python module is loaded with dlopen).
thread_local ThreadState* t_state = nullptr;

std::string shape_string(const ThreadLog& log, const RawShape& s) {
  std::string_view dtype = torch_name(s.dtype);  // "torch.float32": the name after the dot
  dtype.remove_prefix(dtype.find('.') + 1);
  const auto first = log.dims.begin() + s.first_dim;
  return fmt::format("[{}] {}", fmt::join(first, first + s.ndim, ", "), dtype);
}

void record_shape(ThreadLog& log, const Tensor& t) {
  const IntArrayRef sizes = t.sizes();
  log.shapes.push_back({static_cast<uint32_t>(log.dims.size()), static_cast<uint32_t>(sizes.size()), t.dtype()});
  log.dims.insert(log.dims.end(), sizes.begin(), sizes.end());
  ++log.event_shapes.back().second;
}

// The tensors among an operator's arguments (the top `nargs` of the stack); returns the first
// Device argument (a factory's `device`), if any.
template <typename F>
std::optional<Device> for_each_tensor(const dispatch::Stack& stack, size_t nargs, F&& f) {
  std::optional<Device> device_arg;
  for (size_t i = stack.size() - nargs; i < stack.size(); ++i) {
    const dispatch::IValue& v = stack[i];
    if (v.is<Tensor>()) {
      if (v.get<Tensor>().defined()) f(v.get<Tensor>());
    } else if (v.is<std::vector<Tensor>>()) {
      for (const Tensor& t : v.get<std::vector<Tensor>>()) {
        if (t.defined()) f(t);
      }
    } else if (v.is<Device>() && !device_arg) {
      device_arg = v.get<Device>();
    }
  }
  return device_arg;
}

// Bytes the allocator of `device` has handed out, for profile_memory.
int64_t allocated_bytes(const Device& device) {
  if (device.is_cuda()) return cuda::memory_allocated(device.has_index() ? device.index() : -1);
  return alloc::cpu_allocator_stats().live_bytes;
}

void profiler_fallback(const dispatch::OperatorHandle& op, DispatchKeySet ks, dispatch::Stack& stack, void*) {
  const DispatchKeySet below = ks & DispatchKeySet::below(DispatchKey::Profiler);
  ThreadState* st = t_state;
  if (st == nullptr || !st->recording->active.load(std::memory_order_relaxed)) {
    op.redispatch_boxed(below, stack);  // the key was left on, or the profile stopped
    return;
  }
  Recording& r = *st->recording;
  ThreadLog& log = *st->log;
  const int64_t index = begin_operator(r, log, op.name());
  const size_t nargs = op.schema().arguments.size();
  std::optional<Device> device;
  const std::optional<Device> device_arg = for_each_tensor(stack, nargs, [&](const Tensor& t) {
    if (r.options.record_shapes) record_shape(log, t);
    if (!device || (t.is_cuda() && !device->is_cuda())) device = t.device();
  });
  DispatchKey backend = ks.highest_backend();
  if (!device && ks.has(DispatchKey::BackendSelect)) {
    // A factory (no tensor argument): its BackendSelect kernel runs the backend of its device
    // argument, the CPU's when it has none (dispatch/backend_select.h); its memory and device
    // time are that device's.
    device = device_arg.value_or(Device(DeviceType::CPU));
    if (backend == DispatchKey::Undefined) backend = backend_dispatch_key(device->type());
  }
  log.events[index].key = backend == DispatchKey::Undefined ? "" : std::string(to_string(backend));
  DeviceSpan* span = nullptr;
  if (r.options.cuda && backend == DispatchKey::CUDA && device && device->is_cuda()) {
    const int d = device->has_index() ? device->index() : cuda::current_device();
    const cuda::Stream stream = cuda::current_stream(d);
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      auto& ref = r.references[d];
      if (ref == nullptr) {
        ref = std::make_unique<Recording::Reference>();
        ref->event.record(stream);
        ref->host_us = r.now_us();
      }
    }
    log.spans.push_back(take_span(d));
    span = log.spans.back().get();
    span->event = static_cast<size_t>(index);
    log.events[index].device = d;
    log.events[index].stream = reinterpret_cast<uint64_t>(stream.handle());
    span->start.record(stream);
  }
  const int64_t memory_before = r.options.profile_memory && device ? allocated_bytes(*device) : 0;
  try {
    op.redispatch_boxed(below, stack);
  } catch (...) {
    end_event(r, log, index);
    throw;
  }
  if (span != nullptr) {
    span->end.record(cuda::current_stream(log.events[index].device));
    span->ended = true;
    span->end_order = ++log.spans_ended;
  }
  if (r.options.profile_memory && device) log.events[index].memory_delta = allocated_bytes(*device) - memory_before;
  end_event(r, log, index);
}

}  // namespace

ThreadLog& Recording::new_log() {
  logs.push_back(std::make_unique<ThreadLog>());
  logs.back()->thread = static_cast<int>(logs.size());
  return *logs.back();
}

Recording* thread_recording() { return t_state == nullptr ? nullptr : t_state->recording.get(); }
ThreadLog* thread_log() { return t_state == nullptr ? nullptr : t_state->log; }

void attach_thread(const std::shared_ptr<Recording>& r) {
  ANATOMY_CHECK(t_state == nullptr, ValueError,
                "profiler: this thread already records into a profile (one at a time per thread)");
  ANATOMY_CHECK(r->active.load(), ValueError, "profiler::ThreadScope: the profile is not recording");
  auto* st = new ThreadState;
  st->recording = r;
  {
    std::lock_guard<std::mutex> lock(r->mutex);
    st->log = &r->new_log();
  }
  st->included_before = dispatch::tls_local_key_set.included;
  dispatch::tls_local_key_set.included = st->included_before.add(DispatchKey::Profiler);
  t_state = st;
}

void detach_thread() {
  ThreadState* st = t_state;
  if (st == nullptr) return;
  dispatch::tls_local_key_set.included = st->included_before;
  t_state = nullptr;
  delete st;
}

namespace {

int64_t begin_event(Recording& r, ThreadLog& log, std::string name, bool is_range, const std::string* op_name) {
  Event e;
  e.name = std::move(name);
  e.is_range = is_range;
  e.thread = log.thread;
  e.depth = static_cast<int>(log.open.size());
  e.parent = log.open.empty() ? -1 : log.open.back();
  if (const autograd::Node* node = autograd::current_backward_node()) {
    e.autograd_node = node->name();
    e.autograd_sequence_nr = node->sequence_nr();
  }
  e.cpu_start_us = r.now_us();
  log.events.push_back(std::move(e));
  log.op_names.push_back(op_name);
  log.event_shapes.emplace_back(static_cast<uint32_t>(log.shapes.size()), 0);
  const auto index = static_cast<int64_t>(log.events.size() - 1);
  log.open.push_back(index);
  return index;
}

}  // namespace

int64_t begin_operator(Recording& r, ThreadLog& log, const std::string& op_name) {
  return begin_event(r, log, std::string(), false, &op_name);
}

int64_t begin_range(Recording& r, ThreadLog& log, std::string name) {
  return begin_event(r, log, std::move(name), true, nullptr);
}

void end_event(Recording& r, ThreadLog& log, int64_t index) {
  log.events[static_cast<size_t>(index)].cpu_end_us = r.now_us();
  // Events end innermost first; an exception may unwind several at once.
  while (!log.open.empty() && log.open.back() >= index) log.open.pop_back();
}

void finish(Recording& r) {
  // Device times: each span's events against its device's reference event, placed at the host
  // time the reference was recorded (the device reaches it no earlier). A stream runs its work in
  // order, so waiting for the end event recorded last on each stream waits for all of its spans.
  for (auto& log : r.logs) {
    std::vector<DeviceSpan*> last_ended;  // one per stream
    for (auto& span : log->spans) {
      if (!span->ended) continue;
      const Event& e = log->events[span->event];
      auto same_stream = [&](DeviceSpan* s) { return log->events[s->event].stream == e.stream; };
      auto it = std::find_if(last_ended.begin(), last_ended.end(), same_stream);
      if (it == last_ended.end()) {
        last_ended.push_back(span.get());
      } else if ((*it)->end_order < span->end_order) {
        *it = span.get();
      }
    }
    for (DeviceSpan* span : last_ended) span->end.synchronize();
    for (auto& span : log->spans) {
      if (!span->ended) continue;
      Event& e = log->events[span->event];
      const Recording::Reference& ref = *r.references.at(e.device);
      e.device_start_us = ref.host_us + 1e3 * ref.event.elapsed_time(span->start);
      e.device_end_us = ref.host_us + 1e3 * ref.event.elapsed_time(span->end);
    }
    return_spans(log->spans);
    // The names and shapes, written out now.
    for (size_t i = 0; i < log->events.size(); ++i) {
      Event& e = log->events[i];
      if (log->op_names[i] != nullptr) e.name = *log->op_names[i];
      const auto [first, count] = log->event_shapes[i];
      for (uint32_t k = first; k < first + count; ++k) e.input_shapes.push_back(shape_string(*log, log->shapes[k]));
    }
  }
  // One list, parents renumbered: the logs one after another, then sorted by start time.
  std::vector<std::pair<double, std::pair<size_t, size_t>>> order;  // (start, (log, index))
  for (size_t l = 0; l < r.logs.size(); ++l) {
    for (size_t i = 0; i < r.logs[l]->events.size(); ++i) order.push_back({r.logs[l]->events[i].cpu_start_us, {l, i}});
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::vector<int64_t>> new_index(r.logs.size());
  for (size_t l = 0; l < r.logs.size(); ++l) new_index[l].resize(r.logs[l]->events.size());
  for (size_t k = 0; k < order.size(); ++k)
    new_index[order[k].second.first][order[k].second.second] = static_cast<int64_t>(k);
  r.merged.clear();
  r.merged.reserve(order.size());
  for (const auto& [start, at] : order) {
    Event e = std::move(r.logs[at.first]->events[at.second]);
    if (e.parent >= 0) e.parent = new_index[at.first][static_cast<size_t>(e.parent)];
    r.merged.push_back(std::move(e));
  }
  r.logs.clear();
}

ANATOMY_LIBRARY_IMPL(_, Profiler, m) { m.fallback(&profiler_fallback, "profiler_fallback"); }

}  // namespace anatomy::profiler
