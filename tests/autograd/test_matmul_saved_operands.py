"""``matmul`` saves an operand, or the copy it made of it, exactly as PyTorch 2.13's does (issue 23).

Whether a later in-place write of an operand refuses backward shows which: PyTorch folds a batched
operand times a vector or a matrix that requires grad into one ``mm``/``mv`` (a copy only where the
memory cannot be viewed as one matrix), squeezes a 3-D operand with one batch matrix that requires
grad, and flattens ``bmm`` operands expanded to the common batch.  Swept over ranks, layouts,
which operand requires grad and which is written, against torch; the torch-free examples are in
tests/fuzz/test_regressions.py.
"""
import itertools
import math

import pytest

import edutorch

torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")

pytestmark = pytest.mark.parity

SHAPES_A = [(3,), (2, 3), (1, 2, 3), (2, 2, 3), (2, 1, 3)]
SHAPES_B = [(3,), (3, 2), (2, 3, 1), (2, 3, 2), (1, 3, 2), (2, 1, 3, 2)]


def operand(lib, shape, requires_grad, layout):
    """An operand of ``shape``: C order, or with its last two dims stored transposed ("T"); a
    non-leaf when it requires grad, so that it may be written in place."""
    stored = shape[:-2] + shape[:-3:-1] if layout == "T" else shape
    values = lib.arange(1, 1 + math.prod(shape), dtype=lib.float64).reshape(stored).sin()
    if requires_grad:
        values = values.requires_grad_() * 1
    return values.transpose(-1, -2) if layout == "T" else values


def backward_after_writing(lib, case):
    """'ok', 'refused' (a saved tensor was modified), or 'forward' (matmul refuses the shapes)."""
    shape_a, shape_b, grad_a, grad_b, layout_a, layout_b, written = case
    a, b = operand(lib, shape_a, grad_a, layout_a), operand(lib, shape_b, grad_b, layout_b)
    try:
        y = lib.matmul(a, b)
    except RuntimeError:
        return "forward"
    (a if written == "a" else b).mul_(2)
    try:
        (y * y).sum().backward()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
        return "refused"
    return "ok"


CASES = [
    case for case in itertools.product(SHAPES_A, SHAPES_B, (False, True), (False, True), "CT", "CT", "ab")
    if (case[2] or case[3]) and not (case[4] == "T" and len(case[0]) < 2 or case[5] == "T" and len(case[1]) < 2)
]


def test_a_later_write_of_a_matmul_operand_refuses_backward_as_in_pytorch():
    differ = [case for case in CASES if backward_after_writing(edutorch, case) != backward_after_writing(torch, case)]
    assert not differ, f"{len(differ)} of {len(CASES)} differ, e.g. {differ[:3]}"
