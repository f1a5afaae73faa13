"""Checks of lesson 13 · Forward mode and function transforms
(lessons/13-forward-mode-and-function-transforms.ipynb).

Expected derivatives are computed here by central differences in float64 (or by plain
autograd, one sample at a time), never by the transform the exercise practises, so the
checks also test edutorch's forward mode and ``torch.func``.
"""

import numpy as np

from ._common import (
    _correct,
    _hint,
    _is_tensor,
    _library,
    _library_of_function,
    _seeded,
    _values,
    exercise,
)

EPS = 1e-6


def _float64(lib, values):
    return lib.tensor(np.asarray(values, dtype=np.float64))


def _directional(f, x, v):
    """``J·v`` of ``f`` at ``x`` by central differences (float64)."""
    return (_values(f(x + EPS * v)) - _values(f(x - EPS * v))) / (2 * EPS)


def _functions(lib):
    """``(name, f, x)``: a wide-ish map R^3 → R^2 and an elementwise one R^4 → R^4."""
    rng = np.random.default_rng(13)
    w = _float64(lib, rng.normal(size=(2, 3)))
    return [("f(x) = W @ tanh(x), from R^3 to R^2", lambda x: w @ x.tanh(),
             _float64(lib, rng.normal(size=3))),
            ("f(x) = x * exp(x), from R^4 to R^4", lambda x: x * x.exp(),
             _float64(lib, rng.normal(size=4)))]


def _same(a, b, rtol=1e-5, atol=1e-7):
    """Same shape and close values (NumPy arrays)."""
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol)


def _call(function, *args):
    """``(result, None)``, or ``(None, a hint)`` when the student's function raises."""
    try:
        return function(*args), None
    except Exception as error:
        if "different size than that of the original Tensor" in str(error):
            return None, _hint("the tangent has another shape than the primal it belongs to: a "
                               "tangent lives in the INPUT space, one entry per entry of x "
                               f"(e.g. torch.zeros_like(x)) — {function.__name__} raised: {error}")
        return None, _hint(f"{function.__name__} raised {type(error).__name__}: {error}")


