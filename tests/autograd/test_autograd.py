"""Autograd behaviour: backward, accumulation, hooks, autograd.grad, create_graph, errors.

Most tests run the same scenario on edutorch and on real PyTorch (the oracle)
and compare what a user can observe: gradient values, hook call order, error
types and messages, grad_fn names.
"""
import warnings

import numpy as np
import pytest

import edutorch as et

REASON = "real PyTorch not installed: parity test skipped"


def run_both(scenario):
    """Run ``scenario(lib)`` on edutorch and torch; return both results (torch skips if absent)."""
    torch = pytest.importorskip("torch", reason=REASON)
    return scenario(et), scenario(torch)


def error_of(fn):
    """(exception type name, message) raised by ``fn()``; fails the test if nothing is raised."""
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


def values(t):
    return None if t is None else np.asarray(t.detach().tolist())


def assert_same(mine, theirs):
    np.testing.assert_allclose(values(mine), values(theirs), rtol=1e-6, atol=1e-7)


# -- backward and accumulation -----------------------------------------------------
def test_backward_accumulates_into_leaf_grad():
    def scenario(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (x * x).sum().backward()
        first = x.grad.clone()
        (x * 3).sum().backward()
        return first, x.grad

    (a1, a2), (b1, b2) = run_both(scenario)
    assert_same(a1, b1)
    assert_same(a2, b2)


def test_backward_values_without_torch():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    ((x * x).sum() * 2).backward()
    assert x.grad.tolist() == [4.0, 8.0]
    (x * 1).sum().backward()
    assert x.grad.tolist() == [5.0, 9.0]


def test_shared_node_runs_once_and_sums_paths():
    def scenario(lib):
        x = lib.tensor([0.5, -1.5], requires_grad=True)
        h = x.tanh()
        y = (h * h + h * 3 + x).sum()  # h is used by three ops
        y.backward()
        return x.grad

    assert_same(*run_both(scenario))


def test_backward_with_gradient_for_non_scalar():
    def scenario(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * x
        y.backward(lib.tensor([[1.0, 0.5], [0.0, -1.0]]))
        return x.grad

    assert_same(*run_both(scenario))


def test_backward_inputs_only_accumulates_those():
    def scenario(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (a * b).sum().backward(inputs=[b])
        return a.grad, b.grad

    (a, b), (ta, tb) = run_both(scenario)
    assert a is None and ta is None
    assert_same(b, tb)


def test_deep_chain_does_not_recurse():
    x = et.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


@pytest.mark.parametrize("case", ["no_grad_fn", "non_scalar", "second_time", "leaf_inplace",
                                  "shape_mismatch", "empty_inputs"])
def test_error_messages_match_pytorch(case):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        if case == "no_grad_fn":
            return error_of(lambda: lib.tensor([1.0, 2.0]).sum().backward())
        if case == "non_scalar":
            return error_of(lambda: (x * 2).backward())
        if case == "second_time":
            y = (x * x).sum()
            y.backward()
            return error_of(y.backward)
        if case == "leaf_inplace":
            return error_of(lambda: x.add_(1))
        if case == "shape_mismatch":
            return error_of(lambda: (x * 2).backward(lib.ones(2)))
        return error_of(lambda: (x * 2).sum().backward(inputs=[]))

    mine, theirs = run_both(scenario)
    assert mine == theirs


def test_retain_graph_allows_second_backward():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


@pytest.mark.parametrize("case", ["saved_output", "saved_input", "leaf_no_grad", "double"])
def test_inplace_on_saved_tensor_matches_pytorch(case):
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        if case == "saved_output":
            z = x.exp()
            z.mul_(2)  # exp saved its output
        elif case == "saved_input":
            y = x * 1
            z = y * y
            y.add_(1)
        elif case == "double":
            w = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
            z = (w * 1).tanh()
            z.mul_(3)
        else:
            z = x.tanh()
            with lib.no_grad():
                x.add_(1)
            leaf = lib.ones(3, requires_grad=True)
            z = (leaf * x).sum()
            with lib.no_grad():
                x.mul_(2)
        return error_of(lambda: z.sum().backward())

    mine, theirs = run_both(scenario)
    assert mine == theirs
    assert "modified by an inplace operation" in mine[1]


def test_version_counter_counts_inplace_ops_and_is_shared_with_detach():
    x = et.zeros(3)
    d = x.detach()
    x.add_(1)
    d.mul_(2)
    assert x._version == 2 and d._version == 2
    assert x.tolist() == [2.0, 2.0, 2.0]


# -- retain_grad and .grad of non-leaves ----------------------------------------------
def test_retain_grad_on_non_leaf():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        h.retain_grad()
        (h * h).sum().backward()
        return h.grad, h.retains_grad, h.is_leaf

    (g, r, leaf), (tg, tr, tleaf) = run_both(scenario)
    assert_same(g, tg)
    assert (r, leaf) == (tr, tleaf) == (True, False)


def test_non_leaf_grad_access_warns():
    x = et.tensor([1.0], requires_grad=True)
    h = x * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert h.grad is None


# -- hooks ----------------------------------------------------------------------------
def test_hook_order_and_replacement():
    def scenario(lib):
        calls = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        b = x * lib.tensor(2.0)  # a tensor operand: both libraries give MulBackward0 two edges
        b.retain_grad()
        b.register_hook(lambda g: calls.append(("hook1", g.tolist())) or g * 10)
        b.register_hook(lambda g: calls.append(("hook2", g.tolist())))
        b.grad_fn.register_prehook(lambda go: calls.append(("pre", [g.tolist() for g in go])))
        b.grad_fn.register_hook(
            lambda gi, go: calls.append(("post", [None if g is None else g.tolist() for g in gi]))
        )
        x.register_hook(lambda g: calls.append(("leaf", g.tolist())) or g + 1)
        (b * b).sum().backward()
        return calls, b.grad, x.grad

    (calls, bg, xg), (tcalls, tbg, txg) = run_both(scenario)
    assert calls == tcalls
    assert_same(bg, tbg)
    assert_same(xg, txg)


def test_leaf_hook_also_changes_autograd_grad_result():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g * 10)
        (gx,) = lib.autograd.grad((x * 3).sum(), x)
        return gx

    assert_same(*run_both(scenario))


def test_hook_registered_after_graph_built_still_runs():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()  # the leaf's AccumulateGrad node exists already
    x.register_hook(lambda g: g * 0)
    y.backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_removed_hook_is_not_called():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    handle = y.register_hook(lambda g: g * 100)
    handle.remove()
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_hook_on_tensor_without_grad_is_an_error():
    def scenario(lib):
        return error_of(lambda: lib.zeros(2).register_hook(lambda g: g))

    mine, theirs = run_both(scenario)
    assert mine == theirs


def test_post_accumulate_grad_hook_sees_updated_grad():
    def scenario(lib):
        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (x * 2).sum().backward()
        (x * 2).sum().backward()
        return seen

    mine, theirs = run_both(scenario)
    assert mine == theirs == [[2.0, 2.0], [4.0, 4.0]]


# -- autograd.grad -------------------------------------------------------------------------
def test_autograd_grad_does_not_touch_dot_grad():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    (g,) = et.autograd.grad((x * x).sum(), x)
    assert g.tolist() == [2.0, 4.0] and x.grad is None and not g.requires_grad


@pytest.mark.parametrize("case", ["unused", "no_requires_grad", "non_scalar"])
def test_autograd_grad_errors_match_pytorch(case):
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        other = lib.ones(1, requires_grad=True)
        if case == "unused":
            return error_of(lambda: lib.autograd.grad((x * 2).sum(), [x, other]))
        if case == "no_requires_grad":
            return error_of(lambda: lib.autograd.grad((x * 2).sum(), [lib.ones(1)]))
        return error_of(lambda: lib.autograd.grad(x * 2, [x]))

    mine, theirs = run_both(scenario)
    assert mine == theirs


def test_autograd_grad_allow_unused_and_materialize():
    def scenario(lib):
        x = lib.ones(3, requires_grad=True)
        other = lib.ones(2, requires_grad=True)
        a = lib.autograd.grad((x * 2).sum(), [x, other], allow_unused=True)
        b = lib.autograd.grad((x * 2).sum(), [x, other], materialize_grads=True)
        return a, b

    (a, b), (ta, tb) = run_both(scenario)
    assert a[1] is None and ta[1] is None
    assert_same(a[0], ta[0])
    assert_same(b[1], tb[1])


def test_autograd_grad_batched_rows_are_vjps():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        (jac,) = lib.autograd.grad(y, x, lib.eye(3), is_grads_batched=True)
        return jac

    assert_same(*run_both(scenario))


# -- create_graph: higher derivatives ------------------------------------------------------
def test_second_and_third_derivative():
    def scenario(lib):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = (x ** 3 + x.tanh() * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sum(), x)
        return g, gg, ggg

    mine, theirs = run_both(scenario)
    for a, b in zip(mine, theirs):
        assert_same(a, b)


def test_hessian_vector_product():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=lib.float64)
        f = ((x @ w) * x).sum().sigmoid()
        (g,) = lib.autograd.grad(f, x, create_graph=True)
        v = lib.tensor([1.0, -1.0], dtype=lib.float64)
        (hv,) = lib.autograd.grad((g * v).sum(), x)
        return hv

    assert_same(*run_both(scenario))


def test_gradient_penalty_backward_through_grad():
    def scenario(lib):
        w = lib.tensor([[0.5, -1.0], [2.0, 0.1]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[1.0, 2.0], [-1.0, 0.5]], dtype=lib.float64, requires_grad=True)
        out = (x @ w).tanh().sum()
        (gx,) = lib.autograd.grad(out, x, create_graph=True)
        penalty = ((gx * gx).sum() - 1) ** 2
        penalty.backward()
        return w.grad

    assert_same(*run_both(scenario))


def test_backward_create_graph_grad_has_graph():
    x = et.tensor([2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (g2,) = et.autograd.grad(x.grad.sum(), x)
    assert g2.tolist() == [12.0]


# -- the graph a widget walks ------------------------------------------------------------
def graph_names(lib, root):
    names, stack, seen = [], [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        stack.extend(fn for fn, _ in node.next_functions)
    return names


def test_grad_fn_names_and_next_functions():
    def scenario(lib):
        x = lib.tensor([[1.0, 2.0]], requires_grad=True)
        w = lib.tensor([[1.0], [2.0]], requires_grad=True)
        y = ((x @ w).relu() + 1).exp().sum() / 2
        return graph_names(lib, y), y.grad_fn.name(), type(y.grad_fn.next_functions[0][0]).__name__

    mine, theirs = run_both(scenario)
    assert mine == theirs


def test_accumulate_grad_variable_is_the_leaf():
    x = et.tensor([1.0], requires_grad=True)
    node = (x * 2).grad_fn.next_functions[0][0]
    assert type(node).__name__ == "AccumulateGrad" and node.variable is x
    assert isinstance(node, et.autograd.graph.Node)


# -- requires_grad, detach -----------------------------------------------------------------
def test_requires_grad_propagation_and_detach():
    def scenario(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0])
        out = [(a * b).requires_grad, (b * 2).requires_grad, a.detach().requires_grad,
               (a * 2).detach().is_leaf, (a + 1).is_leaf]
        with lib.no_grad():
            out.append((a * 2).requires_grad)
        c = a * 2
        c.detach_()
        out += [c.requires_grad, c.grad_fn is None]
        b.requires_grad_()
        out.append(b.requires_grad)
        return out

    mine, theirs = run_both(scenario)
    assert mine == theirs


@pytest.mark.parametrize("case", ["non_leaf", "int_tensor"])
def test_requires_grad_errors_match_pytorch(case):
    def scenario(lib):
        if case == "non_leaf":
            y = lib.tensor([1.0], requires_grad=True) * 2
            return error_of(lambda: y.requires_grad_(False))
        return error_of(lambda: lib.tensor([1, 2]).requires_grad_())

    mine, theirs = run_both(scenario)
    assert mine == theirs


def test_detach_shares_storage():
    a = et.tensor([1.0, 2.0], requires_grad=True)
    d = a.detach()
    with et.no_grad():
        d.data[0] = 5.0
    assert a.tolist()[0] == 5.0


def test_no_warnings_in_plain_backward():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x.tanh() * x).sum().backward()


def test_reused_gradient_arrays_are_never_shared_between_leaves():
    """AccumulateGrad may reuse a fresh gradient array, but never one held elsewhere."""
    import edutorch as et

    a = et.randn(3, requires_grad=True)
    b = et.randn(3, requires_grad=True)
    (a + b).sum().backward()  # AddBackward0 sends the same gradient to both leaves
    a.grad.mul_(2)
    assert b.grad.tolist() == [1.0, 1.0, 1.0]

    g = et.ones(3)
    x = et.randn(3, requires_grad=True)
    (x * 1).backward(g)  # ``gradient=`` is the user's tensor: .grad must be a copy
    x.grad.add_(1)
    assert g.tolist() == [1.0, 1.0, 1.0]

    w = et.randn(4, 3, requires_grad=True)
    seen = []
    w.register_hook(lambda grad: seen.append(grad))
    (et.randn(5, 4) @ w).sum().backward()
    (et.randn(5, 4) @ w).sum().backward()  # accumulates in place into w.grad
    assert not np.shares_memory(seen[0].numpy(), w.grad.numpy())
