// visit_dtype for the .cu files: calls a generic lambda with a tag of the dtype's C++ type,
// without the error machinery of core/dtype_visit.h (which needs fmt). A launcher reports a dtype
// it does not take itself.
//
//   const bool ok = cuda::dtype_switch(dtype, [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     return launch_for<T>(...);   // false: not for this dtype
//   });
#pragma once

#include "anatomy/core/dtype.h"

namespace anatomy::cuda {

template <typename T>
struct TypeTag {
  using type = T;
};

// f(TypeTag<T>{}) for dtype's type T; f returns whether it handled T. False for an unknown dtype.
template <typename F>
bool dtype_switch(DType dtype, F&& f) {
  switch (dtype) {
#define ANATOMY_CUDA_DTYPE_CASE(type, name, short_name, long_name) \
  case DType::name:                                                \
    return f(TypeTag<type>{});
    ANATOMY_FORALL_DTYPES(ANATOMY_CUDA_DTYPE_CASE)
#undef ANATOMY_CUDA_DTYPE_CASE
  }
  return false;
}

}  // namespace anatomy::cuda
