// Operator schemas: the parsed form of a native_functions.yaml-style signature string, which
// the dispatcher uses to check registrations and to bind call arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace anatomy::dispatch {

// One value per spelling the parser accepts after normalization: `SymInt` is read as `int`
// and `int[N]` as `int[]`, because the engine treats symbolic sizes and fixed-length lists
// like their plain counterparts (the N is a binding hint, so it is not kept).
enum class ArgType {
  Tensor,
  OptionalTensor,
  TensorList,
  Scalar,
  OptionalScalar,
  Int,
  OptionalInt,
  Float,
  OptionalFloat,
  Bool,
  IntList,
  OptionalIntList,
  ScalarType,
  OptionalScalarType,
  Device,
  OptionalDevice,
  String,
  OptionalString,
  MemoryFormat,  // defaults: contiguous_format, channels_last, channels_last_3d, preserve_format
  OptionalMemoryFormat,
};

// The canonical schema spelling, e.g. "Tensor?", "int[]", "str".
std::string_view arg_type_name(ArgType type);

// "(a)" marks a view that shares storage with every other value in set 'a'; "(a!)" also says
// the operator writes through it, which is what makes an operator in-place or out=.
struct AliasInfo {
  char set = 0;
  bool is_write = false;

  bool operator==(const AliasInfo&) const = default;
};

struct Argument {
  std::string name;
  ArgType type = ArgType::Tensor;
  std::optional<AliasInfo> alias;
  bool kwarg_only = false;
  // Kept as literal text ("1", "None", "False", "1e-05", "[0,1]", "'mean'") so a schema
  // re-prints exactly; list defaults are stored without spaces. The parser has already
  // checked that the literal fits the type.
  std::optional<std::string> default_value;

  bool operator==(const Argument&) const = default;
};

struct Return {
  std::string name;  // empty unless the schema names it, as in "-> (Tensor values, ...)"
  ArgType type = ArgType::Tensor;
  std::optional<AliasInfo> alias;

  bool operator==(const Return&) const = default;
};

struct Schema {
  std::string name;           // "add"
  std::string overload_name;  // "Tensor", or "" when the schema has no ".overload"
  // Keyword-only arguments follow all positional ones; to_string() relies on that order.
  std::vector<Argument> arguments;
  std::vector<Return> returns;

  std::string full_name() const;  // "add.Tensor", or "add" without an overload
  // Canonical spelling with single spaces; parse_schema(s.to_string()) == s.
  std::string to_string() const;
  bool is_inplace_or_out() const;  // some argument carries a write alias "(x!)"

  bool operator==(const Schema&) const = default;
};

// Parses e.g. "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
//
// Throws std::invalid_argument on malformed input, with a message that quotes the schema
// text, gives the 1-based column, and says what was expected there. The error stays a
// standard type so this module depends on nothing else in the project; the dispatcher
// wraps it into anatomy::ValueError when it registers an operator.
Schema parse_schema(std::string_view text);

}  // namespace anatomy::dispatch
