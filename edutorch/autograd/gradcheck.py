"""``torch.autograd.gradcheck`` and ``gradgradcheck``: compare backward with finite differences.

For a function ``f`` of some tensors, each (output i, input j) pair has a
Jacobian: one row per element of input j, one column per element of output i.

* numerical: nudge one input element by ``±eps`` and look at how every output
  element moves, ``(f(x + eps) - f(x - eps)) / (2 eps)``;
* analytical: backpropagate each one-hot output gradient (one column at a
  time) with ``autograd.grad``; with ``check_forward_ad=True`` also push each
  one-hot input tangent forward (``forward_ad``: one row at a time).

With ``check_batched_forward_grad=True`` two random tangents are also pushed
at once, through ``torch.func.vmap``, and must give what they give one by one.

Where the two disagree beyond ``atol + rtol * |numerical|``, a
``GradcheckError`` prints both matrices, as PyTorch does.  Use float64 inputs:
in float32 the rounding error of a finite difference is larger than the tolerance.
"""
import warnings

import numpy as np

from . import function
from .._dtype import is_floating as _is_floating


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck``/``gradgradcheck`` when a check fails (a ``RuntimeError``)."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _is_tensor(x):
    return isinstance(x, function._Tensor)


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o.requires_grad)


def _host(array):
    """A NumPy copy of a NumPy or CuPy array (Jacobians are compared on the CPU)."""
    return array.get() if hasattr(array, "get") and not isinstance(array, np.ndarray) else np.asarray(array)


def _check_inputs(inputs):
    if not any(_is_tensor(t) and t.requires_grad for t in inputs):
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )
    for i, t in enumerate(inputs):
        if _is_tensor(t) and t.requires_grad and t._data.dtype != np.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                stacklevel=3,
            )


def _float_outputs(out):
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and _is_floating(o._data.dtype))


def _numerical_jacobian(func, inputs, n_outputs, eps, select=_differentiable_outputs):
    """``jac[j][i]``: d(output i)/d(input j) by central differences, shape (numel_j, numel_i)."""
    jacobians = []
    for t in inputs:
        if not (_is_tensor(t) and t.requires_grad):
            continue
        arr = t._data
        per_output = None
        for k, idx in enumerate(np.ndindex(*arr.shape)):
            orig = arr[idx].item()
            arr[idx] = orig - eps  # nudge the input's storage directly, then restore it
            minus = _evaluate(func, inputs, select)
            arr[idx] = orig + eps
            plus = _evaluate(func, inputs, select)
            arr[idx] = orig
            if per_output is None:
                per_output = [np.zeros((arr.size, p.size), dtype=arr.dtype) for p in plus]
            for jac, p, m in zip(per_output, plus, minus):
                jac[k] = ((p - m) / (2 * eps)).reshape(-1)
        if per_output is None:  # an input with no elements
            per_output = [np.zeros((0, o), dtype=arr.dtype) for o in n_outputs]
        jacobians.append(per_output)
    return jacobians


def _evaluate(func, inputs, select):
    """The ``select``-ed outputs of ``func``, as float64 NumPy arrays.

    Grad mode stays on: for ``gradgradcheck`` ``func`` itself calls ``autograd.grad``.
    """
    return [_host(o._data).astype(np.float64) for o in select(func(*inputs))]


def _analytical_jacobian(inputs, output, check_grad_dtypes):
    """Backpropagate each one-hot ``grad_output``: column k of every input's Jacobian."""
    from . import grad as autograd_grad

    diff_inputs = [t for t in inputs if _is_tensor(t) and t.requires_grad]
    jacobians = [np.zeros((t._data.size, output._data.size), dtype=t._data.dtype) for t in diff_inputs]
    xp = np if isinstance(output._data, np.ndarray) else __import__("cupy")
    for k in range(output._data.size):
        onehot = xp.zeros(output._data.size, dtype=output._data.dtype)
        onehot[k] = 1
        grad_output = function._Tensor._make(onehot.reshape(output._data.shape))
        grads = autograd_grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)
        for jac, t, g in zip(jacobians, diff_inputs, grads):
            if g is None:
                continue
            if g._data.shape != t._data.shape:
                raise GradcheckError("Analytical gradient has incorrect size")
            if check_grad_dtypes and g._data.dtype != t._data.dtype:
                raise GradcheckError("Gradient has dtype mismatch")
            jac[:, k] = _host(g._data).reshape(-1)
    return jacobians


