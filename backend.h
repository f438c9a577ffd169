// <anatomy/backend.h>: what a backend defined outside the engine registers with, on the
// PrivateUse1 slot (docs/dispatcher.md, "Adding a backend").
//
//   #include <anatomy/anatomy.h>
//   #include <anatomy/backend.h>
//   register_privateuse1_backend("mydev");                       // core/device.h
//   set_allocator(DeviceType::PrivateUse1, &my_allocator);       // an Allocator subclass
//   ANATOMY_LIBRARY_IMPL(aten, PrivateUse1, m) {                  // dispatch/library.h
//     m.impl("empty.memory_format", ANATOMY_KERNEL(my_empty));  // make_empty_tensor inside
//     ...
//   }
//
// The umbrella header has the tensor, the dispatcher's registration and the device names; this
// header adds the two pieces only a backend needs: the Allocator interface with DataPtr and the
// per-device-type registry (core/allocator.h), and the functions every backend's `empty` and
// `copy_` kernels make tensors and check their arguments with (core/empty_tensor.h).
#pragma once

#include "anatomy/anatomy.h"
#include "anatomy/core/allocator.h"
#include "anatomy/core/empty_tensor.h"
