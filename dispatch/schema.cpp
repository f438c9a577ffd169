// Hand-written lexer and recursive-descent parser for operator schema strings.
#include "anatomy/dispatch/schema.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace anatomy::dispatch {

namespace {

constexpr std::array kAllTypes = {
    ArgType::Tensor,         ArgType::OptionalTensor,
    ArgType::TensorList,     ArgType::Scalar,
    ArgType::OptionalScalar, ArgType::Int,
    ArgType::OptionalInt,    ArgType::Float,
    ArgType::OptionalFloat,  ArgType::Bool,
    ArgType::IntList,        ArgType::OptionalIntList,
    ArgType::ScalarType,     ArgType::OptionalScalarType,
    ArgType::Device,         ArgType::OptionalDevice,
    ArgType::String,         ArgType::OptionalString,
    ArgType::MemoryFormat,   ArgType::OptionalMemoryFormat,
};

bool is_optional(ArgType t) { return arg_type_name(t).ends_with('?'); }

std::optional<ArgType> find_type(std::string_view spelling) {
  for (ArgType t : kAllTypes)
    if (arg_type_name(t) == spelling) return t;
  return std::nullopt;
}

// Only Tensor types can alias, so the annotation always goes right after "Tensor":
// "Tensor(a!)", "Tensor(a)?", "Tensor(a)[]".
std::string type_text(ArgType type, const std::optional<AliasInfo>& alias) {
  std::string_view name = arg_type_name(type);
  if (!alias) return std::string(name);
  constexpr std::string_view base = "Tensor";
  return fmt::format("{}({}{}){}", base, alias->set, alias->is_write ? "!" : "", name.substr(base.size()));
}

enum class Tok { Ident, Number, String, Punct, Arrow, End };

struct Token {
  Tok kind;
  std::string_view text;
  size_t pos;
  bool integral = false;  // Number only: decides int vs float defaults
};

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::string describe(const Token& t) {
  return t.kind == Tok::End ? std::string("end of input") : fmt::format("'{}'", t.text);
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) { lex(); }

  Schema parse() {
    Schema s;
    s.name = expect_ident("an operator name");
    if (accept(".")) s.overload_name = expect_ident("an overload name after '.'");
    expect("(", "'(' to open the argument list");
    parse_arguments(s);
    expect("->", "'->' before the return type");
    parse_returns(s);
    if (peek().kind != Tok::End) {
      // The common slip is naming a lone return without the parentheses it needs.
      if (peek().kind == Tok::Ident && s.returns.size() == 1)
        fail(peek(), "end of schema, found " + describe(peek()) +
                         " (a named return must be parenthesized, e.g. '-> (Tensor out)')");
      expected(peek(), "end of schema");
    }
    return s;
  }

 private:
  [[noreturn]] void fail(const Token& where, const std::string& what) const {
    throw std::invalid_argument(fmt::format("invalid operator schema at column {}: expected {}\n  {}\n  {:>{}}",
                                            where.pos + 1, what, text_, "^", where.pos + 1));
  }
  [[noreturn]] void expected(const Token& where, std::string_view what) const {
    fail(where, fmt::format("{}, found {}", what, describe(where)));
  }

