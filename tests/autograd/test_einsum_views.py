"""``einsum`` aliases as PyTorch's does (issue 23): with a letter to sum over two operands it
ends in ``bmm`` and views (its result is a view), without one in a product (not a view); one
operand is a permutation (a view) or a sum.  Checked against torch 2.13 over many equations,
values and gradients included; the torch-free examples are in tests/fuzz/test_regressions.py.
"""
import math

import pytest

import edutorch

SHAPES = {"a": (2, 3), "b": (3, 4), "c": (3,), "B": (5, 2, 3), "C": (5, 3, 4), "D": (1, 3, 4), "sq": (3, 3),
          "e": (2, 1), "f": (4, 2)}
EQUATIONS = [
    ("ij,jk->ik", "a b"), ("ij,jk->ki", "a b"), ("ij,j->i", "a c"), ("i,i->", "c c"), ("i,j->ij", "c c"),
    ("i,j->ji", "c c"), ("ij->ji", "a"), ("ij->i", "a"), ("ii->i", "sq"), ("ij->", "a"), ("ij->ij", "a"),
    ("bij,bjk->bik", "B C"), ("bij,bjk->bik", "B D"), ("ij,ij->ij", "a a"), ("ij,ij->i", "a a"),
    ("ij,kj->ik", "a a"), ("ij,ik->jk", "a a"), ("i,i->i", "c c"), ("ij,jk", "a b"), ("ij,ij", "a a"),
    ("ij,jk,kl->il", "a b f"), ("ij,k->i", "a c"), ("ij,jk->", "a b"), ("ii,i->i", "sq c"),
    ("...j,jk->...k", "B b"), ("ij,kl->ijkl", "a b"), ("ij,jk->ijk", "a b"), ("ik,jk->", "e e"),
    ("ij,ij->j", "e e"),
]


def operand(lib, name):
    shape = SHAPES[name]
    values = lib.arange(1, 1 + math.prod(shape), dtype=lib.float64).reshape(shape).sin()
    return values.requires_grad_()


def run(lib, equation, names, is_view):
    operands = [operand(lib, n) for n in names.split()]
    y = lib.einsum(equation, *operands)
    (y * y).sum().backward()
    return is_view(y), tuple(y.shape), y.tolist(), [o.grad.tolist() for o in operands]


@pytest.mark.parametrize("equation, names", EQUATIONS)
def test_einsum_views_values_and_gradients_match_torch(equation, names):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    mine = run(edutorch, equation, names, lambda y: "_view_of" in y.__dict__)
    theirs = run(torch, equation, names, lambda y: y._base is not None)
    assert mine[:2] == theirs[:2]
    assert edutorch.allclose(edutorch.tensor(mine[2]), edutorch.tensor(theirs[2]), rtol=1e-12)
    for g, h in zip(mine[3], theirs[3]):
        assert edutorch.allclose(edutorch.tensor(g), edutorch.tensor(h), rtol=1e-12)
