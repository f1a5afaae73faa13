"""Module hooks: forward (pre-)hooks, full backward (pre-)hooks, global hooks, handles.

Scenarios record every hook call as text (which hook, on which module, with
which arguments) and are compared with real torch; the plain tests check the
key facts without torch.
"""
import warnings

import numpy as np
import pytest

import edutorch as et
from edutorch import nn
from edutorch.nn.modules import module as module_mod


def observe_error(fn, *args, **kwargs):
    """``(exception type name, message)`` raised by ``fn(*args)``, or ``None`` if it returned."""
    try:
        fn(*args, **kwargs)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return None


def describe(value):
    """A library-independent description of a hook argument."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return tuple(describe(v) for v in value)
    if isinstance(value, dict):
        return {k: describe(v) for k, v in value.items()}
    if hasattr(value, "detach"):
        return ("tensor", tuple(value.shape), np.round(value.detach().numpy().astype(np.float64), 4).tolist())
    return repr(value)


def toy_modules(lib):
    class Scale(lib.nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = lib.nn.Parameter(lib.tensor([float(k)]))

        def forward(self, x):
            return x * self.k

    class TwoInTwoOut(lib.nn.Module):
        """forward(a, b, flag) -> (a * b, a + 1): one input may not require grad."""

        def forward(self, a, b, flag=True):
            return a * b, a + 1

    class Kw(lib.nn.Module):
        def forward(self, x, *, shift=0.0):
            return x + shift

    class Boom(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    return Scale, TwoInTwoOut, Kw, Boom


def scenario_forward_hook_order(lib):
    Scale, _, Kw, _ = toy_modules(lib)
    log = []
    seq = lib.nn.Sequential(Scale(2), Scale(3))
    for i, m in enumerate(seq):
        m.register_forward_pre_hook(lambda mod, args, i=i: log.append(("pre", i, describe(args))))
        m.register_forward_hook(lambda mod, args, out, i=i: log.append(("fwd", i, describe(args), describe(out))))
        m.register_forward_pre_hook(lambda mod, args, i=i: log.append(("pre-first", i)), prepend=True)
        m.register_forward_hook(lambda mod, args, out, i=i: log.append(("fwd-first", i)), prepend=True)
    seq.register_forward_hook(lambda mod, args, out: log.append(("outer", describe(out))))
    g1 = lib.nn.modules.module.register_module_forward_pre_hook(lambda mod, args: log.append(("gpre", type(mod).__name__)))
    g2 = lib.nn.modules.module.register_module_forward_hook(lambda mod, args, out: log.append(("gfwd", type(mod).__name__)))
    try:
        out = seq(lib.ones(2))
    finally:
        g1.remove()
        g2.remove()
    log.append(("result", describe(out)))

    # replacing inputs and outputs; with_kwargs variants
    kw = Kw()
    kw.register_forward_pre_hook(lambda mod, args: args[0] * 10)  # a bare value is wrapped in a tuple
    kw.register_forward_pre_hook(
        lambda mod, args, kwargs: (args, {**kwargs, "shift": kwargs.get("shift", 0.0) + 1}), with_kwargs=True
    )
    kw.register_forward_hook(lambda mod, args, kwargs, out: log.append(("kw", describe(args), describe(kwargs))) or out * 2, with_kwargs=True)
    log.append(("kw-result", describe(kw(lib.ones(1), shift=0.5))))
    bad = Kw()
    bad.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
    log.append(observe_error(bad, lib.ones(1)))
    return log


def scenario_handles_and_always_call(lib):
    Scale, _, _, Boom = toy_modules(lib)
    log = []
    m = Scale(2)
    h = m.register_forward_hook(lambda mod, args, out: log.append("hook"))
    m(lib.ones(1))
    h.remove()
    h.remove()  # removing twice is harmless
    m(lib.ones(1))
    with m.register_forward_pre_hook(lambda mod, args: log.append("ctx")):
        m(lib.ones(1))
    m(lib.ones(1))
    log.append(len(m._forward_hooks) + len(m._forward_pre_hooks))

    boom = Boom()
    boom.register_forward_hook(lambda mod, args, out: log.append(("always", describe(out))), always_call=True)
    boom.register_forward_hook(lambda mod, args, out: log.append("not always"))
    log.append(observe_error(boom, lib.ones(1)))
    return log


def scenario_backward_hooks(lib):
    _, TwoInTwoOut, _, _ = toy_modules(lib)
    log = []
    m = TwoInTwoOut()
    m.register_full_backward_pre_hook(lambda mod, gout: log.append(("bpre", describe(gout))))
    m.register_full_backward_hook(lambda mod, gin, gout: log.append(("bwd", describe(gin), describe(gout))))
    g = lib.nn.modules.module.register_module_full_backward_hook(lambda mod, gin, gout: log.append(("gbwd", type(mod).__name__)))
    gp = lib.nn.modules.module.register_module_full_backward_pre_hook(lambda mod, gout: log.append(("gbpre", type(mod).__name__)))
    try:
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0])  # does not require grad
        p, q = m(a, b, "flag")
        log.append(("out", p.grad_fn is not None, q.grad_fn is not None))
        (p.sum() * 2 + q.sum()).backward()
        log.append(("a.grad", describe(a.grad)))

        # only one output used: the other's grad_output is None
        a.grad = None
        p, q = m(a, b)
        p.sum().backward()
        log.append(("a.grad only p", describe(a.grad)))
    finally:
        g.remove()
        gp.remove()
    return log


def scenario_backward_hook_replaces(lib):
    Scale, _, _, _ = toy_modules(lib)
    log = []
    m = Scale(3)
    m.register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 10,))
    m.register_full_backward_hook(lambda mod, gin, gout: log.append(("seen", describe(gin), describe(gout))))
    m.register_full_backward_hook(lambda mod, gin, gout: tuple(g + 1 for g in gin))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    m(x).sum().backward()
    log.append(("x.grad", describe(x.grad), "k.grad", describe(m.k.grad)))

    # no input requires grad: the hook still runs, with grad_input (None,)
    frozen = Scale(2)
    frozen.register_full_backward_hook(lambda mod, gin, gout: log.append(("frozen", describe(gin), describe(gout))))
    frozen(lib.ones(2)).sum().backward()
    log.append(("frozen k.grad", describe(frozen.k.grad)))

    # a hook returning the wrong number of gradients
    bad = Scale(1)
    bad.register_full_backward_hook(lambda mod, gin, gout: (gin[0], gin[0]))
    log.append(observe_error(lambda: bad(lib.ones(2, requires_grad=True)).sum().backward()))
    bad_pre = Scale(1)
    bad_pre.register_full_backward_pre_hook(lambda mod, gout: ())
    log.append(observe_error(lambda: bad_pre(lib.ones(2, requires_grad=True)).sum().backward()))
    return log


def scenario_nested_backward_order(lib):
    Scale, _, _, _ = toy_modules(lib)
    log = []
    seq = lib.nn.Sequential(Scale(2), Scale(3))
    for name, m in [("seq", seq), ("0", seq[0]), ("1", seq[1])]:
        m.register_full_backward_pre_hook(lambda mod, gout, name=name: log.append(("bpre", name, describe(gout))))
        m.register_full_backward_hook(lambda mod, gin, gout, name=name: log.append(("bwd", name, describe(gin))))
    x = lib.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: log.append(("x tensor hook", describe(g))))
    seq(x).backward()
    log.append(observe_error(seq.register_full_backward_hook, None) is None)
    return log


@pytest.mark.parametrize(
    "scenario",
    [scenario_forward_hook_order, scenario_handles_and_always_call, scenario_backward_hooks,
     scenario_backward_hook_replaces, scenario_nested_backward_order],
)
def test_parity_with_torch(parity, scenario):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parity(scenario)


# -- without torch -------------------------------------------------------------------
def test_forward_hooks_order_and_replacement():
    log = scenario_forward_hook_order(et)
    order = [entry[:2] for entry in log[:15]]
    assert order == [
        ("gpre", "Sequential"),
        ("gpre", "Scale"), ("pre-first", 0), ("pre", 0), ("gfwd", "Scale"), ("fwd-first", 0), ("fwd", 0),
        ("gpre", "Scale"), ("pre-first", 1), ("pre", 1), ("gfwd", "Scale"), ("fwd-first", 1), ("fwd", 1),
        ("gfwd", "Sequential"), ("outer", ("tensor", (2,), [6.0, 6.0])),
    ]
    assert ("result", ("tensor", (2,), [6.0, 6.0])) in log
    kw_result = next(entry for entry in log if entry[0] == "kw-result")
    assert kw_result[1] == ("tensor", (1,), [23.0])  # (1 * 10 + 0.5 + 1) * 2
    assert log[-1][0] == "RuntimeError" and "forward pre-hook must return None or a tuple" in log[-1][1]


def test_global_hooks_run_before_module_hooks():
    calls = []
    m = nn.Module()
    m.forward = lambda x: x
    m.register_forward_hook(lambda mod, args, out: calls.append("local"))
    handle = module_mod.register_module_forward_hook(lambda mod, args, out: calls.append("global"))
    try:
        m(et.ones(1))
    finally:
        handle.remove()
    m(et.ones(1))
    assert calls == ["global", "local", "local"]


def test_always_call_hook_runs_when_forward_raises():
    log = scenario_handles_and_always_call(et)
    assert log[:2] == ["hook", "ctx"]
    assert log[2] == 0
    assert log[3] == ("always", None)
    assert log[4] == ("ValueError", "boom")


def test_backward_hook_arguments():
    log = scenario_backward_hooks(et)
    bpre = next(e for e in log if e[0] == "bpre")
    assert bpre[1] == (("tensor", (2,), [2.0, 2.0]), ("tensor", (2,), [1.0, 1.0]))
    bwd = next(e for e in log if e[0] == "bwd")
    # grad_input: one slot per positional input; zeros for the tensor b that needs no
    # grad (PyTorch materializes them), None for the string argument
    assert bwd[1] == (("tensor", (2,), [7.0, 9.0]), ("tensor", (2,), [0.0, 0.0]), None)
    assert ("a.grad", ("tensor", (2,), [7.0, 9.0])) in log


def test_the_42_gradient_example_with_a_custom_module():
    """The Modules note's backward hook that replaces grad_input by 42s."""
    scale = toy_modules(et)[0](3)
    scale.register_full_backward_hook(lambda m, gin, gout: [et.ones_like(g) * 42.0 for g in gin])
    x = et.ones(2, 3, requires_grad=True)
    scale(x).sum().backward()
    assert x.grad.tolist() == [[42.0] * 3] * 2
    assert scale.k.grad.item() == 6.0  # parameters are not affected


