"""Lesson 09's checks (extending autograd): right answers pass, typical mistakes get their hint,
with edutorch Functions and with real PyTorch Functions."""

import checks
from check_helpers import assert_hint, assert_ok
import edutorch as et


def function_class(lib, name, forward, backward, once=False):
    """A Function subclass of ``lib`` named ``name`` from two plain functions."""
    back = lib.autograd.function.once_differentiable(backward) if once else backward
    return type(name, (lib.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(back)})


def blank(lib, name):
    """What a student's untouched answer cell defines: methods whose body is ``pass``."""
    return function_class(lib, name, lambda ctx, *args: None, lambda ctx, *grads: None)


# --- 9.1: Softplus --------------------------------------------------------------------------


def softplus_forward(lib):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return lib.log1p(x.exp())
    return forward


def test_9_1_right_answers(lib):
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * lib.sigmoid(x)
    assert_ok(checks.exercise_9_1.check(function_class(lib, "Softplus", softplus_forward(lib), backward)))

    def save_output(ctx, x):  # another correct answer: save the output, sigmoid = 1 - exp(-y)
        y = lib.log1p(x.exp())
        ctx.save_for_backward(y)
        return y

    def backward_from_output(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - (-y).exp())
    assert_ok(checks.exercise_9_1.check(function_class(lib, "Softplus", save_output, backward_from_output)))


