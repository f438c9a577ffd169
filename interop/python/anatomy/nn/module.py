"""anatomy.nn.Module: parameters, buffers and submodules registered by attribute assignment, as
torch.nn.Module registers them, with the dotted-name listings, train/eval, conversions, zero_grad,
apply, state_dict / load_state_dict under PyTorch's key names, and PyTorch's repr.

The bookkeeping follows the engine's C++ nn::Module (nn/module.cpp): a failed strict load names
every missing and unexpected key and every shape mismatch in one error and changes nothing.
"""

import collections

from .. import _C
from ..autograd import no_grad
from .parameter import Parameter

__all__ = ["Module"]

# What load_state_dict returns, as torch.nn.modules.module._IncompatibleKeys.
IncompatibleKeys = collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def _add_indent(text):
    """Every line after the first indented by two spaces (PyTorch's _addindent)."""
    return text.replace("\n", "\n  ")


class Module:
    """The base of every layer: subclasses assign Parameters, buffers (register_buffer) and
    Modules as attributes in __init__ and define forward."""

    def __init__(self):
        # Set through object.__setattr__: __setattr__ below reads these dicts.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", {})

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---- registration ----

    def _check_ready(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign to {type(self).__name__} before Module.__init__() call")

    def _check_name(self, name, what, table):
        if not isinstance(name, str):
            raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
        if not name:
            raise KeyError(f'{what} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{what} name can\'t contain ".", got: {name}')
        # An entry of the same kind may be replaced; anything else of that name (an attribute, a
        # method, a parameter where a buffer is registered) may not be shadowed, as PyTorch's.
        if hasattr(self, name) and name not in getattr(self, table):
            raise KeyError(f"attribute '{name}' already exists")

    def _discard(self, name):
        for d in (self._parameters, self._buffers, self._modules):
            d.pop(name, None)
        self._non_persistent_buffers.discard(name)
        self.__dict__.pop(name, None)

    def register_parameter(self, name, param):
        """Adds a parameter (a tensor, or None for an absent one such as a bias=False bias). A
        leaf is kept as it is, so that two modules can share (tie) it; a tensor with history is
        detached into a new leaf, as the engine's C++ Module does."""
        self._check_ready()
        self._check_name(name, "parameter", "_parameters")
        self._discard(name)
        self._parameters[name] = _as_parameter(name, param)

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a tensor that is state but not a parameter (state_dict keeps it when persistent)."""
        self._check_ready()
        self._check_name(name, "buffer", "_buffers")
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(anatomy.Tensor or None required)")
        self._discard(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent_buffers.add(name)

    def register_module(self, name, module):
        """Adds a submodule (or None)."""
        self._check_ready()
        self._check_name(name, "module", "_modules")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._discard(name)
        self._modules[name] = module

    add_module = register_module

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            self._check_ready()
            self._discard(name)
            self._parameters[name] = value
        elif params is not None and name in params:
            params[name] = _as_parameter(name, value)
        elif isinstance(value, Module):
            self._check_ready()
            self._discard(name)
            self._modules[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(anatomy.nn.Module or None expected)")
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(anatomy.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Only reached when normal lookup fails: the registered entries live in the three dicts.
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters or name in self._buffers or name in self._modules:
            self._discard(name)
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    # ---- listings ----

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) of this module and every descendant, each once."""
        memo = set() if memo is None else memo
        if remove_duplicate and id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, table, prefix, recurse, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, t in getattr(module, table).items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield module_prefix + ("." if module_prefix else "") + name, t

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, parameter); a parameter shared by two modules is listed once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- mode, gradients, conversions ----

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Drops (or zeroes) every parameter's gradient."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_().zero_()

    def apply(self, fn):
        """Calls fn on every submodule, children first, then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, convert):
        """Converts every parameter and buffer in place (t.data = convert(t), PyTorch's default),
        so every handle to one (an optimizer's) sees the conversion; a parameter stays a leaf
        with its requires_grad, its gradient converted alike. Everything is converted before
        anything changes, so a failed conversion changes nothing; a tensor shared by two modules
        (a tied weight) is converted once."""
        staged = {}  # id(t) -> (t, its new data, its new gradient or None)
        with no_grad():
            for module in self.modules():
                for table in ("_parameters", "_buffers"):
                    for t in getattr(module, table).values():
                        if t is None or id(t) in staged:
                            continue
                        new = convert(t)
                        if _same_tensor(new, t):
                            continue
                        grad = convert(t.grad) if table == "_parameters" and t.grad is not None else None
                        staged[id(t)] = (t, new, grad)
            for t, new, grad in staged.values():
                t.data = new
                if grad is not None:
                    t.grad = grad
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts the parameters and buffers: to(device), to(dtype),
        to(device, dtype); a dtype applies to the floating tensors only, as PyTorch's.
        memory_format= lays out the 4-D and 5-D ones (conv weights) in that format."""
        device, dtype, memory_format = _parse_to(*args, **kwargs)

        def convert(t):
            target = dtype if dtype is not None and t.is_floating_point() else t.dtype
            layout = memory_format if t.dim() in (4, 5) else None
            return t.to(device if device is not None else t.device, target, memory_format=layout)

        return self._apply(convert)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else _C.device("cuda", device) if isinstance(device, int) else device)

    def float(self):  # noqa: A003 (PyTorch's name)
        return self.to(_C.dtype.float32)

    def double(self):
        return self.to(_C.dtype.float64)

    def half(self):
        return self.to(_C.dtype.float16)

    def bfloat16(self):
        return self.to(_C.dtype.bfloat16)

    # ---- state ----

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """{dotted name: tensor} of the parameters and persistent buffers, detached unless
        keep_vars, in registration order (PyTorch's keys: '0.weight', 'blocks.3.attn.in_proj_bias')."""
        out = collections.OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                out[prefix + name] = b if keep_vars else b.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=out, prefix=prefix + name + ".", keep_vars=keep_vars)
        return out

    def _state_slots(self):
        """[(key, module, table, name)] of every tensor state_dict would hold."""
        slots = []
        for prefix, module in self.named_modules(remove_duplicate=False):
            dot = prefix + "." if prefix else ""
            for name, p in module._parameters.items():
                if p is not None:
                    slots.append((dot + name, module, "_parameters", name))
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers:
                    slots.append((dot + name, module, "_buffers", name))
        return slots

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies the values into the parameters and buffers (converted to their device and
        dtype). With strict, a missing or unexpected key is an error; a shape mismatch always is.
        Every problem is reported at once, and a failed load changes nothing."""
        if not hasattr(state_dict, "items"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        missing, mismatches, staged, expected = [], [], [], set()
        with no_grad():
            for key, module, table, name in self._state_slots():
                expected.add(key)
                current = getattr(module, table)[name]
                if key not in state_dict:
                    missing.append(key)
                    continue
                value = state_dict[key]
                if not isinstance(value, _C.Tensor):
                    mismatches.append(f'While copying the parameter named "{key}", expected anatomy.Tensor '
                                      f"in the checkpoint but received {type(value).__name__}")
                elif tuple(value.shape) != tuple(current.shape):
                    mismatches.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                      f"checkpoint, the shape in current model is {current.shape}")
                else:
                    try:
                        staged.append((module, table, name, current, value.to(current.device, current.dtype)))
                    except Exception as e:  # noqa: BLE001 (the engine's error becomes one of the list)
                        mismatches.append(f'While copying the parameter named "{key}": {e}')
        unexpected = [k for k in state_dict.keys() if k not in expected]
        problems = []
        if strict and unexpected:
            problems.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if strict and missing:
            problems.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        problems += [m + "." for m in mismatches]
        if problems:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(problems))
        with no_grad():
            for module, table, name, current, value in staged:
                if assign:
                    getattr(module, table)[name] = (Parameter(value, current.requires_grad)
                                                    if table == "_parameters" else value)
                else:
                    current.copy_(value)
        return IncompatibleKeys(missing, unexpected)

    # ---- printing ----

    def extra_repr(self):
        """The layer's own arguments, shown inside its parentheses (override in layers)."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        extra_lines = len(lines)
        for name, module in self._modules.items():
            lines.append(f"({name}): " + _add_indent(repr(module)))
        out = self._get_name() + "("
        if extra_lines == 1 and not self._modules:
            out += lines[0]
        elif lines:
            out += "\n  " + "\n  ".join(lines) + "\n"
        return out + ")"


