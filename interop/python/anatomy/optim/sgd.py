"""SGD with momentum, dampening, weight decay and Nesterov, torch.optim.SGD's arithmetic."""

from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """d = g + weight_decay p; b = momentum b + (1 - dampening) d (b = d at the first step);
    d = d + momentum b with nesterov, else b; p -= lr d (+= with maximize)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if differentiable:
            raise NotImplementedError("SGD: differentiable is not supported")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                                  "foreach": foreach, "differentiable": False, "fused": fused})

    def _check_group(self, group):
        if not 0.0 <= group["lr"]:
            raise ValueError(f"Invalid learning rate: {group['lr']}")
        if not 0.0 <= group["momentum"]:
            raise ValueError(f"Invalid momentum value: {group['momentum']}")
        if not 0.0 <= group["weight_decay"]:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _group_step(self, group):
        lr, momentum, wd = group["lr"], group["momentum"], group["weight_decay"]
        for n, p in self._positions(group):
            if p.grad is None:
                continue
            d = -p.grad if group["maximize"] else p.grad
            if wd != 0:
                d = d.add(p, alpha=wd)
            if momentum != 0:
                state = self.state.setdefault(n, {})
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = d.clone().detach()
                else:
                    buf.mul_(momentum).add_(d, alpha=1 - group["dampening"])
                d = d.add(buf, alpha=momentum) if group["nesterov"] else buf
            p.add_(d, alpha=-lr)
