"""Disagreements the fuzzer found once its op table covered every differentiable op (issue 23).

Each test is a shrunk finding, checked two ways: against a torch-free expectation
(a float64 finite-difference gradient check, or the value by hand), and, when real
PyTorch is installed, against PyTorch running the same lines (``same_on_both``).
"""
import numpy as np
import pytest

import edutorch

try:  # the oracle, when installed
    import torch as real_torch
except ImportError:  # pragma: no cover - the torch-free checks still run
    real_torch = None

gradcheck = edutorch.autograd.gradcheck
gradgradcheck = edutorch.autograd.gradgradcheck


def same_on_both(program):
    """Run ``program(torch)`` on edutorch and (when installed) on PyTorch: the same tensors, or the
    same error type.  Returns edutorch's result (a tuple of tensors, or the exception type)."""
    def run(lib):
        try:
            return tuple(np.array(t.detach().numpy()) if t is not None else None for t in program(lib))
        except Exception as err:  # noqa: BLE001 - compared by type
            return type(err)

    got = run(edutorch)
    if real_torch is not None:
        want = run(real_torch)
        if isinstance(want, type) or isinstance(got, type):
            assert got is want or (isinstance(got, type) and isinstance(want, type) and issubclass(got, want)), \
                (got, want)
        else:
            assert len(got) == len(want)
            for a, b in zip(got, want):
                assert (a is None) == (b is None) and (a is None or np.allclose(a, b, rtol=1e-7, atol=1e-12)), (a, b)
    return got


def f64(lib, values, requires_grad=True):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


# --- kl_div (seed 80171003 of the op triage, double mode) -------------------------------------
def test_kl_div_second_derivative_wrt_the_target():
    # kl_div(x, t) is PyTorch's composite xlogy(t, t) - t * x: the target's second derivative is 1/t
    # (edutorch's was 0: it added log(t) + 1 as a constant slope)
    def program(lib):
        x = f64(lib, [[0.3, -1.2, 0.8], [1.1, 0.2, -0.4]])
        y = f64(lib, [[0.5, 0.6, -0.8], [-1.3, 0.7, 0.1]])
        loss = lib.nn.functional.kl_div(x, y.sigmoid(), reduction="sum")
        gx, gy = lib.autograd.grad(loss, [x, y], create_graph=True)
        ((gx * gx).sum() + (gy * gy).sum()).backward()
        return x.grad, y.grad

    same_on_both(program)
    x = edutorch.tensor([[0.3, -1.2], [0.8, 0.1]], dtype=edutorch.float64, requires_grad=True)
    t = edutorch.tensor([[0.2, 0.5], [0.25, 0.05]], dtype=edutorch.float64, requires_grad=True)
    for reduction in ("sum", "batchmean", "none"):
        fn = lambda a, b, r=reduction: edutorch.nn.functional.kl_div(a, b, reduction=r)  # noqa: E731
        assert gradcheck(fn, (x, t)) and gradgradcheck(fn, (x, t))


def test_kl_div_of_a_zero_target_is_zero():
    x = edutorch.tensor([0.3, -1.2], dtype=edutorch.float64, requires_grad=True)
    t = edutorch.tensor([0.0, 0.5], dtype=edutorch.float64)
    loss = edutorch.nn.functional.kl_div(x, t, reduction="sum")
    assert loss.item() == pytest.approx(0.5 * (np.log(0.5) + 1.2))


# --- div(rounding_mode=) (seeds 821215000, 73754001, 676593000) --------------------------------
def test_div_with_a_rounding_mode_is_recorded_with_zero_gradients():
    # PyTorch records DivBackward2 (the result requires grad) with zero gradients; edutorch gave a
    # result without a graph, so x.grad stayed None and backward of it alone raised
    def program(lib):
        x = f64(lib, [1.5, -2.3, 0.4])
        w = f64(lib, [0.7, 0.4, -0.9])
        a = lib.div(x, 0.7, rounding_mode="trunc")
        b = x.div(w, rounding_mode="floor")
        c = x * 1
        c.div_(w, rounding_mode="trunc")
        (a + b + c).sum().backward()
        return a, b, c, x.grad, w.grad

    a, b, c, gx, gw = same_on_both(program)
    assert np.array_equal(gx, np.zeros(3)) and np.array_equal(gw, np.zeros(3))
    x = edutorch.tensor([1.5, -2.3], dtype=edutorch.float64, requires_grad=True)
    y = x.div(0.7, rounding_mode="floor")
    assert y.requires_grad and y.grad_fn.name() == "DivBackward2"


