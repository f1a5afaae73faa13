"""View tracking: what an in-place op on a view must know about its base.

A view (``y = x.t()``, ``y = x[0]``) shares memory and version counter with
its base.  ``as_view``/``track_view`` link the two both ways; when an
in-place op gives the base a new ``grad_fn``, ``refresh_views`` remakes the
views' graph, as PyTorch regenerates a view's ``grad_fn``.  ``split``/``unbind``
outputs are views PyTorch forbids to modify in place (``multi_view``).
"""
import weakref

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import Function
from ..autograd._functions import utils


def as_view(base, out, remake):
    """Remember that ``out`` is a view of ``base`` that ``remake(base)`` makes again.

    An in-place op on ``out`` then rewrites ``base``'s graph too (PyTorch's view
    tracking).  Only a real view counts: it shares the base's version counter
    (``reshape`` of a non-contiguous tensor copies, and is not one).
    """
    if grad_mode.is_grad_enabled() and out._version_counter is base._version_counter:
        track_view(base, out, None, remake)
    return out


def track_view(base, view, idx, remake):
    """Link ``view`` to ``base`` both ways: the view knows how it was made (``base[idx]``
    or ``remake(base)``), the base knows its live views (weakly, so they can still die)."""
    view._view_of = (base, idx, remake)
    views = base.__dict__.get("_views")
    if views is None:
        views = base._views = weakref.WeakSet()
    views.add(view)


def refresh_views(base):
    """After an in-place op gave ``base`` a new ``grad_fn``, remake its views' graph.

    An older view shares the new values (same memory) and must share the new
    graph too: PyTorch regenerates a view's ``grad_fn`` when its base changed.
    Views of views are refreshed in turn.
    """
    views = base.__dict__.get("_views")
    if not views:
        return
    # split/unbind outputs from the highest down: output 0's error node is then the
    # newest, so backward raises its error, the one PyTorch raises (output 0 is used first).
    for view in sorted(views, key=lambda v: v.__dict__.get("_multi_view", ("", -1))[1], reverse=True):
        _, idx, remake = view._view_of
        if "_multi_view" in view.__dict__:  # PyTorch refuses such a view once its base changed
            fresh = _ModifiedMultiView.apply(view, multi_view_error(view, base_modified=True))
        else:
            fresh = base[idx] if remake is None else remake(base)
        view.grad_fn, view._output_nr, view._requires_grad = fresh.grad_fn, fresh._output_nr, fresh._requires_grad
        refresh_views(view)


def multi_view(base, outs, name, remake_all):
    """``split``/``unbind`` return several views: PyTorch forbids in-place ops on them
    (but each is still remade when its base changes)."""
    if grad_mode.is_grad_enabled():
        for nr, out in enumerate(outs):
            track_view(base, out, None, lambda b, nr=nr: remake_all(b)[nr])
            out._multi_view = (name, nr)
    return outs


def multi_view_error(view, base_modified=False):
    name, nr = view._multi_view
    what = "its base or another view of its base has been modified inplace" if base_modified \
        else "is being modified inplace"
    return (
        f"Output {nr} of {name} is a view and {what}. This view is the output of "
        "a function that returns multiple views. Such functions do not allow the output views to be "
        "modified inplace. You should replace the inplace operation by an out-of-place one."
    )


class _ModifiedMultiView(Function):
    """The graph of a split/unbind output whose base changed in place: its backward raises
    PyTorch's error (PyTorch raises it when the view is next used; here, at backward)."""

    _backward_name = "Error"

    @staticmethod
    def forward(ctx, view, message):
        ctx.message = message
        return view._data

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(ctx.message)


def in_base_order(values, base, remake):
    """``values`` (shaped like the view ``remake(base)``) rearranged into ``base``'s shape.

    Which base element each view element is: make the same view of the base's
    positions ``0 .. n-1``; sorting by position puts every value back in place.
    The rearrangement is an index op, so gradients flow through it.
    """
    with grad_mode.no_grad():
        positions = remake(utils._Tensor._make(np.arange(base._data.size).reshape(base._data.shape)))._data
    order = np.argsort(positions.reshape(-1), kind="stable")
    return values.reshape(-1)[utils._Tensor._make(order)].reshape(base._data.shape)
