"""Sequential and ModuleList: submodules under the names '0', '1', ... (PyTorch's keys)."""

import collections

from .module import Module

__all__ = ["Sequential", "ModuleList"]


class _Indexed(Module):
    """The positional containers' shared indexing over their children."""

    def _index(self, idx):
        n = len(self._modules)
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise TypeError(f"{type(self).__name__} indices must be integers or slices, not {type(idx).__name__}")
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx + n if idx < 0 else idx

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        values = list(self._modules.values())
        if isinstance(idx, slice):
            return type(self)(*values[idx]) if isinstance(self, Sequential) else ModuleList(values[idx])
        return values[self._index(idx)]

    def __setitem__(self, idx, module):
        key = list(self._modules)[self._index(idx)]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[self._index(idx)]]:
            del self._modules[key]
        # Renumbered, as PyTorch keeps the keys 0..n-1.
        modules = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def append(self, module):
        self.register_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self


class Sequential(_Indexed):
    """Calls its modules in order, each on the previous one's output. Sequential(a, b) names
    them '0' and '1'; Sequential(OrderedDict(name=module)) keeps the names."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for name, module in args[0].items():
                self.register_module(name, module)
        else:
            for i, module in enumerate(args):
                self.register_module(str(i), module)

    def forward(self, input):  # noqa: A002
        for module in self:
            input = module(input)
        return input


class ModuleList(_Indexed):
    """Holds modules in a list, registered so that their parameters are the owner's."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self.register_module(str(i), m)

    def __iadd__(self, modules):
        return self.extend(modules)


class ModuleDict(Module):
    """Holds modules under string keys, registered so that their parameters are the owner's, in
    insertion order (state_dict keys `key.weight`, as torch.nn.ModuleDict's)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.register_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key):
        module = self._modules[key]
        del self._modules[key]
        return module

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self.register_module(key, module)