def test_floor_division_of_floats_is_computed_from_fmod():
    # 0.4 is a little more than 0.4, so 2.0 / 0.4 rounds up to 5.0 but 2.0 // 0.4 is 4.0 (Python, PyTorch)
    def program(lib):
        a = lib.tensor([2.0, -2.0, 7.3, 1.0], dtype=lib.float64)
        b = lib.tensor([0.4, 0.4, -0.1, 0.0], dtype=lib.float64)
        return lib.div(a, b, rounding_mode="floor"), a // 0.4, lib.floor_divide(a, b)

    floor, by_number, fn = same_on_both(program)
    assert floor.tolist() == [2.0 // 0.4, -2.0 // 0.4, 7.3 // -0.1, float("inf")]
    assert by_number[0] == 4.0


def test_div_with_a_rounding_mode_saves_each_operand_for_the_other():
    def program(lib, written):
        x = f64(lib, [1.5, -2.3])
        w = lib.tensor([0.7, 0.4], dtype=lib.float64, requires_grad=written == "x")
        xs = x * 1
        y = xs.div(w, rounding_mode="floor")
        (w if written == "w" else xs).add_(1)  # w saved for x's zero gradient; x only when w needs one
        y.sum().backward()
        return (x.grad,)

    assert same_on_both(lambda lib: program(lib, "w")) is RuntimeError
    assert same_on_both(lambda lib: program(lib, "x")) is RuntimeError


# --- lerp with a tensor weight (seed 78333000) ---------------------------------------------------
def test_lerp_with_a_tensor_weight():
    # edutorch raised AttributeError ('Tensor' object has no attribute 'astype')
    def program(lib):
        x = f64(lib, [[1.5, -2.3, 0.4], [0.2, 0.3, -1.1]])
        e = f64(lib, [0.7, 0.4, -0.9])
        w = f64(lib, [[0.2], [0.9]])
        a = lib.lerp(x, e, w)
        b = x * 1
        b.lerp_(e, e.sigmoid())
        loss = (a * a).sum() + (b * b * b).sum()
        grads = lib.autograd.grad(loss, [x, e, w], create_graph=True)
        (loss + sum((g * g).sum() for g in grads)).backward()
        return a, b, x.grad, e.grad, w.grad

    same_on_both(program)
    x, e, w = (edutorch.tensor(v, dtype=edutorch.float64, requires_grad=True)
               for v in ([[1.5, -2.3], [0.2, 0.3]], [0.7, -0.9], [[0.2], [0.9]]))
    assert gradcheck(edutorch.lerp, (x, e, w)) and gradgradcheck(edutorch.lerp, (x, e, w))
    assert edutorch.lerp(x, e, w).grad_fn.name() == "LerpBackward1"


def test_lerp_saves_its_weight_for_the_other_gradients():
    def program(lib):
        x = f64(lib, [1.5, -2.3])
        w = lib.tensor([0.2, 0.9], dtype=lib.float64)
        y = lib.lerp(x * 1, x * 2, w)
        w.add_(1)
        y.sum().backward()
        return (x.grad,)

    assert same_on_both(program) is RuntimeError


# --- scaled_dot_product_attention with a query that sees no key (seed 759816001) ---------------
def test_attention_of_a_query_that_sees_no_key_is_zero():
    # PyTorch's math path uses _safe_softmax: a fully masked row gives 0 (edutorch gave NaN)
    def program(lib):
        q = f64(lib, [[0.3, -1.2], [1.1, 0.2], [0.5, -0.7]])
        k = f64(lib, [[0.5, 0.6], [-1.3, 0.7]])
        v = f64(lib, [[0.4, -0.2, 1.0], [0.9, 0.1, -0.3]])
        mask = lib.tensor([[True, False], [False, False], [True, True]])
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        (out * out).sum().backward()
        return out, q.grad, k.grad, v.grad

    out, gq, gk, gv = same_on_both(program)
    assert np.array_equal(out[1], np.zeros(3)) and np.array_equal(gq[1], np.zeros(2))
    assert np.all(np.isfinite(gk)) and np.all(np.isfinite(gv))
    q, k, v = (edutorch.tensor(a, dtype=edutorch.float64, requires_grad=True)
               for a in ([[0.3, -1.2], [1.1, 0.2]], [[0.5, 0.6], [-1.3, 0.7]], [[0.4, -0.2], [0.9, 0.1]]))
    mask = edutorch.tensor([[True, False], [False, False]])
    fn = lambda q, k, v: edutorch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # noqa: E731
    assert gradcheck(fn, (q, k, v))


# --- convolution padding_mode with padding='same' (seed 215976002) -------------------------------
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv_padding_mode_with_a_padding_string(mode, padding):
    # edutorch raised TypeError (`pad_width` must be of integral type): it padded by the string
    def program(lib):
        lib.manual_seed(0)
        m = lib.nn.Conv2d(2, 3, (2, 3), padding=padding, padding_mode=mode, dilation=(2, 1), dtype=lib.float64)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(np.linspace(-1, 1, 36).reshape(3, 2, 2, 3)))
            m.bias.copy_(lib.tensor([0.1, -0.2, 0.3]))
        x = lib.tensor(np.linspace(-2, 2, 40).reshape(1, 2, 4, 5), requires_grad=True)
        y = m(x)
        (y * y).sum().backward()
        return y, x.grad, m.weight.grad

    y, _, _ = same_on_both(program)
    assert y.shape == ((1, 3, 4, 5) if padding == "same" else (1, 3, 2, 3))


