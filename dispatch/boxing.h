// Boxing: moving a typed call's arguments onto a Stack and back, and naming each C++ argument
// type in schema terms so registration can check a kernel against its operator's schema.
//
// Each C++ parameter type T maps, through arg_traits<remove_cvref_t<T>>, to
//   - `type`: the schema type it stands for (Tensor, int[], ScalarType?, ...),
//   - `box(value)`: an IValue,
//   - `Holder` and `unbox(IValue&)`: an owning value that converts to T for the call (a
//     std::vector<int64_t> holder passes as an IntArrayRef span, for instance).
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "anatomy/dispatch/ivalue.h"
#include "anatomy/dispatch/schema.h"

namespace anatomy::dispatch {

template <typename T>
struct arg_traits;

#define ANATOMY_PLAIN_ARG(CppType, SchemaType)                             \
  template <>                                                              \
  struct arg_traits<CppType> {                                             \
    static constexpr ArgType type = ArgType::SchemaType;                   \
    using Holder = CppType;                                                \
    static IValue box(const CppType& v) { return IValue(v); }              \
    static Holder unbox(IValue& v) { return std::move(v.get<CppType>()); } \
  };
ANATOMY_PLAIN_ARG(Tensor, Tensor)
ANATOMY_PLAIN_ARG(Scalar, Scalar)
ANATOMY_PLAIN_ARG(int64_t, Int)
ANATOMY_PLAIN_ARG(double, Float)
ANATOMY_PLAIN_ARG(bool, Bool)
ANATOMY_PLAIN_ARG(DType, ScalarType)
ANATOMY_PLAIN_ARG(Device, Device)
ANATOMY_PLAIN_ARG(MemoryFormat, MemoryFormat)
#undef ANATOMY_PLAIN_ARG

template <>
struct arg_traits<IntArrayRef> {
  static constexpr ArgType type = ArgType::IntList;
  using Holder = std::vector<int64_t>;
  static IValue box(IntArrayRef v) { return IValue(std::vector<int64_t>(v.begin(), v.end())); }
  static Holder unbox(IValue& v) { return std::move(v.get<std::vector<int64_t>>()); }
};

// `int[]?` (the reductions' dim): None, or an owning list that the call sees as a span.
template <>
struct arg_traits<OptionalIntArrayRef> {
  static constexpr ArgType type = ArgType::OptionalIntList;
  struct Holder {
    std::optional<std::vector<int64_t>> list;
    operator OptionalIntArrayRef() const {
      return list ? OptionalIntArrayRef(*list) : OptionalIntArrayRef(std::nullopt);
    }
  };
  static IValue box(OptionalIntArrayRef v) { return v ? IValue(std::vector<int64_t>(v->begin(), v->end())) : IValue(); }
  static Holder unbox(IValue& v) {
    if (v.is_none()) return {};
    return {std::move(v.get<std::vector<int64_t>>())};
  }
};

template <>
struct arg_traits<TensorList> {
  static constexpr ArgType type = ArgType::TensorList;
  using Holder = std::vector<Tensor>;
  static IValue box(TensorList v) { return IValue(std::vector<Tensor>(v.begin(), v.end())); }
  static Holder unbox(IValue& v) { return std::move(v.get<std::vector<Tensor>>()); }
};

template <>
struct arg_traits<std::string_view> {
  static constexpr ArgType type = ArgType::String;
  using Holder = std::string;
  static IValue box(std::string_view v) { return IValue(std::string(v)); }
  static Holder unbox(IValue& v) { return std::move(v.get<std::string>()); }
};

// `str?` arguments (div's rounding_mode): the boxed value is an owning std::string.
template <>
struct arg_traits<std::optional<std::string_view>> {
  static constexpr ArgType type = ArgType::OptionalString;
  using Holder = std::optional<std::string>;
  static IValue box(const std::optional<std::string_view>& v) { return v ? IValue(std::string(*v)) : IValue(); }
  static Holder unbox(IValue& v) {
    if (v.is_none()) return std::nullopt;
    return std::move(v.get<std::string>());
  }
};

// optional<T> for the T above whose schema type has an optional form.
constexpr ArgType optional_of(ArgType t) {
  switch (t) {
    case ArgType::Tensor:
      return ArgType::OptionalTensor;
    case ArgType::Scalar:
      return ArgType::OptionalScalar;
    case ArgType::Int:
      return ArgType::OptionalInt;
    case ArgType::Float:
      return ArgType::OptionalFloat;
    case ArgType::ScalarType:
      return ArgType::OptionalScalarType;
    case ArgType::Device:
      return ArgType::OptionalDevice;
    case ArgType::MemoryFormat:
      return ArgType::OptionalMemoryFormat;
    default:
      return t;
  }
}

template <typename T>
struct arg_traits<std::optional<T>> {
  static constexpr ArgType type = optional_of(arg_traits<T>::type);
  static_assert(type != arg_traits<T>::type, "this type has no optional form in schemas");
  using Holder = std::optional<T>;
  static IValue box(const std::optional<T>& v) { return v ? arg_traits<T>::box(*v) : IValue(); }
  static Holder unbox(IValue& v) {
    if (v.is_none()) return std::nullopt;
    return arg_traits<T>::unbox(v);
  }
};

template <typename T>
using arg_traits_of = arg_traits<std::remove_cvref_t<T>>;

// Boxes a kernel's return value, which the kernel no longer needs: a Tensor is moved into its
// IValue rather than copied (a copy costs a reference-count round trip on every boxed call).
template <typename R>
IValue box_return(R& v) {
  if constexpr (std::is_same_v<std::remove_cvref_t<R>, Tensor>) {
    return IValue(std::move(v));
  } else {
    return arg_traits_of<R>::box(v);
  }
}

// ---- returns ----
template <typename R>
struct return_traits {  // a single value
  static std::vector<ArgType> types() { return {arg_traits_of<R>::type}; }
  static void push(Stack& s, R&& v) { s.push_back(box_return(v)); }
  static R pop(Stack& s) {
    IValue v = std::move(s.back());
    s.pop_back();
    return arg_traits_of<R>::unbox(v);
  }
};
template <>
struct return_traits<void> {
  static std::vector<ArgType> types() { return {}; }
};
template <>
struct return_traits<std::vector<Tensor>> {
  static std::vector<ArgType> types() { return {ArgType::TensorList}; }
  static void push(Stack& s, std::vector<Tensor>&& v) { s.emplace_back(std::move(v)); }
  static std::vector<Tensor> pop(Stack& s) {
    auto v = std::move(s.back().get<std::vector<Tensor>>());
    s.pop_back();
    return v;
  }
};
template <typename... Rs>
struct return_traits<std::tuple<Rs...>> {
  static std::vector<ArgType> types() { return {arg_traits_of<Rs>::type...}; }
  static void push(Stack& s, std::tuple<Rs...>&& v) {
    std::apply([&](auto&... r) { (s.push_back(box_return(r)), ...); }, v);
  }
  static std::tuple<Rs...> pop(Stack& s) {
    size_t base = s.size() - sizeof...(Rs);
    auto out = pop_at(s, base, std::index_sequence_for<Rs...>{});
    s.resize(base);
    return out;
  }

