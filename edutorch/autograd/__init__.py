"""``torch.autograd``: reverse-mode automatic differentiation.

``backward`` and ``grad`` turn the user's outputs and gradients into graph
edges and hand them to the engine (``engine.py``).
"""
import numpy as np

from . import forward_ad, function, grad_mode, graph
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import run_backward
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .. import backend


def _ones_like(out):
    """The implicit gradient of a scalar output: a 1 of the same dtype and device."""
    data = out._data
    if type(data) is np.ndarray:
        return function._Tensor._make(np.ones(data.shape, data.dtype))
    return function._Tensor._make(backend.get_array_module(data).ones_like(data))


def _make_grads(outputs, grad_outputs, create_graph):
    """The gradient to start from for each output: given, or 1 for a scalar output."""
    Tensor = function._Tensor
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not function._is_floating(out._data.dtype):
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {out.dtype}"
                )
            grads.append(_ones_like(out))  # a new tensor: nothing to detach
            continue
        elif not isinstance(g, Tensor):
            from .. import _creation

            g = _creation.tensor(g, dtype=out.dtype)
        elif g._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                f"output[{i}] has a shape of {out.shape}."
            )
        grads.append(g if create_graph else g.detach())
    return grads


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _roots(outputs):
    """The graph edge of each output; an output outside any graph is PyTorch's error."""
    edges = []
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(_gradient_edge(out))
    return edges


def _gradient_edge(t):
    """The graph edge of ``t``, found as PyTorch's ``gradient_edge`` does: by reading ``t.grad_fn`` (which
    remakes a view's node if its base was written since), else its gradient accumulator."""
    fn = t.grad_fn
    return (fn, t._output_nr) if fn is not None else t._edge()


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """``torch.autograd.backward``: accumulate gradients of ``tensors`` into leaves' ``.grad``."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors, create_graph)
    roots = _roots(tensors)
    if inputs is None:
        run_backward(roots, grads, retain_graph, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    edges = [_gradient_edge(t) for t in inputs]
    captured = run_backward(roots, grads, retain_graph, create_graph, inputs=set(edges))
    for t, edge in zip(inputs, edges):
        g = captured.get(edge)
        if g is None:
            continue
        # what the input's node would do: a leaf's AccumulateGrad, or a non-leaf's retain_grad
        accumulate = function.accumulate_grad if t.grad_fn is None else function.accumulate_retained_grad
        grad_mode.call_with_grad_mode(bool(create_graph), accumulate, t, g)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """``torch.autograd.grad``: return d(outputs)/d(inputs) without touching ``.grad``."""
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grad_outputs, create_graph)
    edges = [_gradient_edge(t) for t in inputs]
    captured = run_backward(_roots(outputs), grads, retain_graph, create_graph, inputs=set(edges))
    result = []
    for i, (t, edge) in enumerate(zip(inputs, edges)):
        g = captured.get(edge)
        if g is None:
            if materialize_grads:
                from .. import _creation

                g = _creation.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        elif not create_graph:
            g = g.detach()
        result.append(g)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``is_grads_batched=True``: the first dim of each grad_output indexes independent
    vector-Jacobian products (PyTorch uses vmap; a loop gives the same numbers)."""
    from .. import _functional

    batch = grad_outputs[0].shape[0]
    rows = []
    for b in range(batch):
        keep = True if b < batch - 1 else retain_graph
        rows.append(grad(outputs, inputs, [g[b] for g in grad_outputs], keep, create_graph,
                         allow_unused=allow_unused, materialize_grads=materialize_grads))
    return tuple(
        None if column[0] is None else _functional.stack(list(column)) for column in zip(*rows)
    )


Variable = None  # ``torch.autograd.Variable`` is ``torch.Tensor``; set by edutorch/_tensor.py

__all__ = [
    "Function", "FunctionCtx", "backward", "grad", "no_grad", "enable_grad",
    "set_grad_enabled", "inference_mode", "once_differentiable", "grad_mode",
    "gradcheck", "gradgradcheck", "GradcheckError", "detect_anomaly", "set_detect_anomaly",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "graph", "Variable",
]


from .._scope import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.autograd", "edutorch.autograd")  # out-of-scope names say why
