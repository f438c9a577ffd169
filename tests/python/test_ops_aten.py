"""anatomy.ops.aten: every operator called through its schema, with overload resolution."""

import inspect
import math

import pytest

import anatomy

A = anatomy.ops.aten


def item(t):
    return A._local_scalar_dense(t)


def values(t):
    """The elements of a tensor, flattened, through operators only."""
    return [item(x) for x in A.unbind(A.reshape(t, [-1]))]


def arange(n, dtype=anatomy.float32):
    return A.arange.start_step(0, n, dtype=dtype)


# ---- every ArgType binds ----

def test_tensor_scalar_and_keyword_only_default():
    a, b = A.ones([3]), A.full([3], 2.0)
    assert values(A.add(a, b)) == [3.0, 3.0, 3.0]
    assert values(A.add(a, b, alpha=2)) == [5.0, 5.0, 5.0]  # Scalar, keyword-only
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        A.add.Tensor(a, b, 2)  # alpha is after '*'


def test_int_list_and_int_and_bool():
    t = A.reshape(arange(6), [2, 3])  # int[]
    assert tuple(t.shape) == (2, 3)
    assert tuple(A.sum.dim_IntList(t, [1], True).shape) == (2, 1)  # int[]?, bool
    assert tuple(A.sum.dim_IntList(t, (0,)).shape) == (3,)  # a tuple for int[], keepdim's default
    assert values(A.flip(arange(3), [0])) == [2.0, 1.0, 0.0]
    assert tuple(A.max.dim(t, 1)[0].shape) == (2,)  # int


def test_optional_int_list_none_and_scalar_type():
    t = A.ones([2, 2], dtype=anatomy.int32)  # ScalarType?
    assert t.dtype == anatomy.int32
    s = A.sum(t, dtype=anatomy.float64)
    assert s.dtype == anatomy.float64 and item(s) == 4.0
    assert item(A.mean.dim(A.ones([2, 2]), None)) == 1.0  # int[]? None


def test_float_and_optional_float():
    t = A.full([2], 0.5)
    assert values(A.logit(t)) == [0.0, 0.0]  # float? None by default
    assert values(A.logit(t, 0.25)) == [0.0, 0.0]
    out = A.dropout(t, 0.0, False)  # float, bool
    assert values(out) == [0.5, 0.5]
    assert A.allclose(t, t, rtol=1, atol=0)  # an int binds a float argument


def test_tensor_optional_and_tensor_list():
    x, w, b = A.ones([1, 2]), A.ones([3, 2]), A.full([3], 1.0)
    assert values(A.linear(x, w)) == [2.0, 2.0, 2.0]  # Tensor? None by default
    assert values(A.linear(x, w, b)) == [3.0, 3.0, 3.0]
    assert values(A.linear(x, w, None)) == [2.0, 2.0, 2.0]
    grids = A.meshgrid([arange(2), arange(3)])  # Tensor[] in and out
    assert isinstance(grids, list) and len(grids) == 2 and tuple(grids[0].shape) == (2, 3)
    assert tuple(A.meshgrid((arange(2),))[0].shape) == (2,)


def test_scalar_optional():
    t = arange(4)
    assert values(A.clamp(t, 1, 2)) == [1.0, 1.0, 2.0, 2.0]
    assert values(A.clamp(t, None, 2.5)) == [0.0, 1.0, 2.0, 2.5]
    assert values(A.clamp(t, max=1)) == [0.0, 1.0, 1.0, 1.0]


def test_device_and_memory_format():
    assert A.ones([2], device="cpu").device == anatomy.device("cpu")
    assert A.ones([2], device=anatomy.device("meta")).device.type == "meta"
    c = A.clone(A.ones([1, 2, 2, 2]), memory_format=anatomy.channels_last)  # MemoryFormat?
    assert tuple(c.shape) == (1, 2, 2, 2)
    assert A.contiguous(c).dtype == anatomy.float32  # MemoryFormat's default contiguous_format
    A.contiguous(c, memory_format=anatomy.contiguous_format)


def test_str_and_optional_str():
    assert values(A.div(A.full([1], 7.0), A.full([1], 2.0), rounding_mode="floor")) == [3.0]
    assert values(A.div(A.full([1], 7.0), A.full([1], 2.0), rounding_mode=None)) == [3.5]
    e = A.einsum("i,i->", [arange(3), arange(3)])  # str
    assert item(e) == 5.0


