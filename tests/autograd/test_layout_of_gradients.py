"""The memory layout of the gradients backward hands on (``autograd/_functions/layout.py``).

PyTorch's ``sum`` backward is ``grad.expand(sizes)``: a view with stride 0, which a
hook sees as non-contiguous; ``mean``'s divides that view, a new contiguous tensor.
``.grad`` itself is always laid out like its tensor (``AccumulateGrad``'s copy).
"""
import pytest

import edutorch

try:
    import torch
except ImportError:  # the parity half of each test needs it
    torch = None

LIBRARIES = [edutorch] + ([torch] if torch is not None else [])


def _layouts_seen(lib, reduce):
    x = lib.ones(3, 4, dtype=lib.float64, requires_grad=True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.is_contiguous()))
    reduce(y).backward()
    return seen[0], x.grad.is_contiguous()


@pytest.mark.parametrize("lib", LIBRARIES, ids=lambda lib: lib.__name__)
@pytest.mark.parametrize("reduce, hook_sees_contiguous", [
    (lambda y: y.sum(), False),                 # SumBackward1 -> an expand: stride 0
    (lambda y: y.sum(1).sum(), False),
    (lambda y: y.mean(), True),                 # MeanBackward: grad.expand(...) / numel, a new tensor
    (lambda y: (y * 1).sum(), True),            # MulBackward0 of the expand: a new tensor
])
def test_the_gradient_a_hook_sees_is_laid_out_as_in_pytorch(lib, reduce, hook_sees_contiguous):
    assert _layouts_seen(lib, reduce) == (hook_sees_contiguous, True)


def test_sums_gradient_is_a_broadcast_of_one_value_and_differentiates_again():
    x = edutorch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=edutorch.float64, requires_grad=True)
    (g,) = edutorch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.tolist() == [[3.0, 12.0], [27.0, 48.0]]
    (gg,) = edutorch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [[6.0, 12.0], [18.0, 24.0]]
    (ones,) = edutorch.autograd.grad(x.sum(), x)
    assert ones.tolist() == [[1.0, 1.0], [1.0, 1.0]] and not ones.is_contiguous()
    assert ones.contiguous().view(4).tolist() == [1.0] * 4
