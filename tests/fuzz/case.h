// One fuzz case as data, and its one-line text form: the random generator writes cases, the
// corpus stores them, and both run through the same parser, so a printed reproduction replays
// exactly what ran.
//
//   case    := call { " | " call } [ " => error" | " => ok" ] [ " # comment" ]
//   call    := OP { " " arg }          (after "|", the previous call's first result is `self`)
//   arg     := tensor | INT | "none" | "[" INT,... "]" | scalar | "true" | "false" | DTYPE
//            | "(" tensor-or-none,... ")"
//   tensor  := DTYPE "[" sizes "]" [ "/[" strides "]" ] [ "+" offset ] [ "=" number
//            | "={" number,... "}" ] [ "^" ]
//
// A tensor without "/" or "+" is made by `empty` (a fresh contiguous tensor of its own); with
// them it is an `as_strided` view of a storage just large enough for the layout. Values fill the
// storage in order (a fixed pattern, one number, or a list repeated). "^" makes it a leaf that
// requires grad. Examples: `fp32[3,2]`, `fp32[2,3]/[1,2]+1`, `bool[1,3]=1`, `int64[3]={0,2,-1}`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy_fuzz {

// A number as written: a scalar argument or a fill value.
struct Number {
  enum class Kind : uint8_t { Int, Float, Bool } kind = Kind::Int;
  int64_t i = 0;
  double d = 0;
  static Number of_int(int64_t v) { return {Kind::Int, v, 0}; }
  static Number of_float(double v) { return {Kind::Float, 0, v}; }
  static Number of_bool(bool v) { return {Kind::Bool, v ? 1 : 0, 0}; }
};

struct TensorSpec {
  anatomy::DType dtype = anatomy::DType::Float32;
  std::vector<int64_t> sizes;
  std::optional<std::vector<int64_t>> strides;  // none: contiguous
  int64_t offset = 0;
  enum class Fill : uint8_t { Pattern, Constant, Values } fill = Fill::Pattern;
  std::vector<Number> values;  // one for Constant, the cycle for Values
  bool requires_grad = false;
};

struct Chained {};  // `self` of a call after "|": the previous call's first result
using TensorList = std::vector<std::optional<TensorSpec>>;
// The argument kinds, one letter each in an operator's signature (catalogue.h):
//   T tensor, X tensor list (entries may be none), i int, o optional int, l int list,
//   L optional int list (a reduction's dims: none reduces every dim), s scalar, b bool, t dtype,
//   u optional dtype.
using Arg = std::variant<Chained, TensorSpec, TensorList, int64_t, std::optional<int64_t>, std::vector<int64_t>,
                         std::optional<std::vector<int64_t>>, Number, bool, std::optional<anatomy::DType>>;

struct OpDef;
struct Call {
  const OpDef* op = nullptr;
  std::vector<Arg> args;  // one per signature letter
};

struct Case {
  std::vector<Call> calls;
  enum class Expect : uint8_t { Any, Error, Ok } expect = Expect::Any;
};

// The text form. parse_case throws ParseError with the column and what was expected.
struct ParseError {
  std::string message;
};
std::string format_case(const Case& c);
Case parse_case(std::string_view line);
// One call; `chained`: its self is the previous result and is not written.
std::string format_call(const Call& call);
Call parse_call(std::string_view text, bool chained);

// Pieces the catalogue and generator share.
std::string format_number(const Number& n);
std::string format_tensor(const TensorSpec& t);

}  // namespace anatomy_fuzz