def test_9_1_hints(lib):
    assert_hint(checks.exercise_9_1.check(None), "class Softplus itself")
    assert_hint(checks.exercise_9_1.check(blank(lib, "Softplus")), "log(1 + exp(x))")
    assert_hint(checks.exercise_9_1.check(et.nn.Linear), "subclass")
    forward = softplus_forward(lib)

    def no_chain_rule(ctx, g):
        (x,) = ctx.saved_tensors
        return lib.sigmoid(x)
    assert_hint(checks.exercise_9_1.check(function_class(lib, "S", forward, no_chain_rule)), "grad_output")

    def times_output(ctx, g):
        (x,) = ctx.saved_tensors
        return g * lib.log1p(x.exp())
    assert_hint(checks.exercise_9_1.check(function_class(lib, "S", forward, times_output)), "sigmoid")

    def times_exp(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.exp()
    assert_hint(checks.exercise_9_1.check(function_class(lib, "S", forward, times_exp)), "inside")

    def attribute_forward(ctx, x):  # keeps x as an attribute: no version check
        ctx.x = x
        return lib.log1p(x.exp())

    def attribute_backward(ctx, g):
        return g * lib.sigmoid(ctx.x)
    assert_hint(checks.exercise_9_1.check(function_class(lib, "S", attribute_forward, attribute_backward)),
                "save_for_backward")

    def raises(ctx, g):
        raise ValueError("oops")
    assert_hint(checks.exercise_9_1.check(function_class(lib, "S", forward, raises)), "ValueError")


# --- 9.2: needs_input_grad ---------------------------------------------------------------------


def mul_forward(ctx, a, b):
    ctx.save_for_backward(a, b)
    return a * b


def test_9_2_right_answer(lib):
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return (g * b if ctx.needs_input_grad[0] else None,
                g * a if ctx.needs_input_grad[1] else None)
    assert_ok(checks.exercise_9_2.check(function_class(lib, "Mul", mul_forward, backward)))


def test_9_2_hints(lib):
    assert_hint(checks.exercise_9_2.check(blank(lib, "Mul")), "a * b")

    def both_always(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a
    assert_hint(checks.exercise_9_2.check(function_class(lib, "Mul", mul_forward, both_always)),
                "needs_input_grad", "None for b")

    def swapped(ctx, g):
        a, b = ctx.saved_tensors
        return (g * a if ctx.needs_input_grad[0] else None,
                g * b if ctx.needs_input_grad[1] else None)
    assert_hint(checks.exercise_9_2.check(function_class(lib, "Mul", mul_forward, swapped)),
                "grad_output * b")

    def only_a(ctx, g):
        a, b = ctx.saved_tensors
        return g * b
    assert_hint(checks.exercise_9_2.check(function_class(lib, "Mul", mul_forward, only_a)))

    def reversed_flags(ctx, g):
        a, b = ctx.saved_tensors
        return (g * b if not ctx.needs_input_grad[0] else None,
                g * a if not ctx.needs_input_grad[1] else None)
    assert_hint(checks.exercise_9_2.check(function_class(lib, "Mul", mul_forward, reversed_flags)),
                "needs_input_grad")


# --- 9.3: double backward ------------------------------------------------------------------------


def tanh_forward(ctx, x):
    y = x.tanh()
    ctx.save_for_backward(y)
    return y


def tanh_backward(ctx, g):
    (y,) = ctx.saved_tensors
    return g * (1 - y * y)


def test_9_3_right_answers(lib):
    assert_ok(checks.exercise_9_3.check(function_class(lib, "Tanh", tanh_forward, tanh_backward)))

    def save_input(ctx, x):
        ctx.save_for_backward(x)
        return x.tanh()

    def backward_from_input(ctx, g):
        (x,) = ctx.saved_tensors
        return g / x.cosh() ** 2
    assert_ok(checks.exercise_9_3.check(function_class(lib, "Tanh", save_input, backward_from_input)))


def test_9_3_hints(lib):
    assert_hint(checks.exercise_9_3.check(blank(lib, "Tanh")), "tanh(x)")
    once = function_class(lib, "Tanh", tanh_forward, tanh_backward, once=True)
    assert_hint(checks.exercise_9_3.check(once), "once_differentiable")

    def through_numpy(ctx, g):
        (y,) = ctx.saved_tensors
        return g * lib.tensor(1 - y.detach().numpy() ** 2)
    assert_hint(checks.exercise_9_3.check(function_class(lib, "Tanh", tanh_forward, through_numpy)),
                "second derivative", ".numpy()")

    def no_grad_inside(ctx, g):  # nothing recorded at all: the gradient has no graph
        (y,) = ctx.saved_tensors
        with lib.no_grad():
            return g.detach() * (1 - y * y)
    assert_hint(checks.exercise_9_3.check(function_class(lib, "Tanh", tanh_forward, no_grad_inside)),
                "no graph")

    def wrong_first(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y)
    assert_hint(checks.exercise_9_3.check(function_class(lib, "Tanh", tanh_forward, wrong_first)),
                "first derivative")

    def detached_factor(ctx, g):  # right first derivative, second derivative misses the y-terms
        (y,) = ctx.saved_tensors
        return g * (1 - y.detach() * y.detach())
    assert_hint(checks.exercise_9_3.check(function_class(lib, "Tanh", tanh_forward, detached_factor)),
                "second derivative")


# --- 9.4: the version counter --------------------------------------------------------------------


def defined_with(lib, source):
    """The functions ``source`` defines, as a notebook cell that imported ``lib`` as torch would."""
    namespace = {"torch": lib}
    exec(source, namespace)
    return namespace


FIXES = """
def out_of_place(x):
    y = x.sigmoid()
    y = y * 2
    return y.sum()

def on_a_clone(x):
    y = x.sigmoid().clone()
    y.mul_(2)
    return y.sum()

def scaled_first(x):
    return (2 * torch.sigmoid(x)).sum()
"""

MISTAKES = """
def unchanged(x):
    y = x.sigmoid()
    y.mul_(2)
    return y.sum()

def nothing(x):
    pass

def other_value(x):
    return x.sigmoid().sum()

def detached_loss(x):
    return (2 * x.sigmoid()).sum().detach()

def detached_inside(x):
    return (2 * x.sigmoid().detach()).sum() + 0 * x.sum()
"""


def test_9_4_right_answers(lib):
    fixes = defined_with(lib, FIXES)
    for name in ("out_of_place", "on_a_clone", "scaled_first"):
        assert_ok(checks.exercise_9_4.check(fixes[name]))


def test_9_4_hints(lib):
    mistakes = defined_with(lib, MISTAKES)
    assert_hint(checks.exercise_9_4.check(mistakes["unchanged"]), "in place")
    assert_hint(checks.exercise_9_4.check(mistakes["nothing"]), "one-number tensor")
    assert_hint(checks.exercise_9_4.check(mistakes["other_value"]), "keep its value")
    assert_hint(checks.exercise_9_4.check(mistakes["detached_loss"]), "not connected")
    assert_hint(checks.exercise_9_4.check(mistakes["detached_inside"]), "gradient of the sum")
    assert_hint(checks.exercise_9_4.check(None), "loss_fixed itself")


# --- 9.5: detect_anomaly -----------------------------------------------------------------------


def mystery_of(lib):
    def mystery(x):
        a = x.exp()
        b = lib.where(x.abs() < 1, x.asin(), x.sign() * 1.5)
        return (a * b + x.pow(2)).sum()
    return mystery, lib.tensor([0.5, 2.0, -3.0], requires_grad=True)


def test_9_5_right_answers(lib):
    mystery, x = mystery_of(lib)
    for answer in ("AsinBackward0", "asin", "torch.asin", " AsinBackward0 "):
        assert_ok(checks.exercise_9_5.check(answer, mystery, x))


def test_9_5_hints(lib):
    mystery, x = mystery_of(lib)
    assert_hint(checks.exercise_9_5.check(None, mystery, x), "detect_anomaly")
    assert_hint(checks.exercise_9_5.check("", mystery, x), "detect_anomaly")
    assert_hint(checks.exercise_9_5.check("WhereBackward0", mystery, x), "where")
    assert_hint(checks.exercise_9_5.check("ExpBackward0", mystery, x), "not the node")
    assert_hint(checks.exercise_9_5.check("AsinBackward0", None, x), "exercise_9_5(culprit")
    assert_hint(checks.exercise_9_5.check("AsinBackward0", lambda t: (t * 2).sum(), x), "no NaN")


def test_9_5_the_check_names_the_first_nan_node_not_the_first_suspect():
    """The node detect_anomaly reports is where NaN first appears in backward: for the norm of
    a zero row, sqrt's backward returns inf (not NaN), and PowBackward0 turns it into NaN."""
    def norms(x):
        return x.pow(2).sum(dim=1).sqrt().sum()
    x = et.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
    assert checks.lesson09._anomaly_node(et, norms, x) == "PowBackward0"


# --- 9.6: saved-tensor hooks ------------------------------------------------------------------

ANSWERS_9_6 = """
def right(fn, *args):
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*args)
    return sum(sizes)

def as_tensor_total(fn, *args):  # a 0-d tensor is a fine answer too
    return torch.tensor(right(fn, *args))

def outside_the_block(fn, *args):
    sizes = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: sizes.append(t.numel()) or t, lambda t: t):
        pass
    fn(*args)
    return sum(sizes)

def counts_tensors(fn, *args):
    sizes = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: sizes.append(1) or t, lambda t: t):
        fn(*args)
    return sum(sizes)

def counts_elements(fn, *args):
    sizes = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: sizes.append(t.numel()) or t, lambda t: t):
        fn(*args)
    return sum(sizes)

def unique_only(fn, *args):  # counts a tensor saved twice once
    seen = {}
    with torch.autograd.graph.saved_tensors_hooks(
            lambda t: seen.setdefault(id(t), t.numel() * t.element_size()) and t, lambda t: t):
        fn(*args)
    return sum(seen.values())

def blank(fn, *args):
    pass
"""


def test_9_6_right_answers(lib):
    answers = defined_with(lib, ANSWERS_9_6)
    assert_ok(checks.exercise_9_6.check(answers["right"]))
    assert_ok(checks.exercise_9_6.check(answers["as_tensor_total"]))


def test_9_6_hints(lib):
    answers = defined_with(lib, ANSWERS_9_6)
    assert_hint(checks.exercise_9_6.check(answers["blank"]), "returns None")
    assert_hint(checks.exercise_9_6.check(answers["outside_the_block"]), "INSIDE")
    assert_hint(checks.exercise_9_6.check(answers["counts_tensors"]), "number of tensors")
    assert_hint(checks.exercise_9_6.check(answers["counts_elements"]), "element_size")
    assert_hint(checks.exercise_9_6.check(None), "saved_bytes itself")


def test_9_6_counts_a_tensor_saved_twice_twice():
    """``a * a`` packs ``a`` twice: the check expects both packings, so counting unique
    tensors is a hint (whether torch hands the hook the same Python object twice is not
    part of its API, so this runs with edutorch only)."""
    answers = defined_with(et, ANSWERS_9_6)
    assert_hint(checks.exercise_9_6.check(answers["unique_only"]), "a * a")