# --- F.pad with negative widths (seed 364783000) ---------------------------------------------------
def test_constant_pad_with_negative_widths_crops():
    def program(lib):
        x = f64(lib, [[0.3, -1.2, 0.8, 0.1], [1.1, 0.2, -0.4, 0.9], [0.5, 0.6, -0.8, 0.2]])
        a = lib.nn.functional.pad(x, (-1, 2, 1, -2), value=0.5)
        b = lib.nn.ZeroPad2d((1, 0, -1, 2))(x.unsqueeze(0))
        ((a * a * a).sum() + (b * b).sum()).backward()
        return a, b, x.grad

    a, _, _ = same_on_both(program)
    assert a.tolist()[0] == [0.5] * 5 and a.tolist()[1][:3] == [-1.2, 0.8, 0.1]
    x = edutorch.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    assert gradgradcheck(lambda t: edutorch.nn.functional.pad(t, (-1, 2, 1, -2)), (x,))
    too_much = lambda lib: (lib.nn.functional.pad(lib.ones(2, 3), (0, 0, -3, 1)),)  # noqa: E731
    assert same_on_both(too_much) is RuntimeError


# --- pixel_shuffle / pixel_unshuffle give a new tensor (seeds 166320004, 252163005) ---------------
@pytest.mark.parametrize("name", ["pixel_shuffle", "pixel_unshuffle"])
def test_pixel_shuffle_by_one_is_not_a_view(name):
    # edutorch returned a view of the input, so an in-place op on it was an in-place op on a view of a leaf
    def program(lib):
        x = f64(lib, np.linspace(-1, 1, 8).reshape(1, 2, 2, 2).tolist())
        y = getattr(lib.nn.functional, name)(x, 1)
        y.mul_(2)
        y.detach_()
        return y, x

    same_on_both(program)


def test_split_with_sizes_is_a_tensor_method():
    def program(lib):
        x = f64(lib, [1.0, 2.0, 3.0])
        a, b = x.split_with_sizes([1, 2])
        (a.sum() * 2 + b.sum()).backward()
        return a, b, x.grad

    same_on_both(program)
    assert same_on_both(lambda lib: lib.split_copy(lib.ones(3), [1, 2])) is TypeError


# --- slogdet's sign, matrix_power(0/1), sum_to_size(()) (seeds 853549000, 518271000, 784196000) ---
def test_slogdet_sign_is_in_the_graph_without_a_gradient():
    # the sign requires grad (PyTorch's LinalgSlogdetBackward0 makes both outputs); a loss of the sign
    # alone gives A no gradient (None), and logabsdet's gradient is A^{-T}
    def program(lib):
        a = f64(lib, [[1.1, -0.44, -1.51], [0.96, 0.76, 0.92], [-2.07, -0.3, 1.06]])
        b = f64(lib, [[0.5, 0.2], [0.1, -0.9]])
        sign, logabs = lib.linalg.slogdet(a)
        sign_b, _ = lib.linalg.slogdet(b)
        assert sign.requires_grad and not sign.is_leaf
        (sign * logabs + sign_b * 2).backward()
        return sign, logabs, a.grad, b.grad

    _, _, ga, gb = same_on_both(program)
    assert gb is None
    a = edutorch.tensor([[1.1, -0.44], [0.96, 0.76]], dtype=edutorch.float64, requires_grad=True)
    logabs = lambda t: edutorch.linalg.slogdet(t)[1]  # noqa: E731
    assert gradcheck(logabs, (a,), check_forward_ad=True) and gradgradcheck(logabs, (a,))


@pytest.mark.parametrize("n", [0, 1])
def test_matrix_power_0_and_1_are_new_tensors_in_the_graph(n):
    def program(lib):
        a = f64(lib, [[0.58, -0.49], [-1.67, 2.46]])
        p = a.matrix_power(n)
        assert p is not a and not p.is_leaf and p.requires_grad
        p.mul_(2)  # a new tensor: writing it leaves a alone
        (p * p).sum().backward()
        return p, a, a.grad

    _, _, grad = same_on_both(program)
    assert np.array_equal(grad, np.zeros((2, 2))) if n == 0 else grad is not None


