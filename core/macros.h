// Compiler and platform macros shared by every module.
#pragma once

// Functions and types that must run on both host and device (Half, BFloat16, Philox) are
// marked with ANATOMY_HOST_DEVICE; under a host compiler it expands to nothing.
#if defined(__CUDACC__)
#define ANATOMY_HOST_DEVICE __host__ __device__
#define ANATOMY_DEVICE_INLINE __device__ __forceinline__
#else
#define ANATOMY_HOST_DEVICE
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ANATOMY_LIKELY(x) __builtin_expect(!!(x), 1)
#define ANATOMY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ANATOMY_NOINLINE __attribute__((noinline))
#else
#define ANATOMY_LIKELY(x) (x)
#define ANATOMY_UNLIKELY(x) (x)
#define ANATOMY_NOINLINE
#endif

// Thread-locals on every operator call's path (the dispatcher's key sets, the small-block
// caches): the initial-exec model reads them with one fs-relative load instead of a call to
// __tls_get_addr. The model makes the library's whole TLS block static, and glibc keeps only
// about a kilobyte of static TLS for libraries loaded later with dlopen (a Python module loads
// libanatomy so): the library's thread_locals are a few hundred bytes in all, and anything
// larger lives on the heap behind a thread-local pointer (core/thread_block_cache.h).
#if defined(__GNUC__) || defined(__clang__)
#define ANATOMY_TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define ANATOMY_TLS_FAST
#endif
