"""``torch.utils.checkpoint``: trade compute for memory by recomputing in backward.

``checkpoint(function, *args, use_reentrant=True)`` runs ``function`` under
``no_grad``, so none of its intermediate tensors are saved, and keeps only its
inputs.  When the gradient arrives, ``CheckpointFunction.backward`` runs
``function`` again, this time recording a graph, and backpropagates through
that fresh graph with ``autograd.backward``: a backward pass inside a backward
pass ("reentrant").  This is PyTorch's ``use_reentrant=True`` algorithm.

The random state is saved and restored around the recomputation, so a
``Dropout`` inside ``function`` drops the same units both times.
"""
import warnings

from .. import random as _random
from ..autograd import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from .._tensor import Tensor


class CheckpointFunction(Function):
    """Forward without a graph; backward recomputes ``function`` and differentiates it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = _random.get_rng_state()
        ctx.save_for_backward(*(a if isinstance(a, Tensor) else None for a in args))
        ctx.non_tensor_args = [None if isinstance(a, Tensor) else a for a in args]
        return run_function(*args)  # grad mode is off inside forward: nothing is saved

    @staticmethod
    def backward(ctx, *grad_outputs):
        saved = ctx.saved_tensors
        # fresh leaves that share the inputs' values: the recomputed graph starts at them
        inputs = [
            ctx.non_tensor_args[i] if t is None else t.detach().requires_grad_(t.requires_grad)
            for i, t in enumerate(saved)
        ]
        current_rng = _random.get_rng_state() if ctx.preserve_rng_state else None
        if ctx.preserve_rng_state:
            _random.set_rng_state(ctx.rng_state)  # the same random numbers as in forward
        try:
            with enable_grad():
                outputs = ctx.run_function(*inputs)
        finally:
            if current_rng is not None:
                _random.set_rng_state(current_rng)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(x.grad if isinstance(x, Tensor) and x.requires_grad else None for x in inputs)
        return (None, None) + grads


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """Run ``function(*args)`` without storing its activations; recompute them in backward."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "use_reentrant=True is the variant edutorch implements.",
            UserWarning,
            stacklevel=2,
        )
        use_reentrant = True
    if not use_reentrant:
        raise ValueError(
            "edutorch implements the reentrant checkpoint only (use_reentrant=True): the "
            "non-reentrant variant needs saved-tensor hooks, which edutorch does not have"
        )
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      UserWarning, stacklevel=2)
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Split a ``Sequential`` (or list of modules) into ``segments`` checkpointed chunks."""
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(functions) // segments

    def run(start, end):
        def forward(x):
            for f in functions[start:end]:
                x = f(x)
            return x

        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end + 1), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions))(input)