def _forward_jacobian(func, inputs, n_outputs):
    """``jac[j][i]`` by forward mode: a one-hot tangent on each element of input j in turn,
    the output tangents read with ``unpack_dual`` (row k of every output's Jacobian)."""
    from . import forward_ad as fwAD

    jacobians = []
    for j, t in enumerate(inputs):
        if not (_is_tensor(t) and t.requires_grad):
            continue
        per_output = [np.zeros((t._data.size, n), dtype=t._data.dtype) for n in n_outputs]
        for k in range(t._data.size):
            onehot = np.zeros(t._data.size, dtype=t._data.dtype)
            onehot[k] = 1
            with fwAD.dual_level():
                dual = fwAD.make_dual(t, function._Tensor._make(_host_like(onehot.reshape(t._data.shape), t._data)))
                outputs = _differentiable_outputs(func(*inputs[:j], dual, *inputs[j + 1:]))
                for jac, out in zip(per_output, outputs):
                    tangent = fwAD.unpack_dual(out).tangent
                    if tangent is not None:
                        jac[k] = _host(tangent._data).reshape(-1)
        jacobians.append(per_output)
    return jacobians


def _host_like(array, like):
    """``array`` on the device of ``like`` (a CuPy array for a CUDA tensor)."""
    return array if isinstance(like, np.ndarray) else __import__("cupy").asarray(array)


def _as_tensor(array):
    return function._Tensor._make(np.ascontiguousarray(array))


