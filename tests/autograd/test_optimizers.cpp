// The optimizers against torch.optim's formulas written out in plain doubles (Adam, AdamW with
// amsgrad, RMSprop centered with momentum, SGD Nesterov), parameter groups and their learning
// rates, state_dict round trips and strict loads, clip_grad_norm_, and the learning-rate
// schedules' values.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "../core/test_util.h"
#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

// A parameter of `values` (fp64) and a fixed gradient function: g = 2 * p + 1 per element.
Tensor param(std::vector<double> values) {
  return tensor(values, {static_cast<int64_t>(values.size())}, TensorOptions().dtype(DType::Float64)).requires_grad_();
}

void set_grads(const std::vector<Tensor>& ps) {
  for (const Tensor& p : ps) p.set_grad(p.detach() * 2 + 1);
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.detach()[i].item<double>());
  return out;
}

}  // namespace

TEST_CASE("optim: Adam and AdamW (amsgrad) follow torch.optim's update for several steps") {
  for (bool decoupled : {false, true}) {
    for (bool amsgrad : {false, true}) {
      CAPTURE(decoupled);
      CAPTURE(amsgrad);
      Tensor p = param({0.5, -1.5});
      const double lr = 0.1, b1 = 0.9, b2 = 0.99, eps = 1e-8, wd = 0.05;
      std::unique_ptr<optim::Optimizer> opt;
      if (decoupled)
        opt = std::make_unique<optim::AdamW>(
            std::vector<Tensor>{p},
            optim::AdamWOptions{
                .lr = lr, .beta1 = b1, .beta2 = b2, .eps = eps, .weight_decay = wd, .amsgrad = amsgrad});
      else
        opt = std::make_unique<optim::Adam>(
            std::vector<Tensor>{p},
            optim::AdamOptions{.lr = lr, .beta1 = b1, .beta2 = b2, .eps = eps, .weight_decay = wd, .amsgrad = amsgrad});
      std::vector<double> x = {0.5, -1.5}, m(2, 0), v(2, 0), vmax(2, 0);
      for (int t = 1; t <= 4; ++t) {
        set_grads({p});
        opt->step();
        for (size_t i = 0; i < 2; ++i) {
          double g = 2 * x[i] + 1;
          if (decoupled) x[i] *= 1 - lr * wd;
          else g += wd * x[i];
          m[i] = b1 * m[i] + (1 - b1) * g;
          v[i] = b2 * v[i] + (1 - b2) * g * g;
          vmax[i] = std::max(vmax[i], v[i]);
          const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
          x[i] -= lr / bc1 * m[i] / (std::sqrt(amsgrad ? vmax[i] : v[i]) / std::sqrt(bc2) + eps);
        }
        const std::vector<double> got = values(p);
        for (size_t i = 0; i < 2; ++i) CHECK(got[i] == doctest::Approx(x[i]).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("optim: RMSprop (centered, momentum, weight decay) and SGD (Nesterov) follow torch.optim") {
  Tensor p = param({1.0, -2.0});
  optim::RMSprop rms({p},
                     {.lr = 0.01, .alpha = 0.9, .eps = 1e-8, .weight_decay = 0.1, .momentum = 0.5, .centered = true});
  std::vector<double> x = {1.0, -2.0}, sq(2, 0), ga(2, 0), buf(2, 0);
  for (int t = 1; t <= 3; ++t) {
    set_grads({p});
    rms.step();
    for (size_t i = 0; i < 2; ++i) {
      const double g = 2 * x[i] + 1 + 0.1 * x[i];
      sq[i] = 0.9 * sq[i] + 0.1 * g * g;
      ga[i] = ga[i] + 0.1 * (g - ga[i]);
      const double avg = std::sqrt(sq[i] - ga[i] * ga[i]) + 1e-8;
      buf[i] = 0.5 * buf[i] + g / avg;
      x[i] -= 0.01 * buf[i];
    }
    const std::vector<double> got = values(p);
    for (size_t i = 0; i < 2; ++i) CHECK(got[i] == doctest::Approx(x[i]).epsilon(1e-12));
  }
  Tensor q = param({3.0});
  optim::SGD sgd({q}, {.lr = 0.1, .momentum = 0.9, .nesterov = true});
  double y = 3.0, b = 0;
  for (int t = 1; t <= 3; ++t) {
    set_grads({q});
    sgd.step();
    const double g = 2 * y + 1;
    b = t == 1 ? g : 0.9 * b + g;
    y -= 0.1 * (g + 0.9 * b);
    CHECK(values(q)[0] == doctest::Approx(y).epsilon(1e-12));
  }
}

TEST_CASE("optim: parameter groups have their own options, and their learning rates can change") {
  Tensor a = param({1.0}), b = param({1.0});
  optim::SGD opt({{.params = {a}, .options = {.lr = 0.1}}, {.params = {b}, .options = {.lr = 0.0}}});
  CHECK(opt.num_groups() == 2);
  CHECK(opt.params().size() == 2);
  set_grads({a, b});
  opt.step();
  CHECK(values(a)[0] == doctest::Approx(0.7));
  CHECK(values(b)[0] == 1.0);
  opt.set_lr(1, 0.5);
  CHECK(opt.lr(1) == 0.5);
  set_grads({a, b});
  opt.step();
  CHECK(values(b)[0] == doctest::Approx(-0.5));
  opt.set_lr(0.0);
  CHECK(opt.lr(0) == 0.0);
  EXPECT_ERROR(IndexError, opt.set_lr(2, 0.1), "SGD", "group 2 out of range");
  EXPECT_ERROR(ValueError, opt.set_lr(0, -1.0), "non-negative");
  EXPECT_ERROR(ValueError, optim::SGD({{.params = {a}, .options = {}}, {.params = {a}, .options = {}}}),
               "more than once");
  opt.param_groups()[0].options.momentum = -1;
  EXPECT_ERROR(ValueError, opt.step(), "SGD: group 0");
}

TEST_CASE("optim: state_dict round trips, and a strict load reports every problem and changes nothing") {
  auto make = [] { return std::vector<Tensor>{param({0.3, 0.7}), param({-1.0})}; };
  std::vector<Tensor> ps = make(), qs = make();
  optim::AdamW a(ps, {.lr = 0.05, .amsgrad = true});
  for (int i = 0; i < 3; ++i) {
    set_grads(ps);
    a.step();
  }
  const std::map<std::string, Tensor> sd = a.state_dict();
  CHECK(sd.count("state.0.exp_avg") == 1);
  CHECK(sd.count("state.1.max_exp_avg_sq") == 1);
  CHECK(sd.at("state.0.step").item<int64_t>() == 3);
  CHECK(sd.at("param_groups.0.lr").item<double>() == 0.05);
  // The same parameter values and state in another optimizer: the next steps agree.
  for (size_t i = 0; i < ps.size(); ++i) qs[i].detach().copy_(ps[i].detach());
  optim::AdamW b(qs, {.lr = 0.9});
  b.load_state_dict(sd);
  CHECK(b.lr() == 0.05);
  set_grads(ps);
  set_grads(qs);
  a.step();
  b.step();
  for (size_t i = 0; i < ps.size(); ++i) CHECK(values(ps[i]) == values(qs[i]));

  std::map<std::string, Tensor> bad = sd;
  bad.erase("param_groups.0.beta1");
  bad["state.7.exp_avg"] = zeros({2});
  bad["state.0.exp_avg"] = zeros({5});
  bad["param_groups.0.momentum"] = zeros({});
  optim::AdamW c(make(), {.lr = 0.3});
  EXPECT_ERROR(ValueError, c.load_state_dict(bad), "missing key 'param_groups.0.beta1'",
               "unexpected key 'state.7.exp_avg'", "'state.0.exp_avg' has shape [5] but parameter 0 has shape [2]",
               "unexpected key 'param_groups.0.momentum'");
  CHECK(c.lr() == 0.3);
  CHECK(c.state_dict().count("state.0.exp_avg") == 0);
}

TEST_CASE("optim: clip_grad_norm_ scales every gradient by the total norm") {
  Tensor a = param({3.0, 0.0}), b = param({4.0});
  a.set_grad(a.detach().clone());
  b.set_grad(b.detach().clone());
  const Tensor total = optim::clip_grad_norm_({a, b}, 1.0);
  CHECK(total.item<double>() == doctest::Approx(5.0));
  CHECK(values(a.grad())[0] == doctest::Approx(3.0 / 5.0).epsilon(1e-6));
  CHECK(values(b.grad())[0] == doctest::Approx(4.0 / 5.0).epsilon(1e-6));
  CHECK(optim::clip_grad_norm_({a, b}, 10.0).item<double>() == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(values(b.grad())[0] == doctest::Approx(0.8).epsilon(1e-6));  // below the bound: unchanged
  CHECK(optim::clip_grad_norm_({a, b}, 10.0, INFINITY).item<double>() == doctest::Approx(0.8).epsilon(1e-6));
  EXPECT_ERROR(ValueError, optim::clip_grad_norm_({a}, -1.0), "max_norm");
  EXPECT_ERROR(ValueError, optim::clip_grad_norm_({a}, 1.0, 0.0), "norm_type", "positive");
  EXPECT_ERROR(ValueError, optim::clip_grad_norm_({a}, 1.0, NAN), "norm_type", "positive");
}

TEST_CASE("optim: clip_grad_norm_ over gradients of several dtypes and any positive order") {
  // fp32 and fp64 gradients: one _foreach_norm and one _foreach_mul_ per dtype, one total.
  Tensor a = param({1.0, 2.0}), b = param({2.0}).detach().to(DType::Float32).requires_grad_();
  a.set_grad(a.detach().clone());
  b.set_grad(b.detach().clone());
  const Tensor total = optim::clip_grad_norm_({a, b}, 1.0, 3.0);
  const double expected = std::cbrt(1.0 + 8.0 + 8.0);
  CHECK(total.dtype() == DType::Float32);
  CHECK(total.item<double>() == doctest::Approx(expected).epsilon(1e-6));
  CHECK(values(a.grad())[1] == doctest::Approx(2.0 / expected).epsilon(1e-6));
  CHECK(values(b.grad())[0] == doctest::Approx(2.0 / expected).epsilon(1e-6));
  CHECK(b.grad().dtype() == DType::Float32);
}

TEST_CASE("optim: learning-rate schedules") {
  Tensor p = param({1.0});
  optim::SGD opt({p}, {.lr = 1.0});
  {
    optim::StepLR s(opt, 2, 0.5);
    std::vector<double> lrs;
    for (int i = 0; i < 5; ++i) {
      lrs.push_back(opt.lr());
      s.step();
    }
    CHECK(lrs == std::vector<double>{1.0, 1.0, 0.5, 0.5, 0.25});
  }
  opt.set_lr(1.0);
  {
    optim::CosineWithWarmup s(opt, 2, 6, 0.1);
    CHECK(opt.lr() == 0.0);
    s.step();
    CHECK(opt.lr() == doctest::Approx(0.5));
    s.step();
    CHECK(opt.lr() == doctest::Approx(1.0));
    s.set_last_step(4);
    CHECK(opt.lr() == doctest::Approx(0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi * 0.5))));
    s.set_last_step(100);
    CHECK(opt.lr() == doctest::Approx(0.1));
  }
  {
    optim::OneCycleLR s(opt, 2.0, 10, 0.3);
    CHECK(opt.lr() == doctest::Approx(2.0 / 25));
    s.set_last_step(2);  // the end of the rise: pct_start * total - 1
    CHECK(opt.lr() == doctest::Approx(2.0));
    s.set_last_step(9);
    CHECK(opt.lr() == doctest::Approx(2.0 / 25 / 1e4));
  }
  opt.set_lr(1.0);
  {
    // torch's cycle_momentum, computed here from its _annealing_cos and phases: the momentum falls
    // from max_momentum to base_momentum while the rate rises (steps 0..2 of 10), then rises back.
    auto cos_anneal = [](double from, double to, double pct) {
      return to + (from - to) / 2 * (std::cos(std::numbers::pi * pct) + 1);
    };
    auto torch_momentum = [&](int64_t step) {
      const double up_end = 0.3 * 10 - 1, s = static_cast<double>(step);
      return s <= up_end ? cos_anneal(0.95, 0.85, s / up_end) : cos_anneal(0.85, 0.95, (s - up_end) / (9 - up_end));
    };
    Tensor q = param({1.0});
    optim::SGD sgd({{.params = {p}, .options = {.lr = 1.0}}, {.params = {q}, .options = {.lr = 1.0, .momentum = 0.5}}});
    optim::OneCycleLR s(sgd, 2.0, 10, 0.3);
    for (int64_t step = 0; step < 10; ++step) {
      CHECK(sgd.param_groups()[0].options.momentum == doctest::Approx(torch_momentum(step)).epsilon(1e-15));
      CHECK(sgd.param_groups()[1].options.momentum == doctest::Approx(torch_momentum(step)).epsilon(1e-15));
      s.step();
    }
    CHECK(torch_momentum(0) == 0.95);
    CHECK(torch_momentum(2) == doctest::Approx(0.85));
    CHECK(torch_momentum(9) == doctest::Approx(0.95));
    // Adam's and AdamW's beta1, with other bounds; beta2 is left alone.
    optim::AdamW adamw({q}, {.lr = 1e-3, .beta2 = 0.98});
    optim::OneCycleLR a(adamw, 1e-2, 10, 0.3, 25.0, 1e4, true, 0.5, 0.9);
    CHECK(adamw.momentum() == 0.9);
    a.set_last_step(2);
    CHECK(adamw.param_groups()[0].options.beta1 == doctest::Approx(0.5));
    a.set_last_step(4);
    CHECK(adamw.param_groups()[0].options.beta1 == doctest::Approx(cos_anneal(0.5, 0.9, 2.0 / 7)));
    CHECK(adamw.param_groups()[0].options.beta2 == 0.98);
    optim::Adam adam({q}, {.lr = 1e-3});
    optim::OneCycleLR b(adam, 1e-2, 10);
    CHECK(adam.momentum() == 0.95);
    // cycle_momentum = false leaves it as it is.
    optim::RMSprop rms({q}, {.momentum = 0.3});
    optim::OneCycleLR c(rms, 1e-2, 10, 0.3, 25.0, 1e4, false);
    c.set_last_step(5);
    CHECK(rms.momentum() == 0.3);
    optim::OneCycleLR d(rms, 1e-2, 10);
    CHECK(rms.momentum() == 0.95);
    EXPECT_ERROR(ValueError, optim::OneCycleLR(rms, 1e-2, 10, 0.3, 25.0, 1e4, true, 0.85, 1.0), "max_momentum");
    EXPECT_ERROR(ValueError, sgd.set_momentum(0, -0.1), "momentum");
    EXPECT_ERROR(IndexError, sgd.set_momentum(2, 0.5), "group 2");
  }
  {
    optim::LambdaLR s(opt, [](int64_t step) { return 1.0 / static_cast<double>(step + 1); });
    s.step();
    s.step();
    CHECK(opt.lr() == doctest::Approx(1.0 / 3));
    CHECK(s.last_lr() == std::vector<double>{opt.lr()});
  }
  EXPECT_ERROR(ValueError, optim::StepLR(opt, 0), "step_size");
  EXPECT_ERROR(ValueError, optim::CosineWithWarmup(opt, 5, 5), "warmup_steps");
}

TEST_CASE("optim: foreach Adam and AdamW (one multi-tensor call per group) give the single-tensor step's values") {
  manual_seed(11);
  for (bool capturable : {false, true}) {
    for (bool decoupled : {false, true}) {
      for (DType dtype : {DType::Float32, DType::Float64}) {
        CAPTURE(capturable);
        CAPTURE(decoupled);
        // Parameters of several shapes, one without a gradient at the second step, and one
        // transposed (not contiguous).
        std::vector<Tensor> single, fused;
        for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{{3}, {4, 5}, {2, 3, 4}, {1}, {6, 2}}) {
          const Tensor init = randn(shape, dtype);
          single.push_back(init.clone().requires_grad_());
          fused.push_back(init.clone().requires_grad_());
        }
        single.push_back(randn({5, 3}, dtype).t().requires_grad_());
        fused.push_back(single.back().detach().clone().t().contiguous().t().requires_grad_());
        auto make = [&](std::vector<Tensor> ps, bool foreach) -> std::unique_ptr<optim::Optimizer> {
          if (decoupled) {
            return std::make_unique<optim::AdamW>(
                std::move(ps),
                optim::AdamWOptions{.lr = 0.05, .weight_decay = 0.1, .capturable = capturable, .foreach = foreach});
          }
          return std::make_unique<optim::Adam>(
              std::move(ps),
              optim::AdamOptions{.lr = 0.05, .weight_decay = 0.1, .capturable = capturable, .foreach = foreach});
        };
        auto a = make(single, false), b = make(fused, true);
        for (int step = 0; step < 4; ++step) {
          for (size_t i = 0; i < single.size(); ++i) {
            const Tensor g = randn(single[i].sizes(), dtype);
            const bool skip = step == 1 && i == 2;  // this parameter's count falls one behind
            single[i].set_grad(skip ? Tensor() : g);
            fused[i].set_grad(skip ? Tensor() : g.clone());
          }
          a->step();
          b->step();
          for (size_t i = 0; i < single.size(); ++i) {
            CHECK((single[i].detach() - fused[i].detach()).abs().max().item<double>() <= 1e-6);
          }
        }
        const auto sa = a->state_dict(), sb = b->state_dict();
        CHECK(sa.at("state.2.step").item<double>() == 3);
        CHECK(sb.at("state.2.step").item<double>() == 3);
        CHECK(sb.at("state.0.step").item<double>() == 4);
        CHECK(sb.at("state.2.step").dtype() == (capturable ? DType::Float64 : DType::Int64));
        CHECK(sb.at("param_groups.0.foreach").item<double>() == 1.0);
      }
    }
  }
}

TEST_CASE("optim: _fused_adam_ refuses mismatched lists and changes nothing") {
  const Tensor p = ones({3}), g = ones({3}), m = zeros({3}), v = zeros({3});
  CHECK_THROWS_AS(_fused_adam_({p}, {g, g}, {m}, {v}, 0.1, 0.9, 0.999, 0, 1e-8, 0.1, 0.001, true), ValueError);
  CHECK_THROWS_AS(_fused_adam_({p}, {ones({4})}, {m}, {v}, 0.1, 0.9, 0.999, 0, 1e-8, 0.1, 0.001, true), ValueError);
  CHECK_THROWS_AS(_fused_adam_({p}, {g}, {m}, {v}, 0.1, 0.9, 0.999, 0, 1e-8, 0.0, 0.001, true), ValueError);
  CHECK_THROWS_AS(_fused_adam_({tensor({1, 2, 3})}, {tensor({1, 2, 3})}, {tensor({0, 0, 0})}, {tensor({0, 0, 0})}, 0.1,
                               0.9, 0.999, 0, 1e-8, 0.1, 0.001, true),
                  TypeError);
  CHECK(p.sum().item<double>() == 3.0);
  CHECK(m.abs().sum().item<double>() == 0.0);
}

TEST_CASE("optim: _fused_adam_capturable_ refuses a missing or wrong step count and changes nothing") {
  const Tensor p = ones({3}), g = ones({3}), m = zeros({3}), v = zeros({3}), step = zeros({}, DType::Float64);
  EXPECT_ERROR(ValueError, _fused_adam_capturable_({p}, {g}, {m}, {v}, {}, 0.1, 0.9, 0.999, 0, 1e-8, true),
               "1 params, 0 steps");
  EXPECT_ERROR(ValueError,
               _fused_adam_capturable_({p}, {g}, {m}, {v}, {zeros({}, DType::Float32)}, 0.1, 0.9, 0.999, 0, 1e-8, true),
               "step 0 must be a one-element fp64 tensor on cpu, got fp32 ()");
  EXPECT_ERROR(
      ValueError,
      _fused_adam_capturable_({p}, {g}, {m}, {v}, {zeros({2}, DType::Float64)}, 0.1, 0.9, 0.999, 0, 1e-8, true),
      "got fp64 (2,)");
  EXPECT_ERROR(ValueError, _fused_adam_capturable_({p}, {g}, {m}, {v}, {step}, 0.1, 1.5, 0.999, 0, 1e-8, true),
               "_fused_adam_capturable_: invalid hyperparameters", "beta1=1.5");
  CHECK(p.sum().item<double>() == 3.0);
  CHECK(m.abs().sum().item<double>() == 0.0);
  CHECK(step.item<double>() == 0.0);
  // Valid: the count advances and the first step moves each element by lr (Adam's first step is
  // lr * sign(g) when eps is negligible).
  _fused_adam_capturable_({p}, {g}, {m}, {v}, {step}, 0.1, 0.9, 0.999, 0, 1e-8, true);
  CHECK(step.item<double>() == 1.0);
  CHECK(p.sub(0.9).abs().max().item<double>() < 1e-6);
}
