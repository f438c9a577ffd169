// An NVTX tool for tests: an injection library that NVTX loads from NVTX_INJECTION64_PATH at the
// process's first NVTX call, as it loads Nsight Systems' own. It takes the core module's range
// push and pop and records them ("+name", "-"), so that a test sees the NVTX ranges the engine
// emits (tests/gpu/test_cuda_nvtx.cpp reads them through anatomy_nvtx_recorder_log).
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <string>

namespace {

std::mutex g_mutex;
std::string g_log;       // "+name\n" per push, "-\n" per pop
std::string g_snapshot;  // what the last anatomy_nvtx_recorder_log returned
int g_depth = 0;

int NVTX_API push_a(const char* message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log += "+";
  g_log += message == nullptr ? "" : message;
  g_log += "\n";
  return g_depth++;
}

int NVTX_API pop() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log += "-\n";
  return g_depth > 0 ? --g_depth : -1;
}

}  // namespace

extern "C" {

// NVTX's entry point for a tool: called once per NVTX instance that initializes (each module that
// includes the header-only NVTX has its own), with that instance's export table.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) == 0 || table == nullptr ||
      size <= NVTX_CBID_CORE_RangePop) {
    return 0;
  }
  *table[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(&push_a);
  *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  return 1;
}

// The pushes and pops recorded since the last clear, one per line.
__attribute__((visibility("default"))) const char* anatomy_nvtx_recorder_log() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_snapshot = g_log;
  return g_snapshot.c_str();
}

__attribute__((visibility("default"))) void anatomy_nvtx_recorder_clear() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_log.clear();
}

}  // extern "C"
