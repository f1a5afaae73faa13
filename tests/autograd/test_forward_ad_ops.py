"""Forward mode over the ops the fuzzer's forward mode met when it drew from every family (issue 23).

* the BCE losses take ``weight`` and ``pos_weight`` as constants: their tangents add no term
  (only they dual: no tangent), and a dual one with a dual input or target is refused, as in
  PyTorch (the tangent would have a tangent);
* ``copysign(a, b)`` with only ``b`` dual has no tangent, as in PyTorch;
* ``rrelu(x, inplace=True)`` of a dual raises PyTorch's ``NotImplementedError``.

Each is checked against PyTorch (skipped without it) and, where there is a tangent, against
central differences in float64 without PyTorch.
"""
import numpy as np
import pytest

import edutorch

EPS = 1e-6
P, Y, W = [0.3, 0.6], [0.0, 1.0], [1.5, 2.0]


def _t(lib, values):
    return lib.tensor(values, dtype=lib.float64)


def _bce(lib, p, y, w, reduction, logits, pos_weight):
    F = lib.nn.functional
    if logits:
        return F.binary_cross_entropy_with_logits(p, y, weight=w, reduction=reduction,
                                                  pos_weight=w if pos_weight else None)
    return F.binary_cross_entropy(p, y, weight=w, reduction=reduction)


def bce_tangent(lib, duals, reduction, logits=False, pos_weight=False):
    """The tangent (a list, or None) or the error message of BCE with the named arguments dual."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        args = [_t(lib, v) for v in (P, Y, W)]
        args = [fw.make_dual(a, a * 0 + 0.5) if name in duals else a for name, a in zip("pyw", args)]
        try:
            out = _bce(lib, *args, reduction, logits, pos_weight)
        except RuntimeError as err:
            return str(err)
        tangent = fw.unpack_dual(out).tangent
        return None if tangent is None else tangent.tolist()


BCE = [(duals, reduction, logits, pos_weight) for duals in ("w", "pw", "yw", "pyw")
       for reduction in ("mean", "none") for logits, pos_weight in ((False, False), (True, False), (True, True))]


@pytest.mark.parametrize("duals, reduction, logits, pos_weight", BCE)
def test_bce_weight_tangents_are_pytorchs(duals, reduction, logits, pos_weight):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    want = bce_tangent(torch, duals, reduction, logits, pos_weight)
    got = bce_tangent(edutorch, duals, reduction, logits, pos_weight)
    if isinstance(want, list):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    else:
        assert got == want


@pytest.mark.parametrize("logits, pos_weight", [(False, False), (True, False), (True, True)])
def test_bce_weight_is_a_constant(logits, pos_weight):
    # a dual weight alone: no tangent; with a dual input as well: refused (a tangent with a tangent)
    assert bce_tangent(edutorch, "w", "none", logits, pos_weight) is None
    assert bce_tangent(edutorch, "pw", "none", logits, pos_weight) == (
        "Setting a forward grad that itself has a forward gradient at the same level0 is not supported.")


@pytest.mark.parametrize("logits, pos_weight", [(False, False), (True, False), (True, True)])
def test_bce_tangent_with_a_weight_is_a_central_difference(logits, pos_weight):
    got = bce_tangent(edutorch, "p", "none", logits, pos_weight)

    def at(h):
        p = _t(edutorch, P) + h * 0.5
        return _bce(edutorch, p, _t(edutorch, Y), _t(edutorch, W), "none", logits, pos_weight).numpy()

    np.testing.assert_allclose(got, (at(EPS) - at(-EPS)) / (2 * EPS), rtol=1e-6)


def copysign_tangents(lib):
    """Tangents (or None) of ``copysign`` with only the sign dual: out of place, in place, through a view."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        s = fw.make_dual(_t(lib, [1.0, -2.0]), _t(lib, [1.0, 1.0]))
        out = lib.copysign(_t(lib, [3.0, 4.0]), s)
        x = _t(lib, [3.0, 4.0])
        x.copysign_(s)
        base = _t(lib, [3.0, 4.0])
        base[:1].copysign_(s[:1])
        both = fw.make_dual(_t(lib, [3.0, 4.0]), _t(lib, [1.0, 1.0]))
        both.copysign_(s)
        tangents = [fw.unpack_dual(v).tangent for v in (out, x, base, both)]
        return [None if t is None else t.tolist() for t in tangents]


def test_copysign_of_a_dual_sign_has_no_tangent():
    assert copysign_tangents(edutorch) == [None, None, None, [1.0, -1.0]]


def test_copysign_tangents_are_pytorchs():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert copysign_tangents(edutorch) == copysign_tangents(torch)


def rrelu_in_place_error(lib, call):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(_t(lib, [3.0, -4.0]), _t(lib, [1.0, 1.0]))
        with pytest.raises(NotImplementedError) as err:
            call(lib.nn.functional, x)
        return str(err.value)


RRELU_IN_PLACE = {"inplace": lambda F, x: F.rrelu(x, inplace=True),
                  "rrelu_": lambda F, x: F.rrelu_(x, training=True)}


@pytest.mark.parametrize("call", sorted(RRELU_IN_PLACE))
def test_rrelu_in_place_has_no_forward_formula(call):
    message = rrelu_in_place_error(edutorch, RRELU_IN_PLACE[call])
    assert message.startswith("Trying to use forward AD with rrelu_with_noise_ that does not support it")


@pytest.mark.parametrize("call", sorted(RRELU_IN_PLACE))
def test_rrelu_in_place_error_is_pytorchs(call):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert rrelu_in_place_error(edutorch, RRELU_IN_PLACE[call]) == rrelu_in_place_error(torch, RRELU_IN_PLACE[call])


def matrix_norm_of_empty(lib, shape, ord):
    """(requires_grad, tangent) of ``matrix_norm(x, ord)`` of an empty ``x`` that requires grad / is dual."""
    x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
    requires_grad = lib.linalg.matrix_norm(x, ord).requires_grad
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        dual = fw.make_dual(lib.zeros(shape, dtype=lib.float64), lib.ones(shape, dtype=lib.float64))
        tangent = fw.unpack_dual(lib.linalg.matrix_norm(dual, ord)).tangent
    return requires_grad, None if tangent is None else tangent.tolist()


# the max over nothing (singular values, column sums, row sums) is a constant 0 in PyTorch: no
# gradient, no tangent (seeds 3750000591, 4750000674); otherwise zeros that are differentiable
EMPTY_NORMS = [((2, 0, 4), 2, True), ((3, 3, 0), 2, True), ((0, 3, 3), 2, False), ((1, 1, 0), 1, True),
               ((1, 0, 1), 1, False), ((1, 0, 1), float("inf"), True), ((1, 1, 0), float("inf"), False)]


@pytest.mark.parametrize("shape, ord, constant", EMPTY_NORMS)
def test_matrix_norm_max_over_nothing_is_a_constant(shape, ord, constant):
    if constant:
        assert matrix_norm_of_empty(edutorch, shape, ord) == (False, None)
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    assert matrix_norm_of_empty(edutorch, shape, ord) == matrix_norm_of_empty(torch, shape, ord)