  void lex() {
    size_t i = 0;
    auto emit = [&](Tok kind, size_t start, bool integral = false) {
      tokens_.push_back({kind, text_.substr(start, i - start), start, integral});
    };
    while (true) {
      while (i < text_.size() && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
      const size_t start = i;
      if (i == text_.size()) return emit(Tok::End, start);
      const char c = text_[i];
      if (is_ident_start(c)) {
        while (i < text_.size() && is_ident_char(text_[i])) ++i;
        emit(Tok::Ident, start);
      } else if (is_digit(c) || (c == '-' && i + 1 < text_.size() && is_digit(text_[i + 1]))) {
        bool integral = true;
        auto digits = [&] {
          while (i < text_.size() && is_digit(text_[i])) ++i;
        };
        ++i;
        digits();
        if (i < text_.size() && text_[i] == '.') {
          integral = false;
          ++i;
          digits();
        }
        if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
          integral = false;
          ++i;
          if (i < text_.size() && (text_[i] == '+' || text_[i] == '-')) ++i;
          if (i == text_.size() || !is_digit(text_[i])) fail({Tok::Number, {}, i}, "digits in the number's exponent");
          digits();
        }
        if (i < text_.size() && is_ident_char(text_[i])) fail({Tok::Number, {}, i}, "a separator after the number");
        emit(Tok::Number, start, integral);
      } else if (c == '\'' || c == '"') {
        const size_t close = text_.find(c, i + 1);
        if (close == std::string_view::npos)
          fail({Tok::String, {}, start}, fmt::format("a closing {} for this string", c));
        i = close + 1;
        emit(Tok::String, start);
      } else if (c == '-' && i + 1 < text_.size() && text_[i + 1] == '>') {
        i += 2;
        emit(Tok::Arrow, start);
      } else if (std::string_view("()[],*=?!.").find(c) != std::string_view::npos) {
        ++i;
        emit(Tok::Punct, start);
      } else {
        fail({Tok::Punct, {}, start}, fmt::format("a schema token, found unexpected character '{}'", c));
      }
    }
  }

  const Token& peek() const { return tokens_[next_]; }
  // Never moves past End, so error paths can always look at the current token.
  const Token& take() { return peek().kind == Tok::End ? peek() : tokens_[next_++]; }
  bool at(std::string_view punct) const {
    return (peek().kind == Tok::Punct || peek().kind == Tok::Arrow) && peek().text == punct;
  }
  bool accept(std::string_view punct) {
    if (!at(punct)) return false;
    ++next_;
    return true;
  }
  void expect(std::string_view punct, std::string_view what) {
    if (!accept(punct)) expected(peek(), what);
  }
  std::string expect_ident(std::string_view what) {
    if (peek().kind != Tok::Ident) expected(peek(), what);
    return std::string(take().text);
  }

  void parse_arguments(Schema& s) {
    if (accept(")")) return;
    bool kwarg_only = false;
    bool seen_default = false;
    while (true) {
      if (at("*")) {
        if (kwarg_only) expected(peek(), "an argument ('*' may appear only once)");
        take();
        kwarg_only = true;
        expect(",", "',' and keyword-only arguments after '*'");
        continue;
      }
      Argument arg;
      arg.kwarg_only = kwarg_only;
      std::tie(arg.type, arg.alias) = parse_type();
      const Token& name = peek();
      arg.name = expect_ident(fmt::format("an argument name after type '{}'", arg_type_name(arg.type)));
      for (const Argument& other : s.arguments)
        if (other.name == arg.name)
          fail(name, fmt::format("a unique argument name, but '{}' is already used", arg.name));
      if (accept("=")) {
        arg.default_value = parse_default(arg);
        seen_default = true;
      } else if (seen_default && !kwarg_only) {
        fail(name, fmt::format("a default for '{}' because it follows a defaulted positional "
                               "argument (or put it after '*')",
                               arg.name));
      }
      s.arguments.push_back(std::move(arg));
      if (accept(",")) continue;
      expect(")", "',' or ')' after an argument");
      return;
    }
  }

  void parse_returns(Schema& s) {
    auto check_alias = [&](const Token& where, const std::optional<AliasInfo>& alias) {
      if (!alias) return;
      for (const Argument& a : s.arguments)
        if (a.alias && a.alias->set == alias->set) return;
      fail(where, fmt::format("a return alias set that some argument has, but no argument is '({})'", alias->set));
    };
    if (!accept("(")) {
      const Token& where = peek();
      Return r;
      std::tie(r.type, r.alias) = parse_type();
      check_alias(where, r.alias);
      s.returns.push_back(std::move(r));
      return;
    }
    if (accept(")")) return;
    while (true) {
      const Token& where = peek();
      Return r;
      std::tie(r.type, r.alias) = parse_type();
      check_alias(where, r.alias);
      if (peek().kind == Tok::Ident) {
        const Token& name = peek();
        r.name = take().text;
        for (const Return& other : s.returns)
          if (other.name == r.name) fail(name, fmt::format("a unique return name, but '{}' is already used", r.name));
      }
      s.returns.push_back(std::move(r));
      if (accept(",")) continue;
      expect(")", "',' or ')' after a return");
      return;
    }
  }