def test_returns_tuple_none_scalar_bool():
    values_, indices = A.sort(A.flip(arange(3), [0]))
    assert values(values_) == [0.0, 1.0, 2.0] and values(indices) == [2, 1, 0]
    assert A.equal(arange(3), arange(3)) is True
    assert isinstance(item(A.ones([1], dtype=anatomy.int64)), int)


def test_numbers_bind_tensor_arguments_as_wrapped_numbers():
    a = A.ones([2], dtype=anatomy.int64)
    r = A.add(a, 2)  # no add.Scalar: the number becomes a 0-dim wrapped tensor
    assert r.dtype == anatomy.int64 and values(r) == [3, 3]
    assert A.add(a, 1.5).dtype == anatomy.float32  # a float number promotes to the default float


# ---- overload selection, out= and in-place ----

def test_overload_selection():
    t = A.reshape(arange(6), [2, 3])
    assert item(A.max(t)) == 5.0  # max(Tensor self)
    vals, idx = A.max(t, 1)  # max.dim
    assert values(vals) == [2.0, 5.0] and values(idx) == [2, 2]
    assert values(A.max(arange(3), A.full([3], 1.0))) == [1.0, 1.0, 2.0]  # max.other
    assert A.max.overloads()[0] == "default"
    assert set(A.max.overloads()) >= {"default", "dim", "other", "out"}


def test_explicit_overload_and_default():
    t = arange(3)
    assert item(A.sum.default(t)) == 3.0
    assert values(A.sum.dim_IntList(t, [0], keepdim=True)) == [3.0]
    with pytest.raises(TypeError, match=r"aten::sum.dim_IntList\(\): missing required argument 'dim'"):
        A.sum.dim_IntList(t)
    with pytest.raises(AttributeError, match="'aten::sum' has no overload named 'nope'"):
        A.sum.nope
    assert A.sum.default is A.sum.default  # cached on the packet


def test_out_and_inplace_return_the_given_object():
    a, b, out = A.ones([2]), A.ones([2]), A.zeros([2])
    r = A.add(a, b, out=out)
    assert r is out and values(out) == [2.0, 2.0]
    r = A.add_(a, b, alpha=3)
    assert r is a and values(a) == [4.0, 4.0]
    q = A.zeros([3])
    vals = A.max.out(arange(3), A.full([3], 1.0), out=q)
    assert vals is q and values(q) == [1.0, 1.0, 2.0]


# ---- errors ----

def test_no_overload_binds_lists_each_schema_and_why():
    with pytest.raises(TypeError) as e:
        A.add(A.ones([1]), "x")
    msg = str(e.value)
    assert "aten::add() got arguments (anatomy._C.Tensor, str) that bind no overload" in msg
    assert "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor: argument 'other' must be Tensor, not str" in msg
    assert "add.out(" in msg


def test_binding_errors():
    a = A.ones([1])
    with pytest.raises(TypeError, match="unexpected keyword argument 'beta'"):
        A.add.Tensor(a, a, beta=1)
    with pytest.raises(TypeError, match="got multiple values for argument 'self'"):
        A.add.Tensor(a, a, self=a)
    with pytest.raises(TypeError, match="argument 'dims' must be int\\[\\], not str"):
        A.flip.default(a, "0")
    with pytest.raises(TypeError, match="argument 'train' must be bool, not int"):
        A.dropout.default(a, 0.5, 1)
    with pytest.raises(TypeError, match="argument 'dim' must be int, not bool"):
        A.max.dim(a, True)
    with pytest.raises(TypeError, match="argument 'dtype' must be ScalarType\\?, not str"):
        A.ones.default([1], dtype="float32")
    with pytest.raises(ValueError, match="does not fit in int64"):
        A.ones([2**70])


def test_engine_errors_keep_their_kinds():
    with pytest.raises(ValueError):
        A.add(A.ones([2]), A.ones([3]))  # shapes do not broadcast
    with pytest.raises(IndexError):
        A.flip(A.ones([2]), [3])
    with pytest.raises(ValueError):
        A.ones([1], device="tpu")


def test_unknown_operator_and_dir():
    with pytest.raises(AttributeError, match="no operator named 'aten::no_such_op'"):
        A.no_such_op
    names = dir(A)
    assert "add" in names and "sum" in names and "add.Tensor" not in names
    assert "aten" in dir(anatomy.ops)
    assert not hasattr(A, "__wrapped__")  # dunder lookups are not operator lookups


def test_docstrings_and_repr():
    assert "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in A.add.__doc__
    assert A.add.out.__doc__.startswith("add.out(")
    assert repr(A.add) == "<OpOverloadPacket 'aten::add'>"
    assert repr(A.add.Tensor) == "<OpOverload 'aten::add.Tensor'>"


