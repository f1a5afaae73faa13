"""Each op has one home: two ``Function`` classes share a node name (``grad_fn.name()``) only
where PyTorch gives that same name to both ops' nodes.

:data:`SHARED` lists every such name with, for each class, a program that makes its node; the
tests check that edutorch's duplicates are exactly these, that each program makes a node of the
listed class here, and (with PyTorch installed) that PyTorch names both programs' nodes the same.
"""
import collections
import importlib
import pkgutil

import pytest

import edutorch
from edutorch.autograd.function import Function

TORCH_REASON = "real PyTorch not installed: parity test skipped"


def _leaf(T, *shape):
    return T.rand(*shape, dtype=T.float64, requires_grad=True)


def _grad_of(T, out, x):
    """The gradient of ``out`` w.r.t. ``x``, recorded (``create_graph``): the node a backward formula makes."""
    v = T.ones_like(out, requires_grad=True)
    return T.autograd.grad(out, x, v, create_graph=True)[0]


def _x(T):
    return _leaf(T, 3, 4)


# node name -> {Function class (module under edutorch, qualified name): a program making its node}
SHARED = {
    "AddmmBackward0": {
        "autograd._functions.blas.Addmm": lambda T, dev: T.addmm(_leaf(T, 5), _x(T), _leaf(T, 4, 5)),
        "nn._functions.linear.Linear": lambda T, dev: T.nn.functional.linear(_x(T), _leaf(T, 5, 4), _leaf(T, 5)),
    },
    "MmBackward0": {
        "autograd._functions.blas.Mm": lambda T, dev: _x(T).mm(_leaf(T, 4, 5)),
        "nn._functions.linear.LinearNoBias": lambda T, dev: T.nn.functional.linear(_x(T), _leaf(T, 5, 4)),
    },
    "ConstantPadNdBackward0": {
        "nn._functions.sparse.Pad": lambda T, dev: T.nn.functional.pad(_x(T), (1, 1)),
        "nn._functions.sparse.PadBackward": lambda T, dev: _grad_of(T, T.nn.functional.pad(x := _x(T), (1, 1)), x),
    },
    "ExpandBackward0": {
        "autograd._functions.shape.Expand": lambda T, dev: _x(T)[:1].expand(3, 4),
        "autograd._functions.reduction.SumBackward": lambda T, dev: _grad_of(T, (x := _x(T)).sum(1), x),
    },
    "MulBackward0": {
        "autograd._functions.pointwise.Mul": lambda T, dev: _x(T) * _x(T),
        "autograd._functions.fused.PowBackward": lambda T, dev: _grad_of(T, (x := _x(T)) ** 3, x),
        "autograd._functions.reduction.ProdOthers": lambda T, dev: _grad_of(
            T, (x := _x(T)).mul(T.tensor([1.0, 0.0, 1.0, 1.0], dtype=T.float64)).prod(1), x),
    },
    "SliceBackward0": {
        "autograd._functions.indexing.Slice": lambda T, dev: _x(T)[1:],
        "autograd._functions.shape.Narrow": lambda T, dev: _x(T).narrow(0, 1, 2),
    },
    "SqueezeBackward4": {
        "autograd._functions.shape.SqueezeDimInplace": lambda T, dev: _x(T)[:1].clone().squeeze_(0),
        "autograd._functions.blas.VecMat": lambda T, dev: _leaf(T, 4) @ _leaf(T, 4, 5),
    },
    "ToCopyBackward0": {
        "autograd._functions.tensor.ToDtype": lambda T, dev: _x(T).float(),
        "autograd._functions.tensor.ToDevice": lambda T, dev: _x(T).to(dev),
    },
    "CloneBackward0": {
        "autograd._functions.tensor.Clone": lambda T, dev: _x(T).clone(),
        "autograd._functions.tensor.Contiguous": lambda T, dev: _x(T).t().contiguous(),  # was ContiguousBackward
        "autograd._functions.blas.MatBatch": lambda T, dev: _x(T) @ _leaf(T, 2, 4, 5),
    },
    "UnsafeViewBackward0": {
        "autograd._functions.shape.UnsafeView": lambda T, dev: _x(T).t().reshape(-1),
        "autograd._functions.blas.Matmul": lambda T, dev: _leaf(T, 2, 3, 4) @ _leaf(T, 2, 4, 5),
    },
}
# PyTorch's ``Error`` node, which its ``DelayedError`` and its refused views both make
# and its ``AsStridedBackward0``, which a view whose base was written in place gets: an expand of
# a 0-d base (one element, repeated) is regenerated as that expand, any other view by its index
SHARED_WITHOUT_PROGRAM = {
    "Error": {"autograd.function.DelayedError", "_tensor_methods.views._RefusedView"},
    "AsStridedBackward0": {"_tensor_methods.views.AsStrided", "_tensor_methods.views._AsStridedOf0d"},
    # and its ``CopySlices`` of a base written through an expand of it, which refuses at backward
    "CopySlices": {"autograd._functions.tensor.CopySlices", "_tensor_methods.inplace._CopySlicesThroughAnExpand"},
}