def test_sum_to_size_of_a_0d_tensor_is_a_sum():
    # PyTorch's sum_to returns tensor.sum() for an empty size, even of a 0-d tensor (a new node)
    def program(lib):
        x = f64(lib, 1.5)
        y = x.sum_to_size(())
        assert y is not x and not y.is_leaf
        return (y,)

    same_on_both(program)


# --- copysign and sgn keep what PyTorch's nodes keep (seeds 617429003, 94539000, 516486000) ------
@pytest.mark.parametrize("written", ["result", "sgn", None])
def test_copysign_and_sgn_save_their_input_and_result(written):
    # edutorch's copysign was a where() of abs and its sgn was sign: nothing was saved where PyTorch
    # saves (a write then refused backward in PyTorch only), and the sign operand got no gradient
    def program(lib):
        x = f64(lib, [[0.3, -1.2, 0.8], [1.1, 0.2, -0.4]])
        y = f64(lib, [-0.5, 0.7, -0.9])
        xs = x * 1
        a = lib.copysign(xs, y)
        b = xs.copysign(-1.5)
        c = xs.sgn()
        if written:
            (a if written == "result" else c).add_(1)
        ((a * a * a).sum() + (b * c).sum()).backward()
        return a, b, c, x.grad, y.grad

    got = same_on_both(program)
    if written:
        assert got is RuntimeError
    else:
        assert np.array_equal(got[4], np.zeros(3))  # PyTorch: zeros_like(other), not None
    x = edutorch.tensor([[0.3, -1.2], [1.1, 0.2]], dtype=edutorch.float64, requires_grad=True)
    y = edutorch.tensor([-0.5, 0.7], dtype=edutorch.float64, requires_grad=True)
    assert gradcheck(edutorch.copysign, (x, y), check_forward_ad=True) and gradgradcheck(edutorch.copysign, (x, y))


@pytest.mark.parametrize("k", [1, 2, 3, 0])
def test_rot90_is_never_a_view(k):
    # edutorch returned a transpose (a view) of the flipped copy, so detach_() of it was refused
    def program(lib):
        x = f64(lib, [[0.3, -1.2, 0.8], [1.1, 0.2, -0.4]])
        r = x.rot90(k, [0, 1])
        r.mul_(2)
        r.detach_()
        return (r,)

    same_on_both(program)


# --- bad shapes refused as PyTorch refuses them (seeds 330512003, 67478005, 204379003, 859128004) ---
@pytest.mark.parametrize("call", [
    "F.group_norm(T.ones(1, 2, 2, 2), 2, T.ones(2, 1), T.ones(2))",  # ran: a silent wrong answer
    "F.group_norm(T.ones(1, 2, 2, 2), 2, T.ones(2), T.ones(3))",
    "F.layer_norm(T.ones(2, 4), (4,), T.ones(2, 4), T.ones(4))",  # ran: a silent wrong answer
    "F.layer_norm(T.ones(2, 4), (4,), T.ones(4), T.ones(4, 2))",
    "F.bilinear(T.ones(2, 1), T.ones(2, 3), T.ones(4, 1, 3), T.ones(3))",
    "F.conv1d(T.ones(1, 3, 3), T.ones(4, 3, 2, 1))",
    "F.conv2d(T.ones(1, 3, 3, 3), T.ones(4, 3))",
])
def test_a_weight_or_bias_of_the_wrong_shape_is_a_runtime_error(call):
    def program(lib):
        return (eval(call, {"T": lib, "F": lib.nn.functional}),)

    assert same_on_both(program) is RuntimeError


def test_trapezoid_rules_over_an_empty_dim():
    # edutorch's narrow(dim, 1, n - 1) raised for n = 0; PyTorch: trapezoid gives 0 (outside the graph),
    # cumulative_trapezoid an empty result; of a 0-d tensor both raise IndexError
    def program(lib):
        y = lib.zeros(0, 3, dtype=lib.float64, requires_grad=True)
        a = lib.trapezoid(y, dim=0)
        b = lib.cumulative_trapezoid(y, dim=0)
        assert a.grad_fn is None and b.requires_grad
        return a, b, lib.trapezoid(y, dim=1), lib.trapezoid(f64(lib, [[1.0, 2.0]]), dim=0)

    a, b, c, d = same_on_both(program)
    assert a.tolist() == [0.0, 0.0, 0.0] and b.shape == (0, 3)
    for name in ("trapezoid", "cumulative_trapezoid"):
        assert same_on_both(lambda lib, n=name: (getattr(lib, n)(f64(lib, 1.5)),)) is IndexError


def test_pinv_of_an_empty_matrix():
    def program(lib):
        x = lib.zeros(2, 0, 3, dtype=lib.float64, requires_grad=True)
        p = lib.linalg.pinv(x)
        p.sum().backward()
        return p, x.grad

    p, _ = same_on_both(program)
    assert p.shape == (2, 3, 0)