  std::pair<ArgType, std::optional<AliasInfo>> parse_type() {
    const Token& where = peek();
    if (where.kind != Tok::Ident) expected(where, "a type name");
    std::string base(take().text);
    if (base == "SymInt") base = "int";
    static constexpr std::string_view kBases[] = {"Tensor", "Scalar",     "int",    "SymInt", "float",
                                                  "bool",   "ScalarType", "Device", "str",    "MemoryFormat"};
    if (std::find(std::begin(kBases), std::end(kBases), base) == std::end(kBases))
      fail(where, fmt::format("a type name, found unknown type '{}' (known: {})", where.text, fmt::join(kBases, ", ")));

    std::optional<AliasInfo> alias;
    if (at("(")) {
      if (base != "Tensor")
        fail(peek(), fmt::format("no alias annotation after '{}', found '(' (only Tensor types "
                                 "can alias)",
                                 where.text));
      take();
      const Token& set = peek();
      if (set.kind != Tok::Ident || set.text.size() != 1 || !std::islower(static_cast<unsigned char>(set.text[0])))
        expected(set, "a single lowercase letter naming the alias set, as in 'Tensor(a!)'");
      alias = AliasInfo{take().text[0], accept("!")};
      expect(")", "')' to close the alias annotation");
    }
    std::string spelled = base;
    if (accept("[")) {
      // int[N] is a fixed-length int list; other list types have no length.
      if (base == "int" && peek().kind == Tok::Number && peek().integral && peek().text[0] != '-') take();
      expect("]", "']' to close the list type");
      spelled += "[]";
    }
    if (accept("?")) spelled += "?";
    if (std::optional<ArgType> t = find_type(spelled)) return {*t, alias};
    std::vector<std::string_view> names;
    for (ArgType t : kAllTypes) names.push_back(arg_type_name(t));
    fail(where, fmt::format("a supported type, found '{}' (supported: {})", spelled, fmt::join(names, ", ")));
  }

  std::string parse_default(const Argument& arg) {
    enum Kind { kNone, kBool, kInt, kFloat, kString, kList, kOther };
    const Token& where = peek();
    std::string text;
    Kind kind = kOther;
    if (accept("[")) {
      // Stored without spaces so that "[0, 1]" and "[0,1]" compare equal.
      text = "[";
      kind = kList;
      while (!accept("]")) {
        if (text.size() > 1) expect(",", "',' or ']' in the list default");
        if (peek().kind != Tok::Number || !peek().integral) expected(peek(), "an integer in the list default");
        text += fmt::format("{}{}", text.size() > 1 ? "," : "", take().text);
      }
      text += "]";
    } else {
      const Token& t = take();
      text = t.text;
      if (t.kind == Tok::Number) kind = t.integral ? kInt : kFloat;
      else if (t.kind == Tok::String) kind = kString;
      else if (text == "None") kind = kNone;
      else if (text == "True" || text == "False") kind = kBool;
      else if (t.kind != Tok::Ident) expected(t, fmt::format("a default value for '{}'", arg.name));
    }

    const bool optional = is_optional(arg.type);
    if (kind == kNone && optional) return text;
    std::string_view want;  // what a non-None default must look like; empty when none is allowed
    bool ok = false;
    switch (arg.type) {
      case ArgType::Bool:
        want = "True or False";
        ok = kind == kBool;
        break;
      case ArgType::Int:
      case ArgType::OptionalInt:
        want = "an integer literal";
        ok = kind == kInt;
        break;
      case ArgType::Float:
      case ArgType::OptionalFloat:
        want = "a number";
        ok = kind == kInt || kind == kFloat;
        break;
      case ArgType::Scalar:
      case ArgType::OptionalScalar:
        want = "a number, True or False";
        ok = kind == kInt || kind == kFloat || kind == kBool;
        break;
      case ArgType::IntList:
      case ArgType::OptionalIntList:
        want = "an int list such as [] or [0,1], or a single integer";
        ok = kind == kList || kind == kInt;
        break;
      case ArgType::String:
      case ArgType::OptionalString:
        want = "a quoted string such as 'mean'";
        ok = kind == kString;
        break;
      case ArgType::MemoryFormat:
      case ArgType::OptionalMemoryFormat:
        want = "contiguous_format, channels_last, channels_last_3d or preserve_format";
        ok = text == "contiguous_format" || text == "channels_last" || text == "channels_last_3d" ||
             text == "preserve_format";
        break;
      default:
        break;
    }
    if (ok) return text;
    const std::string type(arg_type_name(arg.type));
    const bool has_optional = !optional && find_type(type + "?").has_value();
    if (want.empty() && !optional)
      fail(where, fmt::format("no default for {} argument '{}', found '{}' ({} arguments cannot "
                              "have one{})",
                              type, arg.name, text, type,
                              has_optional ? fmt::format("; '{}?' can default to None", type) : ""));
    const std::string hint = optional ? fmt::format("None{}{}", want.empty() ? "" : " or ", want) : std::string(want);
    const std::string note =
        kind == kNone && has_optional ? fmt::format(" (only '{}?' can default to None)", type) : "";
    fail(where, fmt::format("{} as the default of {} argument '{}', found '{}'{}", hint, type, arg.name, text, note));
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t next_ = 0;
};

}  // namespace