def _pair(result, name):
    """``(first, second)`` of a 2-tuple, or ``(None, a hint)``."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return None, _hint(f"{name} must return two things, a tuple (primal, tangent)")
    return tuple(result), None


@exercise
def exercise_13_1(primal_and_tangent):
    """``primal_and_tangent(f, x, v)``: ``f(x)`` and its tangent ``J·v`` by dual numbers."""
    if not callable(primal_and_tangent):
        return _hint("pass your function primal_and_tangent itself")
    lib = _library_of_function(primal_and_tangent)
    for description, f, x in _functions(lib):
        v = _float64(lib, np.linspace(1.0, -0.5, x.numel()))
        result, problem = _call(primal_and_tangent, f, x, v)
        if problem is None:
            result, problem = _pair(result, "primal_and_tangent")
        if problem is not None:
            return problem
        primal, tangent = result
        value, expected = _values(f(x)), _directional(f, x, v)
        if tangent is None:
            return _hint("the tangent is None: forward AD found no tangent. Make x dual with "
                         "fwAD.make_dual(x, v) and call unpack_dual on the output INSIDE the "
                         "`with fwAD.dual_level():` block (outside it, the tangent is gone)")
        if not _is_tensor(primal) or not _is_tensor(tangent):
            return _hint("return two tensors: (primal, tangent) = fwAD.unpack_dual(f(dual_x))")
        primal, tangent = _values(primal), _values(tangent)
        if _same(primal, expected) and _same(tangent, value):
            return _hint("primal and tangent are swapped: unpack_dual returns (primal, tangent)")
        if not _same(primal, value):
            return _hint(f"for {description}, the primal must be f(x), the value of the output")
        if _same(tangent, _values(v)) and not _same(expected, _values(v)):
            return _hint("the tangent is v itself, the tangent you passed in: return the "
                         "OUTPUT's tangent, unpack_dual(f(dual_x)).tangent = J·v")
        if tangent.shape == tuple(x.shape) and tangent.shape != value.shape:
            return _hint(f"for {description} the tangent has shape {tangent.shape}, the input's: "
                         "that is what a vjp (backward, torch.autograd.grad) gives, Jᵀ·u. Forward "
                         f"mode's tangent J·v has the output's shape {value.shape}")
        if tangent.shape != value.shape:
            return _hint(f"the tangent has shape {tangent.shape}; J·v has the output's shape "
                         f"{value.shape}")
        if _same(tangent, _directional(f, x, lib.ones_like(x))) and not _same(tangent, expected):
            return _hint("that is the derivative along a vector of ones: use the direction v "
                         "as the tangent, fwAD.make_dual(x, v)")
        if not _same(tangent, expected):
            return _hint(f"for {description} the tangent is not J·v: make_dual(x, v), run f on "
                         "the dual tensor, unpack_dual the output")
    return _correct("f(x) and J·v from one forward pass on dual numbers")


def _wide(lib):
    """``f(x) = sin(A @ x)``, R^4 → R^3, and a point ``x``."""
    rng = np.random.default_rng(132)
    a = _float64(lib, rng.normal(size=(3, 4)))
    return (lambda x: (a @ x).sin()), _float64(lib, rng.normal(size=4))


def _unit(lib, n, j):
    return _float64(lib, np.eye(n)[j])


@exercise
def exercise_13_2(jacobian_column):
    """``jacobian_column(f, x, j)``: column ``j`` of the Jacobian, ``J[:, j]``, from one jvp."""
    if not callable(jacobian_column):
        return _hint("pass your function jacobian_column itself")
    lib = _library_of_function(jacobian_column)
    f, x = _wide(lib)
    n = x.numel()
    jacobian = np.stack([_directional(f, x, _unit(lib, n, k)) for k in range(n)], axis=1)
    for j in (0, 2, 3):
        column, problem = _call(jacobian_column, f, x, j)
        if problem is not None:
            return problem
        if column is None:
            return _hint("jacobian_column returns None: return the column, a tensor")
        if isinstance(column, (tuple, list)):
            return _hint("return the tangent only (jvp returns (output, tangent): take [1])")
        got = _values(column)
        if got.shape == jacobian.shape:
            return _hint("that is the whole Jacobian (3×4): one jvp with the one-hot tangent "
                         "e_j gives only its column j")
        if got.shape == (n,):
            return _hint(f"a result of shape ({n},), the input's: that is a ROW of the Jacobian "
                         "(a vjp, or jacrev/jacfwd(f)(x)[j]); column j is J[:, j], the output's "
                         "shape: jvp(f, (x,), (e_j,))")
        if got.shape != (jacobian.shape[0],):
            return _hint(f"column j has the output's shape ({jacobian.shape[0]},); got {got.shape}")
        if np.allclose(got, jacobian @ np.ones(n)):
            return _hint("that is the sum of all columns (a tangent of ones): the tangent must "
                         "be the one-hot vector e_j, 1 at index j and 0 elsewhere")
        if np.allclose(got, _values(f(x))):
            return _hint("that is f(x), the primal: jvp returns (f(x), J·v); take the tangent")
        for k in range(n):
            if k != j and np.allclose(got, jacobian[:, k]):
                return _hint(f"for j={j} that is column {k}: indices start at 0, e_j has its 1 at "
                             "index j")
        if not np.allclose(got, jacobian[:, j], rtol=1e-5, atol=1e-7):
            return _hint(f"for j={j} the result is not J[:, j]: jvp(f, (x,), (e_j,)) with e_j one-hot")
    return _correct("column j of a 3×4 Jacobian from one forward pass, for j = 0, 2, 3")


def _shapes(lib):
    """A wide map (R^30 → R^2) and a tall one (R^2 → R^30), with points."""
    rng = np.random.default_rng(133)
    a, b = _float64(lib, rng.normal(size=(2, 30))), _float64(lib, rng.normal(size=(30, 2)))
    return [("wide", lambda x: a @ x.tanh(), _float64(lib, rng.normal(size=30)), "jacrev"),
            ("tall", lambda x: (b @ x).sin(), _float64(lib, rng.normal(size=2)), "jacfwd")]


@exercise
def exercise_13_3(jacobian_cheaply):
    """``jacobian_cheaply(f, x)``: ``(J, name)`` with ``name`` the cheaper transform,
    ``"jacrev"`` for a wide Jacobian (fewer outputs than inputs), ``"jacfwd"`` for a tall one."""
    if not callable(jacobian_cheaply):
        return _hint("pass your function jacobian_cheaply itself")
    lib = _library_of_function(jacobian_cheaply)
    for kind, f, x, cheaper in _shapes(lib):
        result, problem = _call(jacobian_cheaply, f, x)
        if problem is not None:
            return problem
        if _is_tensor(result):
            return _hint("return two things: the Jacobian and the name of the transform you "
                         "used, (J, 'jacrev') or (J, 'jacfwd')")
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            return _hint("return a tuple (J, name), name 'jacrev' or 'jacfwd'")
        jacobian, name = result
        m, n = _values(f(x)).size, x.numel()
        expected = np.stack([_directional(f, x, _unit(lib, n, k)) for k in range(n)], axis=1)
        got = _values(jacobian)
        if _same(got, expected.T) and m != n:
            return _hint(f"the {kind} Jacobian is transposed ({n}×{m}): J has one row per "
                         f"output, {m}×{n}, as jacrev and jacfwd return it")
        if not _same(got, expected):
            return _hint(f"the {kind} function's Jacobian is wrong: it is {m}×{n}, J[i, j] = "
                         "∂f_i/∂x_j; torch.func.jacrev(f)(x) or jacfwd(f)(x) computes it")
        if name not in ("jacrev", "jacfwd"):
            return _hint(f"name the transform as a string, 'jacrev' or 'jacfwd' (got {name!r})")
        if name != cheaper:
            passes = {"jacrev": f"{m} vjps (one per output)", "jacfwd": f"{n} jvps (one per input)"}
            return _hint(f"for the {kind} function ({m} outputs, {n} inputs) {name} costs "
                         f"{passes[name]}; the other needs {passes[cheaper]}: choose by which "
                         "is smaller, the number of outputs (jacrev) or of inputs (jacfwd)")
    return _correct("jacrev for the wide Jacobian (2 vjps instead of 30 jvps), jacfwd for the "
                    "tall one (2 jvps instead of 30 vjps)")


def _random_params(lib, model):
    """A dict of new values for every parameter of ``model``, requiring grad."""
    with _seeded(lib):
        return {name: lib.randn(p.shape, dtype=p.dtype).requires_grad_()
                for name, p in model.named_parameters()}


def _with_params(model, params):
    """``model``'s forward with ``params`` loaded into a copy (the reference, no torch.func)."""
    import copy

    twin = copy.deepcopy(model)
    lib = _library(model)
    with lib.no_grad():
        for name, p in twin.named_parameters():
            p.copy_(params[name])
    return twin


