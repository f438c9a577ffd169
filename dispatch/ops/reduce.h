// Reductions. `dim` is a set of dims (negative ones count from the end; repeats raise
// ValueError). std::nullopt reduces every dim; an empty list reduces none, so each output is
// the reduction of the one element at its place, as in NumPy's axis=() (docs/ops.md,
// "Reductions"). keepdim keeps reduced dims as size 1.
// Sums of fp16/bf16/fp32 accumulate in fp32 or wider with pairwise (cascade) summation, so
// error grows with log(n), not n; integer and bool sums give int64 unless `dtype` says.
#pragma once

#include <optional>
#include <tuple>

#include "anatomy/core/tensor.h"

namespace anatomy {

Tensor sum(const Tensor& self, std::optional<DType> dtype = std::nullopt);
Tensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor sum_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
               std::optional<DType> dtype = std::nullopt);
// Floating (or `dtype`) only: the mean of integers raises TypeError, as in PyTorch.
Tensor mean(const Tensor& self, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& self, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);

// The largest (smallest) element; NaN wins. Over an empty tensor: ValueError.
Tensor max(const Tensor& self);
Tensor min(const Tensor& self);
// Along one dim: values and the index of the first extreme element.
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false);
Tensor amin(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false);
// Index of the first extreme element (int64); without a dim, into the flattened tensor.
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

// Variance and standard deviation with Bessel-style `correction` (1: unbiased, 0: population).
Tensor var(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, double correction = 1, bool keepdim = false);
Tensor std(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, double correction = 1, bool keepdim = false);
// Vector norm over dim: p = 1, 2, inf (and -inf, 0, any other p > 0).
Tensor norm(const Tensor& self, const Scalar& p = 2, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false);
// log(sum(exp(x))) computed stably (the max is subtracted first).
Tensor logsumexp(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false);
// bool results.
Tensor any(const Tensor& self);
Tensor any(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false);
Tensor all(const Tensor& self);
Tensor all(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false);
// int64 count of non-zero elements.
Tensor count_nonzero(const Tensor& self, OptionalIntArrayRef dim = std::nullopt);

}  // namespace anatomy
