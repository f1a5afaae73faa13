"""The two tangent formulas PyTorch derives instead of writing them (``derivatives.yaml``).

An op's tangent formula (``jvp``, forward-mode AD: ``autograd/forward_ad.py``)
sits beside its ``backward``.  Two families of ops need no formula of their
own, exactly as in PyTorch's ``derivatives.yaml``:

* ``auto_element_wise``: an element-wise op of one tensor has a diagonal
  Jacobian, so J u = Jᵀ u: the tangent is the *backward* formula applied to
  the tangent in place of the gradient (``result: auto_element_wise``).  The
  derivative is written once, in ``backward``.  The same holds for any op
  whose Jacobian is symmetric (``softmax``): ``symmetric_jacobian``.
* ``auto_reduction``: in a reduction (``prod``, ``var``, ``norm``, ``amax``,
  ``max(dim)``, a loss...) each input element feeds one output element, so the
  Jacobian has one entry per input element, and ``backward`` of ones
  returns exactly those entries, shaped like the input: the tangent is their
  product with the input's tangent, summed over the reduced dims.  (PyTorch
  writes these formulas out; here the derivative stays written once.)
* ``auto_linear(*positions)``: an op that is linear in the arguments at
  ``positions`` (sum, transpose, indexing, ``cat``, ``a + b``...) maps
  tangents as it maps values: the tangent is the op itself applied to the
  tangents, 0 standing for an argument without one (``result: auto_linear``).

Anything else writes ``jvp(ctx, *tangents)`` by hand, reading the op's
arguments from ``ctx.primals`` and its outputs from ``ctx.result``.
"""
from . import utils as _utils


def _element_wise(cls, ctx, *tangents):
    """J u = Jᵀ u for a diagonal Jacobian: ``backward`` with the tangent as the gradient.

    With several tensor inputs of one shape (the fused ``tanh_backward(grad, y)``...), each
    input's term is ``backward`` of its own tangent, taken at that input's position; an input
    without a tangent counts as a zero one, as in PyTorch's formulas (``tanh_backward(0, y)``
    is +0, so the sum of the terms is +0 where a lone term would be -0: ``jacfwd(jacfwd(f))``).
    """
    differentiable = [isinstance(a, _utils._Tensor) and a.is_floating_point() for a in ctx.primals]
    if sum(differentiable) > 1:
        tangents = [zero_if_missing(a, t) if d else t for a, t, d in zip(ctx.primals, tangents, differentiable)]
    return sum_tangents(*[term for term, _ in _backward_per_input(cls, ctx, tangents, lambda t: (t,))])


def _backward_per_input(cls, ctx, tangents, grads_for):
    """For each input with a tangent: ``(backward(*grads_for(tangent))[i], tangent)``.

    Every input with a tangent needs its term, whether or not it requires grad: while
    ``backward`` runs, ``needs_input_grad`` says so.
    """
    needs = ctx.needs_input_grad
    ctx.needs_input_grad = tuple(n or t is not None for n, t in zip(needs, tangents)) + tuple(needs[len(tangents):])
    try:
        pairs = []
        for i, tangent in enumerate(tangents):
            if tangent is not None:
                grads = cls.backward(ctx, *grads_for(tangent))
                pairs.append((grads[i] if isinstance(grads, tuple) else grads, tangent))
        return pairs
    finally:
        ctx.needs_input_grad = needs


auto_element_wise = classmethod(_element_wise)
# the same rule holds for any op whose Jacobian is symmetric (softmax: diag(y) - y yᵀ)
symmetric_jacobian = auto_element_wise


def _reduction(cls, ctx, *tangents):
    """Σ over the reduced dims of ∂out/∂x · dx, the entries ∂out/∂x being ``backward`` of ones."""
    outputs = ctx.result if isinstance(ctx.result, tuple) else (ctx.result,)
    values = outputs[0]
    ones = values.detach().new_ones(values.shape)
    # (values, indices): only the values have a gradient
    pairs = _backward_per_input(cls, ctx, tangents, lambda t: (ones,) + (None,) * (len(outputs) - 1))
    if getattr(ctx, "reduction", None) == "none":  # a loss that keeps one value per element
        dims = ()
    elif hasattr(ctx, "axes"):
        dims = ctx.axes
    elif hasattr(ctx, "axis"):
        dims = (ctx.axis,)
    else:  # a reduction of everything (median, dist)
        dims = None
    keepdim = getattr(ctx, "keepdim", False)
    terms = []
    for entries, tangent in pairs:
        product = entries * tangent
        if dims is None:
            terms.append(product.sum())
        else:
            terms.append(product.sum(dims, keepdim=keepdim) if dims else product)
    total = sum_tangents(*terms)
    return total if len(outputs) == 1 else (total,) + (None,) * (len(outputs) - 1)


auto_reduction = classmethod(_reduction)


def auto_reduction_in(*positions):
    """``auto_reduction`` counting only the tangents of the arguments at ``positions``: PyTorch's
    formula takes the others as constants (a loss's ``weight``), so their tangents add no term.
    A dual constant with a counted tangent would give the result a tangent that has a tangent
    (the formula multiplies by the dual constant): PyTorch refuses it, here too."""

    def reduction(cls, ctx, *tangents):
        counted = [t if i in positions else None for i, t in enumerate(tangents)]
        dual_constant = any(t is not None for i, t in enumerate(tangents) if i not in positions)
        if dual_constant and any(t is not None for t in counted):
            raise RuntimeError("Setting a forward grad that itself has a forward gradient at the same "
                               "level0 is not supported.")  # (one level at a time: always 0)
        return _reduction(cls, ctx, *counted)

    return classmethod(reduction)


def auto_linear(*positions):
    """The tangent formula of an op linear in its arguments at ``positions``: the op on their tangents."""

    def linear(cls, ctx, *tangents):
        args = list(ctx.primals)
        for i in positions:
            if i < len(args):  # (an optional argument may be left out)
                args[i] = zero_if_missing(args[i], tangents[i])
        return cls.apply(*args)

    return classmethod(linear)


def zero_if_missing(arg, tangent):
    """``tangent``, or a zero in its place: a zero tensor for a tensor, 0 for a number."""
    if tangent is not None:
        return tangent
    if isinstance(arg, _utils._Tensor):
        return arg.detach().new_zeros(arg.shape)
    return 0


def sum_tangents(*terms):
    """The sum of the terms that are not ``None`` (``None`` if all are): the product rule's
    ``da·b + a·db`` when only one input has a tangent."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    return total