def test_sum_to_size_of_a_0d_tensor_does_not_share_its_memory():
    # seed 23114006: SumToSize returned the input's own array when there was nothing to sum, so a later
    # in-place write to the result changed the input too (a silent alias)
    def program(lib):
        x = f64(lib, 1.06)
        v = x.sum_to_size(())
        w = v.sum_to_size(())
        w.mul_(2)
        return v, w

    v, w = same_on_both(program)
    assert v == 1.06 and w == 2.12


@pytest.mark.parametrize("ys, xs, dim", [((3,), (3, 2), -1), ((2, 3), (3,), 1), ((2, 3, 4), (3, 4), 1),
                                          ((2, 3), (3, 3, 2, 3), -2)])
def test_trapezoid_with_sample_points_of_another_shape(ys, xs, dim):
    # seed 446040000: x with more dims than y was differenced along its own last dim and the sum taken
    # over x's dim; PyTorch takes the spacings along y's dim in x, then broadcasts (NumPy's rule)
    def program(lib):
        y = lib.tensor(np.linspace(-1, 2, int(np.prod(ys))).reshape(ys), requires_grad=True)
        x = lib.tensor(np.linspace(0.3, 1.7, int(np.prod(xs))).reshape(xs) ** 2, requires_grad=True)
        a = lib.trapezoid(y, x, dim=dim)
        b = lib.cumulative_trapezoid(y, x, dim=dim)
        (a.sum() + (b * b).sum()).backward()
        return a, b, y.grad, x.grad

    a, _, _, _ = same_on_both(program)
    y = np.linspace(-1, 2, int(np.prod(ys))).reshape(ys)
    x = np.linspace(0.3, 1.7, int(np.prod(xs))).reshape(xs) ** 2
    if x.ndim in (1, y.ndim):  # NumPy's rule, which PyTorch follows (it pads, or reads dim as y's, otherwise)
        trapezoid = getattr(np, "trapezoid", None) or np.trapz
        assert np.allclose(a, trapezoid(y, x, axis=dim))
    yt, xt = (edutorch.tensor(v, requires_grad=True) for v in (y, x))
    assert gradcheck(lambda p, q: edutorch.trapezoid(p, q, dim=dim), (yt, xt))


# --- LAPACK results are column-major, as PyTorch's (seed 500000479, double mode) ----------------
@pytest.mark.parametrize("op", ["svd_vh", "svd_u", "qr_q", "eigh", "inv", "solve"])
def test_a_reshape_of_a_lapack_result_copies_as_in_pytorch(op):
    # svd(x).Vh.square().reshape(-1) was a view here (C order) and a copy in PyTorch (LAPACK's
    # column-major layout), so an in-place write to the reshape changed the square here only
    def program(lib):
        x = f64(lib, [[-0.74, 1.58, -1.07], [1.8, 0.77, -2.26], [0.4, -0.3, 1.2]])
        m = {"svd_vh": lambda: lib.linalg.svd(x).Vh, "svd_u": lambda: lib.linalg.svd(x).U,
             "qr_q": lambda: lib.linalg.qr(x).Q, "eigh": lambda: lib.linalg.eigh(x + x.mT).eigenvectors,
             "inv": lambda: lib.linalg.inv(x), "solve": lambda: lib.linalg.solve(x, x * 2)}[op]()
        sq = m.square()
        flat = sq.reshape(-1)
        flat.mul_(0)
        return sq, flat

    sq, flat = same_on_both(program)
    assert np.any(sq != 0) and np.all(flat == 0)


def test_index_add_with_alpha_refuses_a_bad_index_with_index_error():
    # seed 134: with alpha != 1 PyTorch's kernel checks as index_select does (IndexError), without
    # it a RuntimeError for a matrix
    for alpha, error in ((-1.5, IndexError), (1, RuntimeError)):
        program = lambda lib, a=alpha: (lib.zeros(3, 3).index_add_(0, lib.tensor([-2]), lib.ones(1, 3), alpha=a),)  # noqa: E731
        assert same_on_both(program) is error


def test_permute_without_dims_is_a_type_error():
    assert same_on_both(lambda lib: (lib.tensor(1.5).permute(),)) is TypeError
    same_on_both(lambda lib: (lib.tensor(1.5).permute(()),))


