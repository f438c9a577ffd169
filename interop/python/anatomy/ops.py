"""anatomy.ops: every operator the dispatcher knows, called through its schema.

``anatomy.ops.aten.add(a, b, alpha=2)`` binds the arguments against the schemas of the overloads
of ``aten::add`` (add.Tensor, add.Scalar, add.out, ...) and calls the first that binds, boxed,
through the dispatcher; ``anatomy.ops.aten.add.Tensor(...)`` calls one overload. A namespace looks
its operators up by name when first asked (``__getattr__``), so an operator registered after
import, from C++ or with anatomy.library, is found too; ``dir(anatomy.ops.aten)`` lists them.

Every namespace is a plain attribute of this module, made at import for the namespaces the
dispatcher has then, by anatomy.library.define for one it makes, and by ``namespace(name)`` for
one a C++ library registers later. The module has no ``__getattr__``: with one, CPython does not
specialize ``anatomy.ops.aten`` and every call pays a slow lookup (12-25 ns of the 0.3 us a call
takes, measured on CPython 3.11 and 3.12).
"""

import inspect
import keyword

from . import _C

__all__ = ["OpNamespace", "OpOverload", "OpOverloadPacket", "namespace", "signature"]

OpOverload = _C.OpOverload
OpOverloadPacket = _C.OpOverloadPacket


def _names_by_namespace():
    """{namespace: {operator name, ...}} of every operator with a schema."""
    out = {}
    for qualified in _C._ops_list():
        ns, _, rest = qualified.partition("::")
        out.setdefault(ns, set()).add(rest.partition(".")[0])
    return out


class OpNamespace:
    """The operators of one namespace (``aten``, or a user's ``myops``), as attributes."""

    def __init__(self, name):
        self.__dict__["_name"] = name

    def __getattr__(self, op):
        # Only called for names not yet in the instance dict: the packet is cached there, so the
        # next lookup is a plain attribute read. Dunder names are Python's protocols, not operators.
        if op.startswith("__"):
            raise AttributeError(op)
        packet = _C._ops_packet(self._name, op)
        self.__dict__[op] = packet
        return packet

    def __dir__(self):
        return sorted(_names_by_namespace().get(self._name, ()))

    def __repr__(self):
        return f"<anatomy.ops namespace '{self._name}'>"


def namespace(name):
    """The OpNamespace of operator namespace `name`, made if it is new and kept as the module's
    attribute ``anatomy.ops.<name>`` (unless a name of this module's own holds that spelling)."""
    ns = globals().get(name)
    if isinstance(ns, OpNamespace):
        return ns
    ns = OpNamespace(name)
    if name not in globals() and not name.startswith("__"):
        globals()[name] = ns
    return ns


def __dir__():
    return sorted(set(_names_by_namespace()) | set(__all__))


for _name in _names_by_namespace():
    namespace(_name)
del _name


# Python spellings of schema types, for signatures and type hints.
_PYTHON_TYPES = {
    "Tensor": "anatomy.Tensor",
    "Tensor[]": "list[anatomy.Tensor]",
    "Scalar": "bool | int | float",
    "int": "int",
    "int[]": "list[int]",
    "float": "float",
    "bool": "bool",
    "ScalarType": "anatomy.dtype",
    "Device": "anatomy.device",
    "str": "str",
    "MemoryFormat": "anatomy.memory_format",
}


def _annotation(schema_type):
    optional = schema_type.endswith("?")
    base = _PYTHON_TYPES[schema_type.rstrip("?")]
    return f"{base} | None" if optional else base


def signature(overload):
    """The inspect.Signature of one OpOverload, from its schema."""
    params = []
    for info in overload.arguments:
        name, schema_type, kwarg_only = info[:3]
        kind = inspect.Parameter.KEYWORD_ONLY if kwarg_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
        default = info[3] if len(info) > 3 else inspect.Parameter.empty
        # A schema may name an argument with a Python keyword (random_.from's "from"): the
        # signature shows it as from_; a call passes it positionally or as **{"from": v}.
        if keyword.iskeyword(name):
            name += "_"
        params.append(inspect.Parameter(name, kind, default=default, annotation=_annotation(schema_type)))
    returns = [_annotation(r) for r in overload.returns]
    ret = "None" if not returns else returns[0] if len(returns) == 1 else f"tuple[{', '.join(returns)}]"
    return inspect.Signature(params, return_annotation=ret)