def _notallclose_msg(analytical, numerical, output_idx, input_idx, forward=False):
    mode = " computed with forward mode" if forward else ""
    return (
        f"Jacobian{mode} mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
        f"numerical:{_as_tensor(numerical)}\nanalytical:{_as_tensor(analytical)}\n"
    )


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Returns True, or raises ``GradcheckError`` (False when ``raise_exception=False``).
    ``fast_mode`` runs the full (slow) check: same verdict, only slower.
    """
    if not (check_backward_ad or check_forward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        if check_backward_ad:
            _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol,
                       check_undefined_grad, check_grad_dtypes, check_batched_grad)
        if check_forward_ad:
            _forward_gradcheck(func, _as_tuple(inputs), eps, atol, rtol)
        if check_batched_forward_grad:
            _check_batched_forward_grad(func, _as_tuple(inputs))
        return True
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, check_batched_grad):
    _check_inputs(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    if not outputs:  # nothing to backpropagate: f must not depend on the inputs at all
        floats = _float_outputs(func(*inputs))
        numerical = _numerical_jacobian(func, inputs, [o._data.size for o in floats], eps, _float_outputs)
        for per_output in numerical:
            if any(np.any(jac != 0) for jac in per_output):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    numerical = _numerical_jacobian(func, inputs, [o._data.size for o in outputs], eps)
    for i, out in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, out, check_grad_dtypes)
        again = _analytical_jacobian(inputs, out, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, (per_output[i] for per_output in numerical))):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j))
        if any(np.max(np.abs(a - b), initial=0.0) > nondet_tol for a, b in zip(analytical, again)):
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                f"gradient matches numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            )
        if check_batched_grad:
            _check_batched_grad(inputs, out, analytical, atol, rtol)
    if check_undefined_grad:
        _check_zero_grad_outputs(inputs, outputs)
    return True


def _forward_gradcheck(func, inputs, eps, atol, rtol):
    """The forward-mode Jacobian (each op's ``jvp``) against finite differences."""
    _check_inputs(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    sizes = [o._data.size for o in outputs]
    numerical = _numerical_jacobian(func, inputs, sizes, eps)
    forward = _forward_jacobian(func, inputs, sizes)
    for j, (per_output_f, per_output_n) in enumerate(zip(forward, numerical)):
        for i, (a, n) in enumerate(zip(per_output_f, per_output_n)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j, forward=True))
    return True


def _check_batched_grad(inputs, output, analytical, atol, rtol):
    """``autograd.grad(..., is_grads_batched=True)`` must give the Jacobian's columns too."""
    from . import grad as autograd_grad

    diff_inputs = [t for t in inputs if _is_tensor(t) and t.requires_grad]
    n = output._data.size
    xp = np if isinstance(output._data, np.ndarray) else __import__("cupy")
    eye = xp.eye(n, dtype=output._data.dtype).reshape((n,) + output._data.shape)
    grads = autograd_grad(output, diff_inputs, function._Tensor._make(eye), retain_graph=True,
                          allow_unused=True, is_grads_batched=True)
    for g, a in zip(grads, analytical):
        batched = np.zeros_like(a) if g is None else _host(g._data).reshape(n, -1).T
        if not np.allclose(batched, a, rtol=rtol, atol=atol):
            raise GradcheckError(
                f"While computing batched gradients, got: {_as_tensor(batched)}\n\n"
                f"Expected: {_as_tensor(a)}"
            )


_transforms = {}  # "vmap": torch.func.vmap, registered by edutorch.func (autograd, the core, imports no func)


def register_vmap(vmap):
    """Called by ``edutorch.func`` on import: the ``vmap`` check_batched_forward_grad runs tangents through."""
    _transforms["vmap"] = vmap


FAILED_BATCHED_GRAD_MSG_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled automatically when both `check_batched_grad=True`
and `check_forward_ad=True`, but can be disabled in the following ways
dependong on how the test was invoked (via a test that calls gradcheck
directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_forward_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_forward_grad=False`
"""  # PyTorch's text, typo included


def _check_batched_forward_grad(func, inputs):
    """Tangents pushed in a batch, ``vmap`` over the tangent of one input at a time, must equal
    the same tangents pushed one by one (PyTorch's ``_test_batched_grad_forward_ad``: two random
    tangents, stacked).  A batching rule that is wrong, or an op vmap refuses, fails here."""
    from .. import randn_like, stack

    for j, current in enumerate(inputs):
        if not (_is_tensor(current) and current.requires_grad and current.is_floating_point()):
            continue
        tangents = [randn_like(current) for _ in range(2)]
        push = _tangents_of_outputs(func, inputs, j)
        expected = [stack(shards) for shards in zip(*[push(t) for t in tangents])]
        try:
            result = _transforms["vmap"](push)(stack(tangents))
        except RuntimeError as error:
            raise GradcheckError(
                f"While computing batched gradients, got: {error}\n\n{FAILED_BATCHED_GRAD_MSG_FWD_AD}"
            ) from error
        for i, (res, exp) in enumerate(zip(result, expected)):
            if not np.allclose(_host(res._data), _host(exp._data), rtol=1e-05, atol=1e-08):  # torch.allclose
                # (PyTorch numbers the output with the input's index, and both with the output's)
                raise GradcheckError(f"For output {i} and input {i}:\n\n{FAILED_BATCHED_GRAD_MSG_FWD_AD}"
                                     f"\n\nGot:\n{res}\n\nExpected:\n{exp}".strip())
    return True


def _tangents_of_outputs(func, inputs, j):
    """``tangent -> (tangent of each output)`` with ``tangent`` on input ``j``, every input detached;
    an output without tangent gives zeros (PyTorch's ``jvp`` inside ``_test_batched_grad_forward_ad``)."""
    from . import forward_ad as fwAD

    def push(tangent):
        with fwAD.dual_level():
            dual = fwAD.make_dual(inputs[j].detach(), tangent)
            args = [dual if k == j else (a.detach() if _is_tensor(a) else a) for k, a in enumerate(inputs)]
            tangents = []
            for out in _as_tuple(func(*args)):
                if out is None:
                    continue
                primal, tangent_out = fwAD.unpack_dual(out)
                tangents.append(tangent_out if tangent_out is not None else primal.new_zeros(()).expand(primal.shape))
            return tuple(tangents)

    return push


def _check_zero_grad_outputs(inputs, outputs):
    """An undefined (all-zero) output gradient must give zero input gradients."""
    from . import grad as autograd_grad

    diff_inputs = [t for t in inputs if _is_tensor(t) and t.requires_grad]
    zeros = [function._Tensor._make(o._data * 0) for o in outputs]
    grads = autograd_grad(outputs, diff_inputs, zeros, retain_graph=True, allow_unused=True)
    for g in grads:
        if g is not None and bool((_host(g._data) != 0).any()):
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                "'Notes about undefined output gradients' in 'tools/autograd/derivatives.yaml'"
            )


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: ``gradcheck`` of the function ``(inputs, v) -> vᵀ J``.

    Backward must itself be differentiable (``create_graph=True``).  Without
    ``grad_outputs``, random ones in [-1, 1) are drawn from a fixed seed.
    """
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*inputs))
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            function._Tensor._make(rng.uniform(-1, 1, o._data.shape).astype(o._data.dtype)).requires_grad_()
            for o in outputs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)

    def vjp(*args):
        """The first derivative as a function: grads of ``func`` w.r.t. its inputs, given v."""
        from . import grad as autograd_grad

        input_args, vs = args[:-n_out], args[-n_out:]
        outputs = _differentiable_outputs(func(*input_args))
        diff_inputs = tuple(t for t in input_args if _is_tensor(t) and t.requires_grad)
        grads = autograd_grad(outputs, diff_inputs, vs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad and check_rev_over_rev, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
