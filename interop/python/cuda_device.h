// The device argument of anatomy.cuda's functions, as torch.cuda reads it: None (the current
// device, -1 for the engine), an int, "cuda:1" or an anatomy.device of type cuda.
#pragma once

#include <nanobind/nanobind.h>

namespace anatomy::python {

// ValueError for a device that is not a CUDA device.
int cuda_device_index(nanobind::handle device);

}  // namespace anatomy::python