@exercise
def exercise_13_4(predict, model):
    """``predict(params, x)``: ``model``'s output with the parameters in the dict ``params``
    (``functional_call``), differentiable in ``params``, ``model`` left unchanged."""
    if not callable(predict):
        return _hint("pass your function predict itself, and the model")
    if not hasattr(model, "named_parameters"):
        return _hint("pass the model as the second argument: checks.exercise_13_4(predict, model)")
    lib = _library(model)
    own = {name: p.detach().clone() for name, p in model.named_parameters()}
    params = _random_params(lib, model)
    with _seeded(lib):
        x = lib.randn(5, next(iter(own.values())).shape[-1])
    try:
        out, problem = _call(predict, params, x)
        changed = [name for name, p in model.named_parameters()
                   if not np.array_equal(_values(p), _values(own[name]))]
    finally:
        with lib.no_grad():  # undo what a wrong answer did to the student's model
            for name, p in model.named_parameters():
                p.copy_(own[name])
    if problem is not None:
        return problem
    if changed:
        return _hint(f"predict changed the model's own parameters ({', '.join(changed)}): "
                     "functional_call(model, params, (x,)) uses params for one call and leaves "
                     "the model as it was (no load_state_dict, no copy_)")
    if not _is_tensor(out):
        return _hint("predict must return the model's output, a tensor")
    expected = _values(_with_params(model, params)(x))
    got = _values(out)
    if _same(got, _values(model(x))) and not _same(got, expected):
        return _hint("the output is the model's with its own parameters: predict ignores params. "
                     "Use torch.func.functional_call(model, params, (x,))")
    if not _same(got, expected, atol=1e-6):
        for name in params:
            partial = {**{k: v.detach() for k, v in params.items()}, name: own[name]}
            if _same(got, _values(_with_params(model, partial)(x)), atol=1e-6):
                return _hint(f"params[{name!r}] was not used (the model's own {name} was): pass "
                             "the whole dict to functional_call")
        return _hint("the output differs from the model run with params: "
                     "functional_call(model, params, (x,))")
    if not out.requires_grad:
        return _hint("no gradient reaches params: the output does not require grad. Do not "
                     "detach them, use .data or torch.no_grad(): it must stay differentiable")
    grads = lib.autograd.grad(out.sum(), list(params.values()), allow_unused=True)
    missing = [name for name, g in zip(params, grads) if g is None]
    if missing:
        return _hint(f"no gradient reaches params ({', '.join(missing)}): do not detach them "
                     "or use .data; the output must stay differentiable in params")
    return _correct("the model's output with the parameters from the dict, differentiable in "
                    "them; the model itself unchanged")


