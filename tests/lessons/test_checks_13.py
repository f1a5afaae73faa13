"""Lesson 13's checks (forward mode and function transforms): the notebook's own answers pass with
edutorch and with real PyTorch, a blank answer (nbgrader's ``pass``) gets a hint from every check,
and answers the check cannot use get a hint, never a crash. The typical mistakes are in
lessons/checks/catalogue/lesson13.py (tests/lessons/test_catalogue.py runs them)."""
import pytest

import checks
from check_helpers import assert_hint, assert_ok

# the worked answers of the notebook, written as there: with the names the notebook imports
ANSWERS = """
def primal_and_tangent(f, x, v):
    with fwAD.dual_level():
        out = f(fwAD.make_dual(x, v))
        primal, tangent = fwAD.unpack_dual(out)
    return primal, tangent


def jacobian_column(f, x, j):
    e_j = torch.zeros_like(x)
    e_j[j] = 1.0
    return jvp(f, (x,), (e_j,))[1]


def jacobian_cheaply(f, x):
    if f(x).numel() < x.numel():
        return jacrev(f)(x), "jacrev"
    return jacfwd(f)(x), "jacfwd"


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))


def predict(params, x):
    return functional_call(model, params, (x,))


def sample_loss(params, x_i, y_i):
    out = functional_call(model, params, (x_i,))
    return ((out - y_i) ** 2).mean()


def per_sample_grads(params, x, y):
    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)
"""

BLANK = """
def primal_and_tangent(f, x, v):
    pass


def jacobian_column(f, x, j):
    pass


def jacobian_cheaply(f, x):
    pass


model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))


def predict(params, x):
    pass


def per_sample_grads(params, x, y):
    pass
"""


def notebook(source, lib):
    """The names ``source`` defines, run as the lesson's notebook runs it with ``lib`` as torch."""
    func = lib.func
    namespace = {"torch": lib, "nn": lib.nn, "fwAD": lib.autograd.forward_ad, "jvp": func.jvp,
                 "jacfwd": func.jacfwd, "jacrev": func.jacrev, "functional_call": func.functional_call,
                 "grad": func.grad, "vmap": func.vmap}
    exec(source, namespace)
    return namespace


def calls(ns):
    return [(checks.exercise_13_1, (ns["primal_and_tangent"],)),
            (checks.exercise_13_2, (ns["jacobian_column"],)),
            (checks.exercise_13_3, (ns["jacobian_cheaply"],)),
            (checks.exercise_13_4, (ns["predict"], ns["model"])),
            (checks.exercise_13_5, (ns["per_sample_grads"], ns["model"]))]


def test_the_notebooks_answers_pass(lib):
    for check, args in calls(notebook(ANSWERS, lib)):
        assert_ok(check.check(*args))


def test_a_blank_notebook_gets_a_hint_from_every_check(lib):
    hints = ["must return two things", "returns None", "return a tuple (J, name)",
             "must return the model's output", "returns None"]
    for (check, args), words in zip(calls(notebook(BLANK, lib)), hints):
        assert_hint(check.check(*args), words)


def test_answers_that_are_not_functions_get_hints():
    assert_hint(checks.exercise_13_1.check(None), "pass your function primal_and_tangent")
    assert_hint(checks.exercise_13_2.check(3), "pass your function jacobian_column")
    assert_hint(checks.exercise_13_3.check("jacrev"), "pass your function jacobian_cheaply")
    assert_hint(checks.exercise_13_4.check(lambda p, x: x, None), "pass the model")
    assert_hint(checks.exercise_13_5.check(lambda p, x, y: p, "model"), "pass the model")
    assert_hint(checks.exercise_13_4.check(...), "still holds ...")


@pytest.mark.parametrize("exercise", ["13_1", "13_2", "13_3"])
def test_a_function_that_raises_gets_its_error_as_a_hint(exercise):
    def broken(*args):
        raise KeyError("oops")
    assert_hint(getattr(checks, "exercise_" + exercise).check(broken), "raised KeyError")


def test_a_check_restores_the_model_a_wrong_answer_changed(lib):
    ns = notebook(ANSWERS, lib)
    model = ns["model"]
    before = {k: v.clone() for k, v in model.state_dict().items()}

    def loads_into_the_model(params, x):
        model.load_state_dict(params)
        return model(x)
    assert_hint(checks.exercise_13_4.check(loads_into_the_model, model), "changed the model's own")
    assert all(lib.equal(before[k], v) for k, v in model.state_dict().items())
