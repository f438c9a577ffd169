// The text form of a fuzz case (grammar in case.h): printing and parsing, each the other's
// inverse, so that every reproduction the driver prints is a valid corpus line.
#include "case.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "catalogue.h"

namespace anatomy_fuzz {
namespace {

std::string join_ints(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ",")); }

std::string format_arg(const Arg& arg) {
  struct Visitor {
    std::string operator()(const Chained&) const { return ""; }
    std::string operator()(const TensorSpec& t) const { return format_tensor(t); }
    std::string operator()(const TensorList& l) const {
      std::string s = "(";
      for (size_t k = 0; k < l.size(); ++k) s += (k ? "," : "") + (l[k] ? format_tensor(*l[k]) : std::string("none"));
      return s + ")";
    }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(const std::optional<int64_t>& v) const { return v ? std::to_string(*v) : "none"; }
    std::string operator()(const std::vector<int64_t>& v) const { return join_ints(v); }
    std::string operator()(const std::optional<std::vector<int64_t>>& v) const { return v ? join_ints(*v) : "none"; }
    std::string operator()(const Number& n) const { return format_number(n); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const std::optional<anatomy::DType>& d) const {
      return d ? std::string(anatomy::name(*d)) : "none";
    }
  };
  return std::visit(Visitor{}, arg);
}

// Reads one token (no spaces) against the grammar; every failure names what it expected.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}
  bool done() const { return pos_ == s_.size(); }
  char peek() const { return done() ? '\0' : s_[pos_]; }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(fmt::format("'{}'", c));
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError{fmt::format("expected {} at '{}' in '{}'", what, s_.substr(pos_), s_)};
  }
  // The text up to the next delimiter of the grammar.
  std::string_view word() {
    size_t start = pos_;
    while (!done() && std::string_view(",[](){}=/+^").find(s_[pos_]) == std::string_view::npos) ++pos_;
    // A sign belongs to the word when it starts it ("-1", "+3" never occurs) or follows an 'e'.
    while (!done() && s_[pos_] == '+' && pos_ > start && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E')) {
      ++pos_;
      while (!done() && std::string_view(",[](){}=/+^").find(s_[pos_]) == std::string_view::npos) ++pos_;
    }
    return s_.substr(start, pos_ - start);
  }
  int64_t integer() {
    std::string_view w = word();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (w.empty() || ec != std::errc() || end != w.data() + w.size()) fail("an integer (int64)");
    return v;
  }
  std::vector<int64_t> int_list() {
    std::vector<int64_t> v;
    expect('[');
    if (accept(']')) return v;
    do v.push_back(integer());
    while (accept(','));
    expect(']');
    return v;
  }
  Number number() {
    std::string w(word());
    if (w == "true" || w == "false") return Number::of_bool(w == "true");
    if (w == "nan") return Number::of_float(std::nan(""));
    if (w == "inf" || w == "-inf") return Number::of_float(w[0] == '-' ? -INFINITY : INFINITY);
    if (w.find_first_of(".eE") != std::string::npos) {
      char* end = nullptr;
      double d = std::strtod(w.c_str(), &end);
      if (w.empty() || *end != '\0') fail("a number");
      return Number::of_float(d);
    }
    pos_ -= w.size();
    return Number::of_int(integer());
  }
  anatomy::DType dtype() {
    std::string_view w = word();
    try {
      return anatomy::parse_dtype(w);
    } catch (const anatomy::Error&) {
      pos_ -= w.size();
      fail("a dtype");
    }
  }
  TensorSpec tensor() {
    TensorSpec t;
    t.dtype = dtype();
    t.sizes = int_list();
    if (accept('/')) t.strides = int_list();
    if (accept('+')) t.offset = integer();
    if (accept('=')) {
      if (accept('{')) {
        t.fill = TensorSpec::Fill::Values;
        do t.values.push_back(number());
        while (accept(','));
        expect('}');
      } else {
        t.fill = TensorSpec::Fill::Constant;
        t.values.push_back(number());
      }
    }
    t.requires_grad = accept('^');
    return t;
  }
  TensorList tensor_list() {
    TensorList l;
    expect('(');
    if (accept(')')) return l;
    do {
      if (s_.substr(pos_, 4) == "none") {
        pos_ += 4;
        l.emplace_back();
      } else {
        l.emplace_back(tensor());
      }
    } while (accept(','));
    expect(')');
    return l;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

Arg parse_arg(char kind, std::string_view token) {
  Scanner sc(token);
  Arg arg;
  switch (kind) {
    case 'T':
      arg = sc.tensor();
      break;
    case 'X':
      arg = sc.tensor_list();
      break;
    case 'i':
      arg = sc.integer();
      break;
    case 'o':
      if (token == "none") return std::optional<int64_t>();
      arg = std::optional<int64_t>(sc.integer());
      break;
    case 'l':
      arg = sc.int_list();
      break;
    case 'L':
      if (token == "none") return std::optional<std::vector<int64_t>>();
      arg = std::optional<std::vector<int64_t>>(sc.int_list());
      break;
    case 's':
      arg = sc.number();
      break;
    case 'b':
      if (token != "true" && token != "false") sc.fail("true or false");
      return token == "true";
    case 't':
      arg = std::optional<anatomy::DType>(sc.dtype());
      break;
    case 'u':
      if (token == "none") return std::optional<anatomy::DType>();
      arg = std::optional<anatomy::DType>(sc.dtype());
      break;
    default:
      throw ParseError{fmt::format("unknown signature letter '{}'", kind)};
  }
  if (!sc.done()) sc.fail("the end of the argument");
  return arg;
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  size_t k = 0;
  while (k < s.size()) {
    while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    size_t start = k;
    while (k < s.size() && s[k] != ' ' && s[k] != '\t') ++k;
    if (k > start) words.push_back(s.substr(start, k - start));
  }
  return words;
}

}  // namespace