std::string_view arg_type_name(ArgType type) {
  switch (type) {
    case ArgType::Tensor:
      return "Tensor";
    case ArgType::OptionalTensor:
      return "Tensor?";
    case ArgType::TensorList:
      return "Tensor[]";
    case ArgType::Scalar:
      return "Scalar";
    case ArgType::OptionalScalar:
      return "Scalar?";
    case ArgType::Int:
      return "int";
    case ArgType::OptionalInt:
      return "int?";
    case ArgType::Float:
      return "float";
    case ArgType::OptionalFloat:
      return "float?";
    case ArgType::Bool:
      return "bool";
    case ArgType::IntList:
      return "int[]";
    case ArgType::OptionalIntList:
      return "int[]?";
    case ArgType::ScalarType:
      return "ScalarType";
    case ArgType::OptionalScalarType:
      return "ScalarType?";
    case ArgType::Device:
      return "Device";
    case ArgType::OptionalDevice:
      return "Device?";
    case ArgType::MemoryFormat:
      return "MemoryFormat";
    case ArgType::OptionalMemoryFormat:
      return "MemoryFormat?";
    case ArgType::String:
      return "str";
    case ArgType::OptionalString:
      return "str?";
  }
  return "<invalid ArgType>";
}

std::string Schema::full_name() const { return overload_name.empty() ? name : name + "." + overload_name; }

std::string Schema::to_string() const {
  std::vector<std::string> args;
  bool star = false;
  for (const Argument& a : arguments) {
    if (a.kwarg_only && !star) args.emplace_back("*"), star = true;
    args.push_back(fmt::format("{} {}{}{}", type_text(a.type, a.alias), a.name, a.default_value ? "=" : "",
                               a.default_value.value_or("")));
  }
  std::string ret;
  if (returns.size() == 1 && returns[0].name.empty()) {
    ret = type_text(returns[0].type, returns[0].alias);
  } else {
    std::vector<std::string> parts;
    for (const Return& r : returns) parts.push_back(type_text(r.type, r.alias) + (r.name.empty() ? "" : " " + r.name));
    ret = fmt::format("({})", fmt::join(parts, ", "));
  }
  return fmt::format("{}({}) -> {}", full_name(), fmt::join(args, ", "), ret);
}

bool Schema::is_inplace_or_out() const {
  for (const Argument& a : arguments)
    if (a.alias && a.alias->is_write) return true;
  return false;
}

Schema parse_schema(std::string_view text) { return Parser(text).parse(); }

}  // namespace anatomy::dispatch
