// anatomy.cuda's memory functions: the device allocator's counters (memory_stats in
// torch.cuda.memory_stats()'s flat "allocated_bytes.all.current" keys), summary, snapshot (its
// JSON, which anatomy/cuda.py loads into dicts and lists) and the ALLOC_CONF settings in effect.
#include <nanobind/stl/string.h>

#include <fmt/format.h>

#include "anatomy/cuda.h"
#include "bindings.h"
#include "cuda_device.h"

namespace anatomy::python {

namespace cuda = anatomy::cuda;

namespace {

nb::dict stats_dict(const alloc::MemoryStats& s) {
  nb::dict out;
  const std::pair<const char*, const alloc::StatArray*> arrays[] = {
      {"allocation", &s.allocation},
      {"segment", &s.segment},
      {"active", &s.active},
      {"inactive_split", &s.inactive_split},
      {"allocated_bytes", &s.allocated_bytes},
      {"reserved_bytes", &s.reserved_bytes},
      {"active_bytes", &s.active_bytes},
      {"inactive_split_bytes", &s.inactive_split_bytes},
      {"requested_bytes", &s.requested_bytes},
  };
  const std::pair<const char*, alloc::StatType> pools[] = {
      {"all", alloc::StatType::All}, {"small_pool", alloc::StatType::Small}, {"large_pool", alloc::StatType::Large}};
  for (const auto& [name, array] : arrays) {
    for (const auto& [pool, type] : pools) {
      const alloc::Stat& stat = (*array)[type];
      out[fmt::format("{}.{}.current", name, pool).c_str()] = stat.current;
      out[fmt::format("{}.{}.peak", name, pool).c_str()] = stat.peak;
      out[fmt::format("{}.{}.allocated", name, pool).c_str()] = stat.allocated;
      out[fmt::format("{}.{}.freed", name, pool).c_str()] = stat.freed;
    }
  }
  out["num_alloc_retries"] = s.num_alloc_retries;
  out["num_ooms"] = s.num_ooms;
  out["num_device_alloc"] = s.num_provider_allocs;
  out["num_device_free"] = s.num_provider_frees;
  out["num_sync_all_streams"] = s.num_sync_all_streams;
  return out;
}

nb::dict alloc_conf_dict(const alloc::AllocConf& c) {
  nb::dict out;
  out["backend"] = c.backend == alloc::AllocBackend::Native ? "native" : "cudaMallocAsync";
  // No limit reads as None, as an unset max_split_size_mb.
  out["max_split_size"] = c.max_split_size == std::numeric_limits<size_t>::max()
                              ? nb::object(nb::none())
                              : nb::object(nb::int_(c.max_split_size));
  out["max_non_split_rounding_size"] = c.max_non_split_rounding_size;
  nb::list divisions;
  for (size_t d : c.roundup_power2_divisions) divisions.append(d);
  out["roundup_power2_divisions"] = divisions;
  out["garbage_collection_threshold"] = c.garbage_collection_threshold;
  out["expandable_segments"] = c.expandable_segments;
  out["per_process_memory_fraction"] = c.per_process_memory_fraction;
  out["release_lock_on_cudamalloc"] = c.release_lock_on_cudamalloc;
  out["pinned_use_cuda_host_register"] = c.pinned_use_cuda_host_register;
  out["release_before_new_peak"] = c.release_before_new_peak;
  out["caching"] = c.caching;
  out["text"] = alloc::to_string(c);
  return out;
}

}  // namespace

void bind_cuda_memory(nb::module_& m) {
  auto device_arg = nb::arg("device") = nb::none();
  m.def(
      "_cuda_memory_stats", [](nb::handle d) { return stats_dict(cuda::memory_stats(cuda_device_index(d))); },
      device_arg);
  m.def(
      "_cuda_memory_allocated", [](nb::handle d) { return cuda::memory_allocated(cuda_device_index(d)); }, device_arg);
  m.def(
      "_cuda_max_memory_allocated", [](nb::handle d) { return cuda::max_memory_allocated(cuda_device_index(d)); },
      device_arg);
  m.def(
      "_cuda_memory_reserved", [](nb::handle d) { return cuda::memory_reserved(cuda_device_index(d)); }, device_arg);
  m.def(
      "_cuda_max_memory_reserved", [](nb::handle d) { return cuda::max_memory_reserved(cuda_device_index(d)); },
      device_arg);
  m.def(
      "_cuda_reset_peak_memory_stats", [](nb::handle d) { cuda::reset_peak_memory_stats(cuda_device_index(d)); },
      device_arg);
  m.def(
      "_cuda_memory_summary", [](nb::handle d) { return cuda::memory_summary(cuda_device_index(d)); }, device_arg);
  m.def("_cuda_empty_cache", &cuda::empty_cache);
  m.def(
      "_cuda_record_memory_history",
      [](bool enabled, size_t max_entries, nb::handle d) {
        cuda::record_memory_history(enabled, max_entries, cuda_device_index(d));
      },
      nb::arg("enabled"), nb::arg("max_entries") = 100000, device_arg);
  m.def(
      "_cuda_memory_snapshot_json",
      [](nb::handle d) { return alloc::to_json(cuda::memory_snapshot(cuda_device_index(d))); }, device_arg);
  m.def(
      "_cuda_alloc_conf", []() { return alloc_conf_dict(alloc::alloc_conf_from_env()); },
      "The allocator settings of ANATOMY_CUDA_ALLOC_CONF (else PYTORCH_CUDA_ALLOC_CONF), parsed.");
}

}  // namespace anatomy::python