def _as_parameter(name, value):
    """value as a parameter's tensor: None, a leaf as it is, or a tensor with history detached."""
    if value is None:
        return None
    if not isinstance(value, _C.Tensor):
        raise TypeError(f"cannot assign '{type(value).__name__}' object to parameter '{name}' "
                        "(anatomy.nn.Parameter or None required)")
    return value if value.is_leaf else Parameter(value, value.requires_grad)


def _same_tensor(a, b):
    """Whether a conversion left the tensor as it was (same memory, dtype and device)."""
    return a.data_ptr() == b.data_ptr() and a.dtype == b.dtype and a.device == b.device and a.shape == b.shape


def _parse_to(*args, **kwargs):
    """(device or None, dtype or None, memory_format or None) from Module.to's forms."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    memory_format = kwargs.pop("memory_format", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, (str, _C.device)):
            device = _C.device(a) if isinstance(a, str) else a
        elif isinstance(a, _C.Tensor):
            device, dtype = a.device, a.dtype
        else:
            raise TypeError(f"to() received an invalid argument: {type(a).__name__} (a device, dtype or tensor expected)")
    if isinstance(device, str):
        device = _C.device(device)
    if dtype is not None and not dtype.is_floating_point:
        raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
    if memory_format is not None and not isinstance(memory_format, _C.memory_format):
        raise TypeError(f"to(): memory_format must be an anatomy.memory_format, got {type(memory_format).__name__}")
    return device, dtype, memory_format