def test_backward_hook_replacement_and_errors():
    log = scenario_backward_hook_replaces(et)
    assert log[0] == ("seen", (("tensor", (2,), [30.0, 30.0]),), (("tensor", (2,), [10.0, 10.0]),))
    assert log[1] == ("x.grad", ("tensor", (2,), [31.0, 31.0]), "k.grad", ("tensor", (1,), [30.0]))
    assert log[2] == ("frozen", (None,), (("tensor", (2,), [1.0, 1.0]),))
    assert log[4] == ("RuntimeError", "Backward hook returned an invalid number of grad_input, got 2, but expected 1")


def test_hooks_on_nested_modules_fire_inner_first_in_backward():
    log = scenario_nested_backward_order(et)
    assert [e[:2] for e in log[:6]] == [
        ("bpre", "seq"), ("bpre", "1"), ("bwd", "1"), ("bpre", "0"), ("bwd", "0"), ("bwd", "seq"),
    ]
    assert log[6] == ("x tensor hook", ("tensor", (1,), [6.0]))


def test_hook_free_call_takes_the_fast_path():
    """Without hooks ``__call__`` calls ``forward`` directly (no identity nodes in the graph)."""
    scale = toy_modules(et)[0](2)
    x = et.ones(2, requires_grad=True)
    assert scale(x).grad_fn.name() == "MulBackward0"
    scale.register_full_backward_hook(lambda m, gin, gout: None)
    assert scale(x).grad_fn.name() == "BackwardHookFunctionBackward"