Call parse_call(std::string_view text, bool chained) {
  std::vector<std::string_view> words = split_words(text);
  if (words.empty()) throw ParseError{"an empty call"};
  Call call;
  call.op = find_op(words[0]);
  if (!call.op) throw ParseError{fmt::format("unknown operator '{}'", words[0])};
  std::string_view sig = call.op->sig;
  size_t first = 0;
  if (chained) {
    if (sig.empty() || sig[0] != 'T')
      throw ParseError{fmt::format("{} takes no self, so it cannot follow '|'", words[0])};
    call.args.emplace_back(Chained{});
    first = 1;
  }
  // Trailing optional arguments (o, u) may be left out: `empty [2,3]` reads as `empty [2,3] none`.
  size_t given = words.size() - 1;
  while (given < sig.size() - first && (sig[first + given] == 'o' || sig[first + given] == 'u') &&
         sig.find_first_not_of("ou", first + given) == std::string_view::npos) {
    ++given;
  }
  if (given != sig.size() - first || words.size() - 1 > sig.size() - first) {
    throw ParseError{fmt::format("{} takes {} arguments (signature {}{}), got {}", words[0], sig.size() - first, sig,
                                 chained ? ", self chained" : "", words.size() - 1)};
  }
  for (size_t k = first; k < sig.size(); ++k) {
    const size_t w = k - first + 1;
    call.args.push_back(w < words.size() ? parse_arg(sig[k], words[w]) : parse_arg(sig[k], "none"));
  }
  return call;
}

std::string format_number(const Number& n) {
  switch (n.kind) {
    case Number::Kind::Bool:
      return n.i ? "true" : "false";
    case Number::Kind::Int:
      return std::to_string(n.i);
    case Number::Kind::Float: {
      if (std::isnan(n.d)) return "nan";
      if (std::isinf(n.d)) return n.d < 0 ? "-inf" : "inf";
      std::string s = fmt::format("{}", n.d);  // the shortest text that reads back exactly
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
  }
  return "?";
}

std::string format_tensor(const TensorSpec& t) {
  std::string s = std::string(anatomy::name(t.dtype)) + join_ints(t.sizes);
  if (t.strides) s += "/" + join_ints(*t.strides);
  if (t.offset != 0) s += "+" + std::to_string(t.offset);
  if (t.fill == TensorSpec::Fill::Constant) s += "=" + format_number(t.values.at(0));
  if (t.fill == TensorSpec::Fill::Values) {
    std::vector<std::string> v;
    for (const Number& n : t.values) v.push_back(format_number(n));
    s += fmt::format("={{{}}}", fmt::join(v, ","));
  }
  if (t.requires_grad) s += "^";
  return s;
}

std::string format_call(const Call& call) {
  std::string s = call.op->name;
  for (const Arg& a : call.args) {
    if (!std::holds_alternative<Chained>(a)) s += " " + format_arg(a);
  }
  return s;
}

std::string format_case(const Case& c) {
  std::string s;
  for (size_t k = 0; k < c.calls.size(); ++k) s += (k ? " | " : "") + format_call(c.calls[k]);
  if (c.expect == Case::Expect::Error) s += " => error";
  if (c.expect == Case::Expect::Ok) s += " => ok";
  return s;
}

Case parse_case(std::string_view line) {
  if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  Case c;
  if (size_t arrow = line.find("=>"); arrow != std::string_view::npos) {
    std::vector<std::string_view> w = split_words(line.substr(arrow + 2));
    if (w.size() != 1 || (w[0] != "error" && w[0] != "ok")) throw ParseError{"expected 'error' or 'ok' after '=>'"};
    c.expect = w[0] == "error" ? Case::Expect::Error : Case::Expect::Ok;
    line = line.substr(0, arrow);
  }
  size_t start = 0;
  while (true) {
    size_t bar = line.find('|', start);
    c.calls.push_back(parse_call(line.substr(start, bar == std::string_view::npos ? bar : bar - start), start > 0));
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return c;
}

}  // namespace anatomy_fuzz
