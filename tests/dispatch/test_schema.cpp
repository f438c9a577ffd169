// Tests for the operator schema parser: the accepted syntax, round trips and error messages.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "anatomy/dispatch/schema.h"

using namespace anatomy::dispatch;

namespace {

const std::vector<std::string> kExamples = {
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "empty(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "split(Tensor self, int split_size, int dim=0) -> Tensor[]",
    "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "noop(Tensor self) -> ()",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1e-05) -> Tensor",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "to.dtype(Tensor self, ScalarType dtype, bool non_blocking=False, bool copy=False) -> Tensor",
    "print(str s) -> ()",
};

// Returns the error message, or "" (failing the check) when parsing succeeds.
std::string parse_error(const std::string& text) {
  try {
    parse_schema(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  FAIL_CHECK("expected std::invalid_argument for: " << text);
  return "";
}

}  // namespace

TEST_CASE("add.Tensor: overload name, kwarg-only Scalar default") {
  Schema s = parse_schema(kExamples[0]);
  CHECK(s.name == "add");
  CHECK(s.overload_name == "Tensor");
  CHECK(s.full_name() == "add.Tensor");
  REQUIRE(s.arguments.size() == 3);
  CHECK(s.arguments[0].name == "self");
  CHECK(s.arguments[0].type == ArgType::Tensor);
  CHECK_FALSE(s.arguments[0].kwarg_only);
  CHECK_FALSE(s.arguments[0].default_value);
  CHECK_FALSE(s.arguments[1].kwarg_only);
  CHECK(s.arguments[2].name == "alpha");
  CHECK(s.arguments[2].type == ArgType::Scalar);
  CHECK(s.arguments[2].kwarg_only);
  CHECK(s.arguments[2].default_value == "1");
  REQUIRE(s.returns.size() == 1);
  CHECK(s.returns[0].type == ArgType::Tensor);
  CHECK(s.returns[0].name.empty());
  CHECK_FALSE(s.returns[0].alias);
  CHECK_FALSE(s.is_inplace_or_out());
}

TEST_CASE("empty: int list and optional kwarg-only arguments defaulting to None") {
  Schema s = parse_schema(kExamples[1]);
  CHECK(s.full_name() == "empty");
  CHECK(s.overload_name.empty());
  REQUIRE(s.arguments.size() == 3);
  CHECK(s.arguments[0].type == ArgType::IntList);
  CHECK_FALSE(s.arguments[0].kwarg_only);
  CHECK(s.arguments[1].type == ArgType::OptionalScalarType);
  CHECK(s.arguments[1].kwarg_only);
  CHECK(s.arguments[1].default_value == "None");
  CHECK(s.arguments[2].type == ArgType::OptionalDevice);
  CHECK(s.arguments[2].kwarg_only);
  CHECK(s.arguments[2].default_value == "None");
}

TEST_CASE("max.dim: named tuple return") {
  Schema s = parse_schema(kExamples[2]);
  CHECK(s.full_name() == "max.dim");
  CHECK(s.arguments[1].type == ArgType::Int);
  CHECK(s.arguments[2].type == ArgType::Bool);
  CHECK(s.arguments[2].default_value == "False");
  REQUIRE(s.returns.size() == 2);
  CHECK(s.returns[0].name == "values");
  CHECK(s.returns[1].name == "indices");
  CHECK(s.returns[1].type == ArgType::Tensor);
}

TEST_CASE("split: list return") {
  Schema s = parse_schema(kExamples[3]);
  CHECK(s.arguments[2].default_value == "0");
  REQUIRE(s.returns.size() == 1);
  CHECK(s.returns[0].type == ArgType::TensorList);
  CHECK(s.to_string() == kExamples[3]);
}

TEST_CASE("copy_: write alias makes the operator in-place") {
  Schema s = parse_schema(kExamples[4]);
  REQUIRE(s.arguments[0].alias);
  CHECK(s.arguments[0].alias->set == 'a');
  CHECK(s.arguments[0].alias->is_write);
  CHECK_FALSE(s.arguments[1].alias);
  REQUIRE(s.returns[0].alias);
  CHECK(*s.returns[0].alias == AliasInfo{'a', true});
  CHECK(s.is_inplace_or_out());
}

TEST_CASE("transpose.int: read-only alias is a view, not in-place") {
  Schema s = parse_schema(kExamples[5]);
  REQUIRE(s.arguments[0].alias);
  CHECK(*s.arguments[0].alias == AliasInfo{'a', false});
  CHECK(*s.returns[0].alias == AliasInfo{'a', false});
  CHECK_FALSE(s.is_inplace_or_out());
}

TEST_CASE("noop and print: empty return") {
  CHECK(parse_schema(kExamples[6]).returns.empty());
  Schema p = parse_schema(kExamples[11]);
  CHECK(p.returns.empty());
  REQUIRE(p.arguments.size() == 1);
  CHECK(p.arguments[0].type == ArgType::String);
  CHECK(p.to_string() == "print(str s) -> ()");
}

TEST_CASE("where.self: argument named like the overload") {
  Schema s = parse_schema(kExamples[7]);
  CHECK(s.full_name() == "where.self");
  REQUIRE(s.arguments.size() == 3);
  CHECK(s.arguments[0].name == "condition");
  CHECK(s.arguments[1].name == "self");
}

TEST_CASE("layer_norm: optional tensors and a float default in exponent form") {
  Schema s = parse_schema(kExamples[8]);
  REQUIRE(s.arguments.size() == 5);
  CHECK(s.arguments[2].type == ArgType::OptionalTensor);
  CHECK(s.arguments[3].default_value == "None");
  CHECK(s.arguments[4].type == ArgType::Float);
  CHECK(s.arguments[4].default_value == "1e-05");
}

TEST_CASE("cat: tensor list argument") {
  Schema s = parse_schema(kExamples[9]);
  CHECK(s.arguments[0].type == ArgType::TensorList);
  CHECK(s.arguments[1].default_value == "0");
}

TEST_CASE("to.dtype: required ScalarType before defaulted bools") {
  Schema s = parse_schema(kExamples[10]);
  CHECK(s.arguments[1].type == ArgType::ScalarType);
  CHECK_FALSE(s.arguments[1].default_value);
  CHECK(s.arguments[3].default_value == "False");
}

TEST_CASE("every example round-trips through to_string") {
  for (const std::string& text : kExamples) {
    CAPTURE(text);
    Schema s = parse_schema(text);
    CHECK(s.to_string() == text);  // the examples are already canonical
    CHECK(parse_schema(s.to_string()) == s);
  }
}

TEST_CASE("whitespace is flexible and to_string canonicalizes it") {
  Schema s = parse_schema("  add . Tensor (Tensor  self,Tensor other ,\n\t*,Scalar alpha = 1 )->Tensor  ");
  CHECK(s == parse_schema(kExamples[0]));
  CHECK(s.to_string() == kExamples[0]);
  CHECK(parse_schema("copy_(Tensor ( a ! ) self) -> Tensor(a!)").arguments[0].alias == AliasInfo{'a', true});
  CHECK(parse_schema("f(int[] x=[ 0 , 1 ]) -> ()").arguments[0].default_value == "[0,1]");
}

TEST_CASE("SymInt and fixed-length int list spellings read as int and int list") {
  Schema s = parse_schema(
      "conv(Tensor input, int[2] stride=1, SymInt[] padding=[0,0], SymInt groups=1, "
      "SymInt? n=None, int[1]? dim=None, SymInt[]? sizes=None) -> Tensor");
  CHECK(s.arguments[1].type == ArgType::IntList);
  CHECK(s.arguments[1].default_value == "1");
  CHECK(s.arguments[2].type == ArgType::IntList);
  CHECK(s.arguments[3].type == ArgType::Int);
  CHECK(s.arguments[4].type == ArgType::OptionalInt);
  CHECK(s.arguments[5].type == ArgType::OptionalIntList);
  CHECK(s.arguments[6].type == ArgType::OptionalIntList);
  CHECK(s.to_string() ==
        "conv(Tensor input, int[] stride=1, int[] padding=[0,0], int groups=1, int? n=None, "
        "int[]? dim=None, int[]? sizes=None) -> Tensor");
  CHECK(parse_schema(s.to_string()) == s);
}

TEST_CASE("aliases on optional and list tensors, out= arguments, returns") {
  Schema s = parse_schema(
      "f.out(Tensor(a) self, Tensor(b)? maybe, Tensor(c)[] views, *, Tensor(d!) out) -> "
      "(Tensor(d!), Tensor(a)[] parts)");
  CHECK(s.arguments[1].type == ArgType::OptionalTensor);
  CHECK(s.arguments[1].alias == AliasInfo{'b', false});
  CHECK(s.arguments[2].type == ArgType::TensorList);
  CHECK(s.arguments[2].alias == AliasInfo{'c', false});
  CHECK(s.arguments[3].kwarg_only);
  CHECK(s.arguments[3].alias == AliasInfo{'d', true});
  REQUIRE(s.returns.size() == 2);
  CHECK(s.returns[0].name.empty());
  CHECK(s.returns[0].alias == AliasInfo{'d', true});
  CHECK(s.returns[1].type == ArgType::TensorList);
  CHECK(s.returns[1].name == "parts");
  CHECK(s.is_inplace_or_out());
  CHECK(s.to_string() ==
        "f.out(Tensor(a) self, Tensor(b)? maybe, Tensor(c)[] views, *, Tensor(d!) out) -> "
        "(Tensor(d!), Tensor(a)[] parts)");
  CHECK(parse_schema(s.to_string()) == s);
}

TEST_CASE("kwarg-only arguments may skip defaults after defaulted positionals") {
  Schema s = parse_schema("f(Tensor a, int b=1, *, int c, bool d=True, float e) -> Tensor");
  CHECK_FALSE(s.arguments[1].kwarg_only);
  CHECK(s.arguments[2].kwarg_only);
  CHECK_FALSE(s.arguments[2].default_value);
  CHECK(s.arguments[4].kwarg_only);
  CHECK(s.to_string() == "f(Tensor a, int b=1, *, int c, bool d=True, float e) -> Tensor");
  Schema only_kw = parse_schema("g(*, int[] size) -> Tensor");
  CHECK(only_kw.arguments[0].kwarg_only);
  CHECK(only_kw.to_string() == "g(*, int[] size) -> Tensor");
}

TEST_CASE("defaults are accepted per type and kept as literal text") {
  const std::vector<std::string> expected = {"-3",   "4",  "2",      "-0.5", "1.5e+3", "True",    "2.5", "False",
                                             "None", "[]", "[-1,2]", "7",    "'mean'", "\"sum\"", "None"};
  Schema ok = parse_schema(
      "f(int a=-3, int? b=4, float c=2, float d=-0.5, float? e=1.5e+3, bool f=True, "
      "Scalar g=2.5, Scalar h=False, Scalar? i=None, int[] j=[], int[] k=[-1,2], int[] l=7, "
      "str m='mean', str? n=\"sum\", str? o=None) -> ()");
  REQUIRE(ok.arguments.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(ok.arguments[i].name);
    CHECK(ok.arguments[i].default_value == expected[i]);
  }
  CHECK(parse_schema(ok.to_string()) == ok);
}

TEST_CASE("arg_type_name spells every type, and each spelling parses back") {
  const std::vector<std::pair<ArgType, std::string>> spellings = {
      {ArgType::Tensor, "Tensor"},
      {ArgType::OptionalTensor, "Tensor?"},
      {ArgType::TensorList, "Tensor[]"},
      {ArgType::Scalar, "Scalar"},
      {ArgType::OptionalScalar, "Scalar?"},
      {ArgType::Int, "int"},
      {ArgType::OptionalInt, "int?"},
      {ArgType::Float, "float"},
      {ArgType::OptionalFloat, "float?"},
      {ArgType::Bool, "bool"},
      {ArgType::IntList, "int[]"},
      {ArgType::OptionalIntList, "int[]?"},
      {ArgType::ScalarType, "ScalarType"},
      {ArgType::OptionalScalarType, "ScalarType?"},
      {ArgType::Device, "Device"},
      {ArgType::OptionalDevice, "Device?"},
      {ArgType::String, "str"},
      {ArgType::OptionalString, "str?"},
  };
  for (const auto& [type, name] : spellings) {
    CAPTURE(name);
    CHECK(arg_type_name(type) == name);
    Schema s = parse_schema("f(" + name + " x) -> " + name);
    CHECK(s.arguments[0].type == type);
    CHECK(s.returns[0].type == type);
  }
}

TEST_CASE("returns: single, parenthesized single, named tuple, list, none") {
  CHECK(parse_schema("f() -> int").returns[0].type == ArgType::Int);
  CHECK(parse_schema("f() -> ()").returns.empty());
  CHECK(parse_schema("f() -> ()").arguments.empty());
  Schema paren = parse_schema("f() -> (Tensor)");
  CHECK(paren == parse_schema("f() -> Tensor"));
  CHECK(paren.to_string() == "f() -> Tensor");
  Schema named = parse_schema("f() -> (Tensor out)");
  CHECK(named.returns[0].name == "out");
  CHECK(named.to_string() == "f() -> (Tensor out)");
  Schema mixed = parse_schema("f() -> (Tensor, int[] sizes, bool)");
  REQUIRE(mixed.returns.size() == 3);
  CHECK(mixed.returns[1].name == "sizes");
  CHECK(mixed.returns[2].type == ArgType::Bool);
  CHECK(parse_schema("f() -> Tensor[]").returns[0].type == ArgType::TensorList);
}

TEST_CASE("malformed schemas throw invalid_argument naming the schema and a hint") {
  struct Bad {
    std::string text;
    std::string hint;
  };
  const std::vector<Bad> cases = {
      {"", "an operator name"},
      {"(Tensor self) -> Tensor", "an operator name, found '('"},
      {"add.(Tensor self) -> Tensor", "an overload name"},
      {"add(Tensor self", "',' or ')' after an argument, found end of input"},
      {"add(Tensor self Tensor other) -> Tensor", "',' or ')' after an argument, found 'Tensor'"},
      {"add(Tensor self,) -> Tensor", "a type name, found ')'"},
      {"add(Tensor self) Tensor", "'->'"},
      {"add(Tensor self) -> Tensor )", "end of schema, found ')'"},
      {"add(Tensor self) -> Tensor out", "must be parenthesized"},
      {"add(Tensor self) -> Tensor @", "unexpected character '@'"},
      {"add(Tensr self) -> Tensor", "unknown type 'Tensr' (known: Tensor, Scalar, int"},
      {"add(bool? b) -> Tensor", "found 'bool?' (supported: Tensor, Tensor?"},
      {"add(float[] x) -> Tensor", "found 'float[]'"},
      {"add(Tensor[2] x) -> Tensor", "']' to close the list type"},
      {"add(Tensor self, Tensor self) -> Tensor", "'self' is already used"},
      {"add(Tensor self, int a=1, int b) -> Tensor", "follows a defaulted positional"},
      {"add(Tensor self, *) -> Tensor", "keyword-only arguments after '*'"},
      {"add(Tensor self, *, int a, *, int b) -> Tensor", "'*' may appear only once"},
      {"add(int(a) x) -> Tensor", "no alias annotation after 'int', found '(' (only Tensor types can alias)"},
      {"add(Tensor(ab!) x) -> Tensor", "single lowercase letter"},
      {"add(Tensor(a!) x) -> Tensor(b!)", "no argument is '(b)'"},
      {"add(Tensor self) -> (Tensor a, Tensor a)", "'a' is already used"},
      {"add(Tensor self, int x=None) -> Tensor",
       "an integer literal as the default of int argument 'x', found 'None' (only 'int?' can "
       "default to None)"},
      {"add(Tensor self, Tensor other=None) -> Tensor", "'Tensor?' can default to None"},
      {"add(Tensor? w=1) -> Tensor", "None as the default of Tensor? argument 'w', found '1'"},
      {"add(Tensor self, bool b=1) -> Tensor", "True or False"},
      {"add(Tensor self, int x=1.5) -> Tensor", "an integer literal as the default of int argument 'x', found '1.5'"},
      {"add(Tensor self, int x=Mean) -> Tensor", "found 'Mean'"},
      {"add(Tensor self, float x=abc) -> Tensor", "a number"},
      {"add(Tensor self, Scalar x='a') -> Tensor", "a number, True or False"},
      {"add(Tensor self, int[] x=[1,2.5]) -> Tensor", "an integer in the list default"},
      {"add(Tensor self, int[] x=[1 2]) -> Tensor", "',' or ']' in the list default"},
      {"add(Tensor self, str s=mean) -> Tensor", "a quoted string"},
      {"add(Tensor self, str s='mean) -> Tensor", "a closing ' for this string"},
      {"add(Tensor self, ScalarType t=float) -> Tensor",
       "no default for ScalarType argument 't', found 'float' (ScalarType arguments cannot have "
       "one; 'ScalarType?' can default to None)"},
      {"add(Tensor self, ScalarType? t=float) -> Tensor",
       "None as the default of ScalarType? argument 't', found 'float'"},
      {"add(Tensor self, int x=) -> Tensor", "a default value for 'x', found ')'"},
      {"add(Tensor self, float x=1e) -> Tensor", "digits in the number's exponent"},
      {"add(Tensor self, int x=12ab) -> Tensor", "a separator after the number"},
  };
  for (const Bad& bad : cases) {
    CAPTURE(bad.text);
    const std::string msg = parse_error(bad.text);
    CAPTURE(msg);
    CHECK(msg.find(bad.text) != std::string::npos);
    CHECK(msg.find(bad.hint) != std::string::npos);
  }
}

TEST_CASE("error messages give the column and point a caret at it") {
  const std::string msg = parse_error("add(Tensor self");
  CHECK(msg ==
        "invalid operator schema at column 16: expected ',' or ')' after an argument, found end "
        "of input\n"
        "  add(Tensor self\n"
        "                 ^");
  CHECK(parse_error("add(Tensor self, Tensr other) -> Tensor").find("column 18") != std::string::npos);
}