@pytest.mark.parametrize("written", ["result", "other"])
def test_erfinv_and_logaddexp2_save_what_pytorch_saves(written):
    # seed 1579: erfinv saved its result (PyTorch: its input), so relu_ of the result refused backward
    # here only; seed 1819: logaddexp2 was a composite that kept neither input
    def program(lib):
        x = f64(lib, [0.3, -0.7])
        y = lib.tensor([0.5, 1.5], dtype=lib.float64)
        e = (x * 1).erfinv()
        s = lib.logaddexp2(x, y)
        (e if written == "result" else y).mul_(2)
        (e.sum() + s.sum()).backward()
        return (x.grad,)

    got = same_on_both(program)
    assert (got is RuntimeError) == (written == "other")
    x = edutorch.tensor([0.3, -0.7], dtype=edutorch.float64, requires_grad=True)
    y = edutorch.tensor([1.3, -0.2], dtype=edutorch.float64, requires_grad=True)
    assert gradcheck(edutorch.logaddexp2, (x, y), check_forward_ad=True) and gradgradcheck(edutorch.logaddexp2, (x, y))
    assert gradcheck(edutorch.erfinv, (x,), check_forward_ad=True) and gradgradcheck(edutorch.erfinv, (x,))


@pytest.mark.parametrize("written", ["x", "result", None])
def test_fmax_fmin_and_logcumsumexp_keep_what_pytorch_keeps(written):
    # seeds 824, 1582: fmax/fmin were a where() that kept neither input (a later write to one ran here,
    # PyTorch refuses); seeds 671, 1485: logcumsumexp was a composite that kept no result; and of an
    # empty tensor it raised IndexError (seed 550)
    def program(lib):
        x = f64(lib, [[0.3, -1.2, 0.8], [1.1, 0.2, -0.4]])
        y = f64(lib, [-0.5, 0.7, float("nan")])
        xs = x * 1
        a, b = lib.fmax(xs, y), xs.fmin(y)
        c = xs.logcumsumexp(1)
        e = lib.zeros(0, 2, dtype=lib.float64, requires_grad=True).logcumsumexp(0)
        if written == "x":
            xs.mul_(2)
        elif written == "result":
            c.mul_(2)
        ((a * a * a).sum() + (b * c).sum() + e.sum()).backward()
        return a, b, c, x.grad, y.grad

    got = same_on_both(program)
    assert (got is RuntimeError) == (written is not None)
    x = edutorch.tensor([[0.3, -0.7, 2.0], [1.0, 0.1, -0.5]], dtype=edutorch.float64, requires_grad=True)
    y = edutorch.tensor([1.3, -0.9, 0.2], dtype=edutorch.float64, requires_grad=True)
    for fn in (edutorch.fmax, edutorch.fmin):
        assert gradcheck(fn, (x, y), check_forward_ad=True) and gradgradcheck(fn, (x, y))
    scan = lambda t: edutorch.logcumsumexp(t, 1)  # noqa: E731
    assert gradcheck(scan, (x,), check_forward_ad=True) and gradgradcheck(scan, (x,))


def test_nll_loss_refuses_a_class_weight_that_requires_grad():
    # seed 400000003684: PyTorch's nll_loss has no gradient for its weight and refuses one that requires
    # grad; edutorch ran (and gave it none)
    def program(lib, ndim):
        x = f64(lib, np.linspace(-1, 1, 6 * (2 if ndim == 3 else 1)).reshape((2, 3) + ((2,) if ndim == 3 else ())).tolist())
        w = f64(lib, [0.5, 0.3, 0.2])
        target = lib.tensor([0, 2]) if ndim == 2 else lib.tensor([[0, 2], [1, 1]])
        return (lib.nn.functional.nll_loss(x, target, weight=w), lib.nn.functional.cross_entropy(x, target, weight=w))

    for ndim in (2, 3):
        assert same_on_both(lambda lib, n=ndim: program(lib, n)) is RuntimeError
    def without_grad_mode(lib):
        with lib.no_grad():  # nothing is recorded: both compute the weighted loss
            return program(lib, 2)

    same_on_both(without_grad_mode)


def test_logsumexp_needs_its_dims():
    # seed 400000003200: logsumexp(x, None) ran here; PyTorch's argument parser refuses None
    assert same_on_both(lambda lib: (lib.logsumexp(lib.ones(3), None),)) is TypeError
    assert same_on_both(lambda lib: (lib.ones(3).logsumexp(None),)) is TypeError


def test_slogdet_keeps_its_sign():
    # seed 400000003987: a write to the sign, then backward, refuses in PyTorch (its node keeps the sign)
    def program(lib):
        a = f64(lib, [[0.53, 0.1], [0.2, 0.9]])
        sign, logabs = lib.linalg.slogdet(a)
        sign.mul_(1)
        (sign * logabs).backward()
        return (a.grad,)

    assert same_on_both(program) is RuntimeError


@pytest.mark.parametrize("call", [
    "F.conv1d(T.ones(1, 4), T.ones(1, 1, 2), T.ones(3))",  # seed 401000003154: ran
    "T.select_scatter(T.zeros(2, 3, 3), T.zeros(()), 2, 0)",  # seed 401000003807: broadcast, ran
    "T.slice_scatter(T.zeros(2, 3, 3), T.zeros(2, 3, 1), 2, 0, 2)",
    "T.diagonal_scatter(T.zeros(2, 3, 3), T.zeros(3), 0, 1, 2)",
])
def test_a_source_or_bias_of_the_wrong_size_is_refused(call):
    assert same_on_both(lambda lib: (eval(call, {"T": lib, "F": lib.nn.functional}),)) is RuntimeError