# ---- every registered operator ----

def all_overloads():
    for qualified in anatomy._C._ops_list():
        ns, _, rest = qualified.partition("::")
        name, _, overload = rest.partition(".")
        yield qualified, getattr(getattr(getattr(anatomy.ops, ns), name), overload or "default")


def test_every_schema_gives_a_signature_and_docstring():
    count = 0
    for qualified, overload in all_overloads():
        sig = inspect.signature(overload)
        assert [p.name.rstrip("_") for p in sig.parameters.values()] == [a[0].rstrip("_") for a in overload.arguments]
        for p, info in zip(sig.parameters.values(), overload.arguments):
            assert (p.kind == inspect.Parameter.KEYWORD_ONLY) == info[2], qualified
        assert overload.__doc__.strip() == overload.schema, qualified
        assert overload.name == qualified
        count += 1
    assert count == len(anatomy._C._ops_list()) > 300


def test_defaults_become_python_values():
    sig = inspect.signature(A.allclose.default)
    assert sig.parameters["rtol"].default == 1e-05 and sig.parameters["equal_nan"].default is False
    assert inspect.signature(A.contiguous.default).parameters["memory_format"].default == anatomy.contiguous_format
    assert inspect.signature(A.sum.dim_IntList).parameters["dtype"].default is None
    assert inspect.signature(A.add.Tensor).parameters["alpha"].default == 1
    assert inspect.signature(A.add.Tensor).parameters["self"].default is inspect.Parameter.empty


# ---- operators registered after import ----

def test_library_defined_operator_is_found_and_called():
    anatomy.library.define("pyops_test::scale(Tensor x, float s=2.0) -> Tensor")
    calls = []

    @anatomy.library.impl("pyops_test::scale", "CPU")
    def scale(x, s):
        calls.append(s)
        return A.mul(x, s)

    assert "scale" in dir(anatomy.ops.pyops_test)
    assert values(anatomy.ops.pyops_test.scale(A.ones([2]))) == [2.0, 2.0]
    assert values(anatomy.ops.pyops_test.scale(A.ones([2]), s=3)) == [3.0, 3.0]
    assert calls == [2.0, 3.0]
    # A later overload of the same name joins the packet already cached.
    packet = anatomy.ops.pyops_test.scale
    anatomy.library.define("pyops_test::scale.twice(Tensor x, Tensor y) -> (Tensor, Tensor)")
    anatomy.library.impl("pyops_test::scale.twice", "CPU", lambda x, y: (A.mul(x, 2), A.mul(y, 2)))
    a, b = packet(A.ones([1]), A.full([1], 3.0))
    assert values(a) == [2.0] and values(b) == [6.0]
    assert packet.overloads() == ["default", "twice"]


def test_namespaces_are_plain_attributes():
    """anatomy.ops has no module __getattr__ (CPython would then not specialize anatomy.ops.aten):
    the namespaces are its attributes, made at import, by anatomy.library.define, or by namespace()."""
    assert "__getattr__" not in vars(anatomy.ops)
    assert anatomy.ops.namespace("aten") is anatomy.ops.aten
    late = anatomy.ops.namespace("pyops_late_test")
    assert anatomy.ops.pyops_late_test is late and "scale" not in dir(late)
    anatomy.library.define("pyops_late_test::scale(Tensor x) -> Tensor")
    assert anatomy.ops.pyops_late_test is late and "scale" in dir(late)
    with pytest.raises(AttributeError):
        anatomy.ops.no_such_namespace_here


def test_library_errors():
    with pytest.raises(ValueError, match="needs a namespace"):
        anatomy.library.define("noscope(Tensor x) -> Tensor")
    with pytest.raises(ValueError):
        anatomy.library.define("pyops_test::bad(Tensor x -> Tensor")
    with pytest.raises(ValueError, match="unknown dispatch key 'GPU'"):
        anatomy.library.define("pyops_test::k(Tensor x) -> Tensor")
        anatomy.library.impl("pyops_test::k", "GPU", lambda x: x)
    with pytest.raises(ValueError, match="no operator named 'pyops_test::missing'"):
        anatomy.library.impl("pyops_test::missing", "CPU", lambda x: x)
    anatomy.library.define("pyops_test::wrong(Tensor x) -> Tensor")
    anatomy.library.impl("pyops_test::wrong", "CPU", lambda x: "not a tensor")
    with pytest.raises(TypeError, match="the Python kernel returned str where the schema"):
        anatomy.ops.pyops_test.wrong(A.ones([1]))
    anatomy.library.define("pyops_test::raises(Tensor x) -> Tensor")

    def fail(x):
        raise KeyError("from the kernel")

    anatomy.library.impl("pyops_test::raises", "CPU", fail)
    with pytest.raises(KeyError, match="from the kernel"):
        anatomy.ops.pyops_test.raises(A.ones([1]))
    # No kernel for the Meta key: the engine's NotImplementedError.
    with pytest.raises(NotImplementedError, match="pyops_test::raises"):
        anatomy.ops.pyops_test.raises(A.ones([1], device="meta"))


