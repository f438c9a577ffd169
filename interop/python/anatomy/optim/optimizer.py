"""anatomy.optim.Optimizer: parameter groups (dicts whose options, lr included, may change
between steps), zero_grad, and state_dict / load_state_dict in torch.optim's layout.

The per-parameter state is kept by the parameter's position across the groups (state[0] is the
first group's first parameter): torch.optim keys it by the tensor, but anatomy.Tensor's == is
element-wise, so a tensor-keyed dict would compare values on a hash collision.
"""

import copy

from .. import _C
from ..autograd import enable_grad, no_grad

__all__ = ["Optimizer"]


class Optimizer:
    """Holds param_groups (list of dicts: 'params' and the options) and state."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = {}
        self.param_groups = []
        if isinstance(params, _C.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got anatomy.Tensor")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def _name(self):
        return type(self).__name__

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        group = dict(param_group)
        params = group.get("params")
        params = [params] if isinstance(params, _C.Tensor) else list(params or [])
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for i, p in enumerate(params):
            if not isinstance(p, _C.Tensor):
                raise TypeError(f"{self._name()} can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf or not p.requires_grad:
                raise ValueError(f"{self._name()}: parameter {i} must be a leaf tensor that requires grad")
            if id(p) in seen:
                raise ValueError("some parameters appear in more than one parameter group")
            seen.add(id(p))
        group["params"] = params
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group):
        """Each optimizer's option checks (ValueError, torch.optim's messages)."""

    def _indexed(self):
        """(position, group, parameter) over every group's parameters."""
        n = 0
        for group in self.param_groups:
            for p in group["params"]:
                yield n, group, p
                n += 1

    def _positions(self, group):
        """(position, parameter) over one group's parameters."""
        for n, g, p in self._indexed():
            if g is group:
                yield n, p

    def zero_grad(self, set_to_none=True):
        with no_grad():
            for _, _, p in self._indexed():
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def state_dict(self):
        """{'state': {position: {name: tensor}}, 'param_groups': [{options..., 'params': [positions]}]}."""
        groups, n = [], 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = list(range(n, n + len(group["params"])))
            n += len(group["params"])
            groups.append(packed)
        state = {i: {k: v.detach().clone() if isinstance(v, _C.Tensor) else v for k, v in s.items()}
                 for i, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Takes the options of each group and the state of each parameter (moved to the
        parameter's device); the groups must match in number and size. A failed load changes nothing."""
        try:
            groups, state = state_dict["param_groups"], state_dict["state"]
        except (TypeError, KeyError) as e:
            raise ValueError(f"{self._name()}.load_state_dict: expected a dict with 'state' and 'param_groups'") from e
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, self.param_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        positions = {}
        for saved, (n, _, p) in zip((i for g in groups for i in g["params"]), self._indexed()):
            positions[saved] = (n, p)
        new_state = {}
        for saved, values in state.items():
            if saved not in positions:
                raise ValueError(f"{self._name()}.load_state_dict: state for parameter {saved}, which no group has")
            n, p = positions[saved]
            new_state[n] = {k: _state_value(self._name(), saved, k, v, p) for k, v in values.items()}
        new_groups = []
        for saved, current in zip(groups, self.param_groups):
            group = copy.deepcopy({k: v for k, v in saved.items() if k != "params"})
            group["params"] = current["params"]
            self._check_group(group)
            new_groups.append(group)
        self.state = new_state
        self.param_groups = new_groups

    def step(self, closure=None):
        """One update of every group's parameters that have a gradient (closure, when given,
        recomputes the loss first and its value is returned)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._group_step(group)
        return loss

    def _group_step(self, group):
        raise NotImplementedError(f"{self._name()} has no step")

    def __repr__(self):
        out = self._name() + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}"
            for key in sorted(k for k in group if k != "params"):
                out += f"\n    {key}: {group[key]}"
        return out + "\n)"


def _state_value(optimizer, saved, name, value, param):
    """A loaded state value: the step count stays on the host, the other tensors (the moments,
    the momentum buffer) must have the parameter's shape and go to its device and dtype."""
    if not isinstance(value, _C.Tensor):
        return value
    if name == "step":
        return value.detach().clone()
    if value.shape != param.shape:
        raise ValueError(f"{optimizer}.load_state_dict: state {saved} '{name}' has shape {list(value.shape)}, "
                         f"its parameter {list(param.shape)}")
    return value.detach().to(param.device, param.dtype).clone()