def test_view_copy_does_not_need_viewable_strides():
    # seed 401000004523: PyTorch's view_copy copies anyway (a reshape, then a copy); edutorch refused
    def program(lib):
        x = f64(lib, np.arange(12.0).reshape(4, 3).tolist())
        return (lib.view_copy(x.t(), (12,)), lib.view_copy(x, (2, -1)))

    same_on_both(program)


def test_a_batch_first_rnn_output_is_not_a_view():
    # seed 401000002817: the output was a transpose (a view), so detach_() of it was refused
    def program(lib):
        x = f64(lib, [[[0.3, -1.2], [0.8, 0.1], [1.1, 0.2]], [[-0.4, 0.5], [0.9, -0.7], [0.2, 0.6]]])
        m = lib.nn.GRU(2, 3, num_layers=2, batch_first=True, dtype=lib.float64)
        n = sum(p.numel() for p in m.parameters())
        lib.nn.utils.vector_to_parameters(lib.linspace(-1, 1, n, dtype=lib.float64), m.parameters())
        out, h = m(x)
        flat = out.reshape(-1)  # a copy in both: the output keeps the transposed strides
        flat.mul_(2)
        ((out * out).sum() + (h * h).sum()).backward()
        out.detach_()
        return out, h, x.grad

    same_on_both(program)


def test_nansum_and_nanmean_keep_their_input():
    # seed 401000005024: nansum was where(isnan, 0, x).sum(), keeping nothing; PyTorch's NansumBackward0
    # keeps the input, so a later write to it refuses backward
    def program(lib, write):
        x = f64(lib, [[0.3, float("nan"), 0.8], [1.1, 0.2, -0.4]])
        y = x * 1
        a, m = y.nansum(1), y.nanmean(None)
        if write:
            y.mul_(2)
        ((a * a).sum() + m).backward()
        return a, m, x.grad

    assert same_on_both(lambda lib: program(lib, True)) is RuntimeError
    _, _, grad = same_on_both(lambda lib: program(lib, False))
    assert grad[0, 1] == 0
    x = edutorch.tensor([[0.3, -0.7, 2.0], [1.0, 0.1, -0.5]], dtype=edutorch.float64, requires_grad=True)
    f = lambda t: edutorch.nansum(t, 1)  # noqa: E731
    assert gradcheck(f, (x,), check_forward_ad=True) and gradgradcheck(f, (x,))


def test_prelu_keeps_its_input_and_weight():
    # seed 402000003934: prelu was where(x > 0, x, w * x), which kept x only when w needed a gradient;
    # PyTorch's PreluKernelBackward0 keeps both, so writing x refuses backward
    def program(lib):
        x = f64(lib, [[0.5, -1.0], [2.0, -3.0]])
        w = lib.tensor([0.25, 0.1], dtype=lib.float64)
        v = x * 1
        a = lib.nn.functional.prelu(v, w)
        v.ceil_()
        a.sum().backward()
        return (x.grad,)

    assert same_on_both(program) is RuntimeError
    x = edutorch.tensor([[0.3, -0.7], [1.0, -0.5]], dtype=edutorch.float64, requires_grad=True)
    w = edutorch.tensor([0.2, 0.4], dtype=edutorch.float64, requires_grad=True)
    f = edutorch.nn.functional.prelu
    assert gradcheck(f, (x, w), check_forward_ad=True) and gradgradcheck(f, (x, w))


@pytest.mark.parametrize("call", [
    "T.nn.LSTMCell(2, 3)(T.ones(1, 2), (T.ones(1, 3), T.ones(3, 3)))",  # seed 402000005158: ran
    "T.nn.GRUCell(2, 3)(T.ones(1, 2), T.ones(2, 3))",
    "T.nn.RNNCell(2, 3)(T.ones(2, 2), T.ones(2, 4))",
    "T.addr(T.ones(4, 3), T.ones(4), T.ones(1))",  # seed 402000003068: the input broadcast up, ran
])
def test_a_state_or_input_of_the_wrong_size_is_refused(call):
    assert same_on_both(lambda lib: (eval(call, {"T": lib}),)) is RuntimeError


