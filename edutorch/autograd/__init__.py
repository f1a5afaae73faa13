"""``torch.autograd``: reverse-mode automatic differentiation.

``backward`` and ``grad`` turn the user's outputs and gradients into graph
edges and hand them to the engine (``engine.py``).
"""
from . import grad_mode
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .engine import run_backward


def _make_grads(outputs, grad_outputs, create_graph):
    """The gradient to start from for each output: given, or 1 for a scalar output."""
    from .. import _creation

    grads = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if out.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.data.dtype.kind != "f":
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {out.dtype}"
                )
            g = _creation.ones_like(out)
        elif not hasattr(g, "data") or not hasattr(g, "grad_fn"):
            g = _creation.tensor(g, dtype=out.dtype)
        elif g.shape != out.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{len(grads)}] has a shape of {g.shape} and "
                f"output[{len(grads)}] has a shape of {out.shape}."
            )
        grads.append(g if create_graph else g.detach())
    return grads


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _roots(outputs):
    for out in outputs:
        if not out.requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
    return [out._edge() for out in outputs]


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
    edges = [t._edge() for t in inputs]
    captured = run_backward(roots, grads, retain_graph, create_graph, inputs=set(edges))
    for t, edge in zip(inputs, edges):
        g = captured.get(edge)
        if g is not None:
            t._grad = (g if create_graph else g.detach()).clone() if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """``torch.autograd.grad``: return d(outputs)/d(inputs) without touching ``.grad``."""
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grad_outputs, create_graph)
    edges = [t._edge() for t in inputs]
    captured = run_backward(_roots(outputs), grads, retain_graph, create_graph, inputs=set(edges))
    result = []
    for t, edge in zip(inputs, edges):
        g = captured.get(edge)
        if g is None:
            if materialize_grads:
                from .. import _creation

                g = _creation.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        elif not create_graph:
            g = g.detach()
        result.append(g)
    return tuple(result)


__all__ = [
    "Function", "FunctionCtx", "backward", "grad", "no_grad", "enable_grad",
    "set_grad_enabled", "inference_mode", "once_differentiable", "grad_mode",
]