 private:
  template <size_t... I>
  static std::tuple<Rs...> pop_at(Stack& s, size_t base, std::index_sequence<I...>) {
    return std::tuple<Rs...>(arg_traits_of<Rs>::unbox(s[base + I])...);
  }
};

// The schema types of a C++ function type's parameters (a leading DispatchKeySet skipped).
template <typename Sig>
struct signature_traits;
template <typename Ret, typename... Args>
struct signature_traits<Ret(Args...)> {
  static std::vector<ArgType> arg_types() { return {arg_traits_of<Args>::type...}; }
  static std::vector<ArgType> return_types() { return return_traits<Ret>::types(); }
};

// Pushes typed arguments onto a stack.
template <typename... Args>
void box_args(Stack& s, const Args&... args) {
  s.reserve(s.size() + sizeof...(Args));
  (s.push_back(arg_traits_of<Args>::box(args)), ...);
}

// Calls `fn` with the last sizeof...(Args) stack entries, replacing them with its returns.
template <typename Ret, typename... Args, typename Fn>
void call_with_stack(Stack& s, Fn&& fn) {
  size_t base = s.size() - sizeof...(Args);
  auto holders = [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple<typename arg_traits_of<Args>::Holder...>(arg_traits_of<Args>::unbox(s[base + I])...);
  }
  (std::index_sequence_for<Args...>{});
  s.resize(base);
  if constexpr (std::is_void_v<Ret>) {
    std::apply(fn, holders);
  } else {
    return_traits<Ret>::push(s, std::apply(fn, holders));
  }
}

}  // namespace anatomy::dispatch