@pytest.mark.parametrize("call, error", [
    ("T.linalg.matrix_norm(T.zeros(4, 1, 0, dtype=T.float64), 2)", None),  # seed 403500003278: IndexError here
    ("T.linalg.matrix_norm(T.zeros(4, 1, 0, dtype=T.float64), -2)", IndexError),
    ("F.pad(T.zeros(1, 0), (2, 2), mode='replicate')", RuntimeError),  # seed 403500003369: ValueError here
    ("F.pad(T.zeros(1, 0, 2, 2), (1, 1, 1, 1), mode='reflect')", RuntimeError),
    ("F.pad(T.zeros(0, 2, 2), (1, 1), mode='replicate')", None),
])
def test_empty_inputs_of_norms_and_pads(call, error):
    got = same_on_both(lambda lib: (eval(call, {"T": lib, "F": lib.nn.functional}),))
    assert got is error if error else not isinstance(got, type)


def test_embedding_scale_grad_by_freq_first_and_second_order():
    # first order agrees with PyTorch; PyTorch's double backward drops the scaling by the count (so the
    # fuzzer leaves scale_grad_by_freq out), edutorch's is the derivative of its own first order
    def program(lib):
        w = f64(lib, [[-2.4, -0.04], [-2.27, -0.05], [-2.01, -1.06]])
        e = lib.nn.functional.embedding(lib.tensor([[2, 2, 1]]), w, scale_grad_by_freq=True)
        (e * e * e).sum().backward()
        return e, w.grad

    same_on_both(program)
    w = edutorch.tensor([[-2.4, -0.04], [-2.27, -0.05], [-2.01, -1.06]], dtype=edutorch.float64, requires_grad=True)
    f = lambda t: edutorch.nn.functional.embedding(edutorch.tensor([[2, 2, 1]]), t, scale_grad_by_freq=True)  # noqa: E731
    # (not gradcheck: the scaled gradient is by design not the derivative; its own derivative is checked)
    assert gradgradcheck(f, (w,))


def test_qr_keeps_q_and_r_not_its_input():
    # seed 404500003125: edutorch's qr kept A too, so writing A after qr refused backward here only
    def program(lib):
        x = f64(lib, [[1.46, -1.69], [-1.22, 0.2], [0.89, -0.86]])
        a = x * 1
        q, r = lib.linalg.qr(a)
        w = lib.linalg.qr(a.mT)  # a wide matrix: its backward needs A[..., m:], rebuilt as Q R[..., m:]
        a.mul_(2)
        ((q @ r).sum() + (w.Q * w.R[..., :2]).sum() + w.R.sum()).backward()
        return q, r, x.grad

    same_on_both(program)
    for shape in ((3, 2), (2, 3)):
        x = edutorch.tensor(np.linspace(-1, 1.3, 6).reshape(shape), requires_grad=True)
        assert gradcheck(edutorch.linalg.qr, (x,), check_forward_ad=True) and gradgradcheck(edutorch.linalg.qr, (x,))


def test_conv_transpose2d_refuses_a_weight_of_two_dims():
    # seed 404000004436: ValueError here (unpacking its shape), PyTorch's RuntimeError
    call = lambda lib: (lib.nn.functional.conv_transpose2d(lib.ones(1, 2, 3, 3), lib.ones(2, 3)),)  # noqa: E731
    assert same_on_both(call) is RuntimeError


def test_bilinear_keeps_only_the_factors_a_gradient_needs():
    # seed 405500003087: with only the bias requiring grad, writing the weight refused backward here only
    def program(lib):
        x1 = f64(lib, [[-1.09, 1.2], [0.03, 1.71]], requires_grad=False)
        x2 = f64(lib, [[0.47, 1.28, 2.2], [2.43, -0.06, -1.39]], requires_grad=False)
        w = f64(lib, np.linspace(-1, 1, 18).reshape(3, 2, 3).tolist(), requires_grad=False)
        b = f64(lib, [-0.92, 0.09, 0.01])
        v = lib.nn.functional.bilinear(x1, x2, w, b)
        w.mul_(2)
        (v * v).sum().backward()
        return v, b.grad

    same_on_both(program)


def test_attention_refuses_a_0d_key():
    # seed 405000005160: IndexError here, PyTorch's RuntimeError
    def program(lib):
        q = lib.ones(2, 2, 2, dtype=lib.float64)
        return (lib.nn.functional.scaled_dot_product_attention(q, lib.tensor(0.5, dtype=lib.float64), q),)

    assert same_on_both(program) is RuntimeError


def test_a_batched_matmul_result_is_contiguous_whatever_its_operands():
    # seed 406000003401: Q @ R of column-major factors was laid out like them here (PyTorch: contiguous),
    # so kron's final view of it was refused
    def program(lib):
        x = f64(lib, np.linspace(-2, 2, 32).reshape(2, 4, 4).tolist())
        q, r = lib.linalg.qr(x)
        v = q @ r
        k = lib.kron(v, f64(lib, [[[-1.51, -1.04]]]))
        y = x.detach().mT
        flat = (y @ y).reshape(-1)  # a view of a contiguous result: the write shows in both
        flat.mul_(0)
        k.sum().backward()
        return k, x.grad

    same_on_both(program)