def _functions():
    """Every built-in op of edutorch (a Function subclass declaring its own node name)."""
    for info in pkgutil.walk_packages(edutorch.__path__, "edutorch."):
        importlib.import_module(info.name)
    seen, todo = set(), [Function]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return [c for c in seen if c.__module__.startswith("edutorch.") and "_backward_name" in c.__dict__]


def _path(cls):
    return cls.__module__[len("edutorch."):] + "." + cls.__qualname__


def test_a_node_name_has_two_classes_only_where_pytorch_shares_it():
    by_name = collections.defaultdict(set)
    for cls in _functions():
        by_name[cls._backward_cls.__name__].add(_path(cls))
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    expected = {name: set(programs) for name, programs in SHARED.items()} | SHARED_WITHOUT_PROGRAM
    assert shared == expected


@pytest.mark.parametrize("name, path", [(n, p) for n, programs in SHARED.items() for p in programs])
def test_each_program_makes_a_node_of_its_class(name, path, fake_cuda):
    nodes = _graph(SHARED[name][path](edutorch, "cuda").grad_fn)
    made = [n for n in nodes if _path(getattr(n, "_forward_cls", None) or type(n)) == path]
    assert made and all(n.name() == name for n in made)


def _graph(node):
    """Every node ``node`` reaches (a backward formula's node may sit below the last op)."""
    seen, todo = [], [node]
    while todo:
        n = todo.pop()
        if n is not None and n not in seen:
            seen.append(n)
            todo.extend(f for f, _ in n.next_functions)
    return seen


@pytest.mark.parametrize("name, path", [(n, p) for n, programs in SHARED.items() for p in programs])
def test_pytorch_gives_each_program_the_shared_name(name, path):
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    assert SHARED[name][path](torch, "meta").grad_fn.name() == name


# ``x[...]`` with ``None``: PyTorch takes the index left to right, each None an unsqueeze
INDEXES_WITH_NONE = ["[None]", "[:, None]", "[..., None]", "[None, 1:]", "[0, None]", "[1:, None, 2]",
                     "[None, None, 1]", "[0, None, 1]", "[1:, None, :]", "[None][...]"]


def _chain(node):
    """The nodes from ``node`` down its first edge, with an unsqueeze's dim, to the leaf."""
    out = []
    while node is not None and "AccumulateGrad" not in node.name():
        out.append((node.name(), getattr(node, "_saved_dim", None) if "Unsqueeze" in node.name() else None))
        node = node.next_functions[0][0]
    return out


@pytest.mark.parametrize("index", INDEXES_WITH_NONE)
def test_an_index_with_none_makes_pytorchs_nodes(index):
    """One ``Unsqueeze`` class for ``x.unsqueeze(d)`` and ``x[..., None]``, in PyTorch's order."""
    torch = pytest.importorskip("torch", reason=TORCH_REASON)

    def chain(T):
        y = eval("x" + index, {"x": T.ones(3, 4, requires_grad=True)})
        return tuple(y.shape), _chain(y.grad_fn)

    assert chain(edutorch) == chain(torch)


@pytest.mark.parametrize("index", INDEXES_WITH_NONE)
def test_an_index_with_none_has_the_gradient_of_a_view(index):
    x = edutorch.tensor([[1.0, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], dtype=edutorch.float64, requires_grad=True)
    assert edutorch.autograd.gradcheck(lambda t: eval("t" + index), (x,))
    assert edutorch.autograd.gradgradcheck(lambda t: eval("t" + index), (x,))
    y = x.unsqueeze(-1)
    (g,) = edutorch.autograd.grad(y, x, edutorch.ones_like(y, requires_grad=True), create_graph=True)
    assert g.grad_fn.name() == "SqueezeBackward1"  # unsqueeze's gradient squeezes, as PyTorch's
