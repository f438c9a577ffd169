// The umbrella header: everything a program embedding anatomy needs.
//
//   #include <anatomy/anatomy.h>
//   auto a = anatomy::randn({2, 3});
//   auto b = a.t().contiguous();
//
// The CUDA device API (devices, streams, events, device memory) is <anatomy/cuda.h>; the CPU
// allocator's counters are here (alloc::cpu_allocator_stats). What a backend defined outside the
// engine registers with (an allocator, the empty tensors its kernels make) is <anatomy/backend.h>.
#pragma once

#include "anatomy/alloc/cpu_memory_stats.h"
#include "anatomy/amp/autocast_mode.h"
#include "anatomy/amp/grad_scaler.h"
#include "anatomy/autograd/autograd.h"
#include "anatomy/autograd/autograd_fallback.h"
#include "anatomy/autograd/custom_function.h"
#include "anatomy/autograd/gradcheck.h"
#include "anatomy/core/call_path.h"
#include "anatomy/core/device.h"
#include "anatomy/core/dtype.h"
#include "anatomy/core/error.h"
#include "anatomy/core/generator.h"
#include "anatomy/core/iteration_plan.h"
#include "anatomy/core/parallel.h"
#include "anatomy/core/precision_switches.h"
#include "anatomy/core/scalar.h"
#include "anatomy/core/tensor.h"
#include "anatomy/core/type_promotion.h"
#include "anatomy/dispatch/dispatcher.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/print.h"
#include "anatomy/dispatch/ops/tensor_index.h"
#include "anatomy/dispatch/trace.h"
#include "anatomy/dispatch/tracer.h"
#include "anatomy/nn/optim/lr_scheduler.h"
#include "anatomy/nn/optim/optim.h"