def _batch(lib, model):
    in_features = next(p for p in model.parameters() if p.dim() == 2).shape[1]
    with _seeded(lib):
        return lib.randn(6, in_features), lib.randn(6, 1)


def _loop_grads(lib, model, params, x, y):
    """Per-sample gradients the slow way: one autograd.grad per sample (no vmap)."""
    twin = _with_params(model, params)
    per_sample = {name: [] for name in params}
    for i in range(x.shape[0]):
        loss = ((twin(x[i:i + 1]) - y[i:i + 1]) ** 2).mean()
        grads = lib.autograd.grad(loss, list(twin.parameters()))
        for name, g in zip(per_sample, grads):
            per_sample[name].append(_values(g))
    return {name: np.stack(gs) for name, gs in per_sample.items()}


@exercise
def exercise_13_5(per_sample_grads, model):
    """``per_sample_grads(params, x, y)``: ``{name: gradient of each sample's loss}``, each of
    shape ``(N, *param.shape)``; one sample's loss is ``((model(x_i) - y_i) ** 2).mean()``."""
    if not callable(per_sample_grads):
        return _hint("pass your function per_sample_grads itself, and the model")
    if not hasattr(model, "named_parameters"):
        return _hint("pass the model as the second argument: "
                     "checks.exercise_13_5(per_sample_grads, model)")
    lib = _library(model)
    params = {k: v.detach() for k, v in _random_params(lib, model).items()}
    x, y = _batch(lib, model)
    try:
        got = per_sample_grads(params, x, y)
    except Exception as error:
        if "mapped dimension" in str(error) or "in_dims" in str(error):
            return _hint("vmap tried to split params along dim 0 too: every sample shares the "
                         "same parameters, so their in_dims is None: vmap(grad(loss), "
                         f"in_dims=(None, 0, 0)) ({type(error).__name__}: {str(error)[:80]})")
        return _hint(f"per_sample_grads raised {type(error).__name__}: {error}")
    if got is None:
        return _hint("per_sample_grads returns None: return the dict of per-sample gradients")
    if isinstance(got, (tuple, list)):
        got = dict(zip(params, got))
    if not isinstance(got, dict) or set(got) != set(params):
        return _hint(f"return a dict with the keys of params, {sorted(params)}")
    expected = _loop_grads(lib, model, params, x, y)
    n = x.shape[0]
    for name, want in expected.items():
        g = _values(got[name])
        if g.shape == want.shape[1:]:
            if np.allclose(g, want.sum(0), atol=1e-6):
                return _hint(f"{name}: one gradient of shape {g.shape}, the SUM over the batch: "
                             "per-sample gradients keep the batch dimension, one per sample "
                             f"({n}, {', '.join(map(str, g.shape))})")
            if np.allclose(g, want.mean(0), atol=1e-6):
                return _hint(f"{name}: one gradient of shape {g.shape}, the batch's mean gradient "
                             "(what loss.backward() gives): vmap over the samples keeps one "
                             f"gradient per sample, ({n}, {', '.join(map(str, g.shape))})")
        if g.shape != want.shape:
            return _hint(f"{name}: shape {g.shape}, expected {want.shape}: one gradient per "
                         "sample, stacked along a new first dimension")
        if np.allclose(g * n, want, atol=1e-6):
            return _hint(f"{name}: each gradient is divided by the batch size {n}: one sample's "
                         "loss is its own mean, not a share of the batch's")
        if not np.allclose(g, want, atol=1e-5):
            return _hint(f"{name}: the per-sample gradients differ from a loop of autograd.grad "
                         "over the samples: the loss of one sample is ((model(x_i) - y_i) ** 2).mean()")
    return _correct(f"{n} per-sample gradients of every parameter, equal to one autograd.grad "
                    "per sample")
