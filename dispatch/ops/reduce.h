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

// ---- out= forms (dispatch/ops/reduce_out.cpp) ----
// Each writes the reduction above of the same arguments into `out`, which must already have the
// result's shape (out= never resizes here: a wrong shape is a ValueError) and a dtype the result
// casts to (same-kind casting, as in PyTorch); `out` may overlap `self`. A bad `out` raises
// before anything is written. With an input that requires grad (in grad mode) the differentiable
// ones raise NotImplementedError, as PyTorch's do (autograd/out_forms.cpp).
Tensor sum_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
               std::optional<DType> dtype = std::nullopt);
Tensor mean_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
                std::optional<DType> dtype = std::nullopt);
Tensor prod_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false,
                std::optional<DType> dtype = std::nullopt);
Tensor amax_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false);
Tensor amin_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false);
Tensor argmax_out(const Tensor& out, const Tensor& self, std::optional<int64_t> dim = std::nullopt,
                  bool keepdim = false);
Tensor argmin_out(const Tensor& out, const Tensor& self, std::optional<int64_t> dim = std::nullopt,
                  bool keepdim = false);
Tensor var_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim = std::nullopt, double correction = 1,
               bool keepdim = false);
Tensor std_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim = std::nullopt, double correction = 1,
               bool keepdim = false);
Tensor norm_out(const Tensor& out, const Tensor& self, const Scalar& p = 2, OptionalIntArrayRef dim = std::nullopt,
                bool keepdim = false);
Tensor logsumexp_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false);
Tensor any_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false);
Tensor all_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false);
Tensor count_nonzero_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim = std::nullopt);
// max / min along one dim into (values, indices): `indices` must be int64 and neither may overlap
// the other. Returns the pair of out tensors.
std::tuple<Tensor, Tensor> max_out(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t dim,
                                   bool keepdim = false);
std::tuple<Tensor, Tensor> min_out(const Tensor& values, const Tensor& indices, const Tensor& self, int64_t dim,
                                   bool keepdim = false);

// ---- statistics (dispatch/ops/statistics.cpp; composites of the reductions above) ----
// (variance or standard deviation, mean) in one call.
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, double correction = 1,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, double correction = 1,
                                    bool keepdim = false);
// sum and mean with NaN left out (nanmean: floating only; NaN where every element is NaN).
Tensor nansum(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
              std::optional<DType> dtype = std::nullopt);
Tensor nanmean(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
               std::optional<DType> dtype = std::nullopt);
// (amin, amax) over one dim or every dim; no elements to reduce raises.
std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// The lower median (of an even count, the smaller middle value); NaN where a NaN is in the
// row, with the index of the first NaN. Without a dim: over every element (an empty floating
// tensor gives NaN).
Tensor median(const Tensor& self);
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim = false);
// The k-th smallest (k from 1) along dim, NaN larger than every number, and its index; among
// equal values, the k-th in input order.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim = -1, bool keepdim = false);
// The most frequent value along dim (among equally frequent ones, the smallest; NaN values are
// each their own value, larger than every number) and the index of its last occurrence.
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim = -1, bool keepdim = false);

// ---- counting (dispatch/ops/counting.cpp; not differentiable) ----
// (sorted unique values of the flattened self, the inverse: each element's position among them,
// in self's shape, the count of each); the outputs not asked for are empty. NaN values are each
// their own. The values are always sorted.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false);
// How many times each value 0, 1, ..., max(self) (or minlength - 1) occurs in a 1-d tensor of
// non-negative integers, or the sum of the weights of its elements: int64, the weights' floating
// dtype, else fp64.
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights = std::nullopt, int64_t minlength = 0);
// A histogram of `bins` equal bins over [min, max] (min == max: the input's range); elements
// outside and NaN are not counted; floating inputs, the result in their dtype.
Tensor histc(const Tensor& self, int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0);

}  // namespace anatomy