def test_gradients_through_hooked_module_pass_gradcheck(numerical_grad):
    """The identity nodes that carry backward hooks change no gradient (float64 check)."""

    class Mix(nn.Module):
        def forward(self, a, b):
            return (a * b).tanh(), a.exp() * 2

    m = Mix()
    seen = []
    m.register_full_backward_pre_hook(lambda mod, gout: seen.append("pre"))
    m.register_full_backward_hook(lambda mod, gin, gout: seen.append("post"))
    rng = np.random.default_rng(1)
    a = et.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = et.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    assert et.autograd.gradcheck(lambda x, y: m(x, y), (a, b))
    assert "pre" in seen and "post" in seen

    # and against a plain central difference, for the first input
    p, q = m(a, b)
    (p.sum() + q.sum()).backward()
    expected = numerical_grad(
        lambda x: float(np.tanh(x * b.detach().numpy()).sum() + (2 * np.exp(x)).sum()), a.detach().numpy().copy()
    )
    assert np.allclose(a.grad.numpy(), expected, atol=1e-6)


def test_full_backward_hook_warns_when_no_input_requires_grad():
    """PyTorch warns that the hook only sees grad_output; grad_input is all None."""
    seen = []
    layer = et.nn.Linear(3, 2)
    layer.register_full_backward_hook(lambda m, gin, gout: seen.append((gin, gout[0].shape)))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed "
                                         "with respect to module outputs since no inputs require gradients"):
        layer(et.randn(4, 3)).sum().backward()
    assert seen == [((None,), et.Size([4, 2]))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an input that requires grad: no warning
        layer(et.randn(4, 3, requires_grad=True)).sum().backward()