# ---- the call path: vectorcall, pooled stacks, re-entrancy ----

def test_calls_through_every_calling_convention():
    a, b = A.ones([2]), A.ones([2])
    assert values(A.add(*[a, b], **{"alpha": 2})) == [3.0, 3.0]  # tuple and dict (PyObject_Call)
    name = "".join(["al", "pha"])  # a keyword name that is not interned
    assert values(A.add.Tensor(a, b, **{name: 3})) == [4.0, 4.0]
    assert values(type(A.add).__call__(A.add, a, b)) == [2.0, 2.0]
    with pytest.raises(TypeError, match="cannot create 'OpOverloadPacket' instances"):
        type(A.add)()
    with pytest.raises(TypeError, match="cannot create 'OpOverload' instances"):
        type(A.add.Tensor).__new__(type(A.add.Tensor))


def test_typed_calls_match_the_boxed_binding():
    """Positional calls of the common schemas (a Tensor, then a Tensor or Scalars) skip the boxed
    stack (ops_typed_call.h); a keyword sends the same call the boxed way. Both give the same."""
    x, y = A.sub(A.arange(0, 6, dtype=anatomy.float32), A.full([6], 2.5)), A.full([6], 0.5)
    pairs = [
        (lambda: A.add(x, y), lambda: A.add(x, y, alpha=1)),
        (lambda: A.mul(x, y), lambda: A.mul(self=x, other=y)),
        (lambda: A.neg(x), lambda: A.neg(self=x)),
        (lambda: A.pow(y, x), lambda: A.pow(y, other=x)),
        (lambda: A.leaky_relu(x), lambda: A.leaky_relu(x, negative_slope=0.01)),  # a Scalar default
        (lambda: A.leaky_relu(x, 0.2), lambda: A.leaky_relu(x, negative_slope=0.2)),
        (lambda: A.hardtanh(x), lambda: A.hardtanh(x, min_val=-1, max_val=1)),  # two Scalar defaults
        (lambda: A.hardtanh(x, -0.5), lambda: A.hardtanh(x, min_val=-0.5)),
        (lambda: A.softplus(x, 2, 1), lambda: A.softplus(x, beta=2, threshold=1)),
    ]
    for typed, boxed in pairs:
        assert values(typed()) == values(boxed())
    # Errors are the operator's, the same both ways; nothing half-done is returned.
    with pytest.raises(ValueError) as typed_error:
        A.add(A.ones([2]), A.ones([3]))
    with pytest.raises(ValueError) as boxed_error:
        A.add(A.ones([2]), A.ones([3]), alpha=1)
    assert str(typed_error.value) == str(boxed_error.value)
    # Numbers for a Tensor, bools for a Scalar: the boxed binding's rules, unchanged.
    assert values(A.mul(x, 2)) == values(A.mul(x, A.full([1], 2.0)))
    assert values(A.leaky_relu(x, True)) == values(A.leaky_relu(x, 1.0))


def test_nested_python_kernels_call_ops_again():
    # Each level runs while the calls around it hold their stacks.
    anatomy.library.define("pyops_nest::inner(Tensor x) -> Tensor")
    anatomy.library.impl("pyops_nest::inner", "CPU", lambda x: A.mul(x, 3))
    anatomy.library.define("pyops_nest::outer(Tensor x) -> Tensor")
    anatomy.library.impl("pyops_nest::outer", "CPU", lambda x: anatomy.ops.pyops_nest.inner(A.add(x, x)))
    a = A.ones([2])
    assert values(anatomy.ops.pyops_nest.outer(a)) == [6.0, 6.0]
    assert values(A.add(anatomy.ops.pyops_nest.outer.default(a), a)) == [7.0, 7.0]


def test_nan_default_parse_and_float_values():
    r = A.full([1], math.inf)
    assert item(r) == math.inf
