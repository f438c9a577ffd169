"""A boolean switch of anatomy._C._precision as an attribute."""

from anatomy import _C


class Switch:
    """A data descriptor over one engine switch: its getter and setter in anatomy._C._precision."""

    def __init__(self, getter, setter):
        self._get = getattr(_C._precision, getter)
        self._set = getattr(_C._precision, setter)

    def __set_name__(self, owner, name):
        self._name = name

    def __get__(self, obj, objtype=None):
        if obj is None:  # looked up on the class: the descriptor itself
            return self
        return self._get()

    def __set__(self, obj, value):
        if not isinstance(value, bool):
            raise TypeError(f"{self._name} must be a bool, got {type(value).__name__} {value!r}")
        self._set(value)


class Switches:
    """A namespace of Switch attributes; any other attribute is an AttributeError, so that a
    misspelled switch is not silently set."""

    def __setattr__(self, name, value):
        if not isinstance(getattr(type(self), name, None), Switch):
            raise AttributeError(f"{type(self).__name__} has no switch {name!r}")
        object.__setattr__(self, name, value)
