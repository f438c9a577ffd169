// Running templated code for a runtime dtype (and, through core/convert.h, converting values
// between element types).
//
//   visit_dtype(t.dtype(), "fill_", [&]<typename T>() { fill<T>(...); });
//
// `op` names the operator in the TypeError raised for a dtype the visitor does not accept.
#pragma once

#include <type_traits>

#include "anatomy/core/convert.h"
#include "anatomy/core/dtype.h"
#include "anatomy/core/error.h"

namespace anatomy {

template <typename F>
decltype(auto) visit_dtype(DType t, const char* op, F&& f) {
  switch (t) {
#define ANATOMY_VISIT_CASE(type, name, short_name, long_name) \
  case DType::name:                                           \
    return f.template operator()<type>();
    ANATOMY_FORALL_DTYPES(ANATOMY_VISIT_CASE)
#undef ANATOMY_VISIT_CASE
  }
  ANATOMY_THROW(TypeError, "{}: unsupported dtype {}", op, static_cast<int>(t));
}

}  // namespace anatomy
