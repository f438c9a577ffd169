"""AdamW: Adam with decoupled weight decay, torch.optim.AdamW's arithmetic, one
aten._fused_adam_ call per group (the engine's multi-tensor update); with capturable=True one
aten._fused_adam_capturable_ call, the step counts kept and advanced on the parameters' devices."""

from .. import _C
from .. import ops as _ops
from .optimizer import Optimizer

__all__ = ["AdamW"]


class AdamW(Optimizer):
    """p *= 1 - lr * weight_decay; m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
    p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 *, maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        if amsgrad or maximize or differentiable:
            raise NotImplementedError("AdamW: amsgrad, maximize and differentiable are not supported")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": False, "maximize": False, "foreach": foreach,
                                  "capturable": bool(capturable),
                                  "differentiable": False, "fused": fused})

    def _check_group(self, group):
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= beta1 < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {beta1}")
        if not 0.0 <= beta2 < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {beta2}")
        if not 0.0 <= wd:
            raise ValueError(f"Invalid weight_decay value: {wd}")

    def _group_step(self, group):
        if group["capturable"]:
            self._capturable_step(group)
            return
        # The parameters that share a step count go in one call (all of them, unless some
        # skipped a step without a gradient): the bias corrections are per call. The counts
        # advance after their call, so a call the engine refuses leaves them as they were.
        by_step = {}
        for n, p in self._positions(group):
            if p.grad is None:
                continue
            state = self.state.setdefault(n, {})
            if not state:
                state["step"] = _C.zeros([], dtype=_C.dtype.float32)
                state["exp_avg"] = _C.zeros_like(p)
                state["exp_avg_sq"] = _C.zeros_like(p)
            bucket = by_step.setdefault(int(state["step"].item()) + 1, ([], [], [], [], []))
            for lst, t in zip(bucket, (p, p.grad, state["exp_avg"], state["exp_avg_sq"], state["step"])):
                lst.append(t)
        beta1, beta2 = group["betas"]
        for t, (params, grads, exp_avgs, exp_avg_sqs, counts) in by_step.items():
            _ops.aten._fused_adam_(params, grads, exp_avgs, exp_avg_sqs, float(group["lr"]), float(beta1),
                                   float(beta2), float(group["weight_decay"]), float(group["eps"]),
                                   1 - beta1 ** t, 1 - beta2 ** t, True)
            for count in counts:
                count.add_(1)

    def _capturable_step(self, group):
        # Each count a 0-d float64 tensor on its parameter's device, as the engine's capturable
        # AdamW keeps it (one loaded from a state dict moves there at the next step); the call
        # advances and reads them there, so the step can be captured into a CUDA graph once the
        # first step has made the state.
        lists = ([], [], [], [], [])
        for n, p in self._positions(group):
            if p.grad is None:
                continue
            state = self.state.setdefault(n, {})
            if not state:
                state["step"] = _C.zeros([], dtype=_C.dtype.float64, device=p.device)
                state["exp_avg"] = _C.zeros_like(p)
                state["exp_avg_sq"] = _C.zeros_like(p)
            elif state["step"].device != p.device or state["step"].dtype != _C.dtype.float64:
                state["step"] = state["step"].to(p.device, _C.dtype.float64)
            for lst, t in zip(lists, (p, p.grad, state["exp_avg"], state["exp_avg_sq"], state["step"])):
                lst.append(t)
        beta1, beta2 = group["betas"]
        _ops.aten._fused_adam_capturable_(*lists, float(group["lr"]), float(beta1), float(beta2),
                                          float(group["weight_decay"]), float(group["eps"]), True)
