"""View tracking: what an in-place op on a view must know about its base.

A view (``y = x.t()``, ``y = x[0]``, ``y = x.diagonal()``) shares memory and
version counter with its base.  ``as_view``/``track_view`` link the two both
ways: the view remembers its base (``_view_of``, PyTorch's ``._base``: always
the tensor that owns the memory, never another view) and the base its live
views.

Which base element each view element is, is read from memory, as PyTorch's
``as_strided`` does: ``positions_in_base`` compares the elements' addresses.
That one answer serves every kind of view:

* an in-place op on a view writes the new values into the base at those
  positions (``_inplace_on_view`` in ``inplace.py``: PyTorch's ``CopySlices``);
* when the base gets a new ``grad_fn``, ``refresh_views`` gives each view a
  new one that reads the base at those positions (PyTorch's
  ``AsStridedBackward0``); after a write that records nothing, a view's node
  is remade so when it is next read (``FOLLOW_BASE``).

``split``/``unbind`` outputs are views PyTorch forbids to modify in place (``multi_view``).
"""
import weakref

import numpy as np

from .. import backend
from ..autograd import forward_ad, grad_mode
from ..autograd.function import Function
from ..autograd._saved_tensor import _forward_name  # "Select" for SelectBackward0, as PyTorch's messages
from ..autograd._functions import indexing
from ..autograd._functions import shape as shape_fns


def as_view(base, out):
    """Remember that ``out`` is a view of ``base``; return ``out``.

    An in-place op on ``out`` then rewrites ``base``'s graph too (PyTorch's view
    tracking).  Only a real view counts: it shares the base's version counter
    (``reshape`` of a non-contiguous tensor copies, and is not one).
    """
    if out._version_counter is base._version_counter:
        track_view(base, out)
    return out


def track_view(base, view):
    """Link ``view`` to the tensor that owns its memory, both ways: the view knows
    its base, the base its live views (weakly, so they can still die).  A view made
    under ``no_grad`` is marked: PyTorch refuses to mix it with a graph later.  Its
    ``requires_grad`` is its base's, but it has no node and no gradient of its own
    (``_requires_grad_of_base``: what reaches it is dropped)."""
    multi = base.__dict__.get("_multi_view")
    if multi is not None:  # a view of a split/unbind output is refused in place as that output is
        view._multi_view = multi
    made_in_no_grad = not grad_mode.is_grad_enabled() or "_made_in_no_grad" in base.__dict__  # (or of such a view)
    forward_ad.note_view(base, view)  # (forward mode's base differs across make_dual)
    base = base.__dict__.get("_view_of", base)  # a view of a view is a view of the same base
    view._view_of = base
    view._view_version = base._version_counter[0]  # (a later write of the base: _follow_base_requires_grad)
    if made_in_no_grad:
        view._made_in_no_grad = True
        if base._requires_grad and view._grad_fn is None:  # PyTorch: requires_grad is the base's
            view._requires_grad = view._requires_grad_of_base = True
    if made_in_no_grad or multi is not None:
        _refuse_once_base_changes(view, base)
    elif view._grad_fn is not None and view._grad_fn._use_error is None:
        view._grad_fn._use_error = FOLLOW_BASE  # remade when read after a write of its base
    views = base.__dict__.get("_views")
    if views is None:
        views = base._views = weakref.WeakSet()
    views.add(view)


class _StaleViewCheck:
    """``Node._use_error`` of a view PyTorch refuses once its base was written in place (a split/unbind
    output, a view made under ``no_grad``), also when the write was not recorded (under ``no_grad``):
    the base's version when the view was made, compared when the view is used."""

    __slots__ = ("counter", "version")

    def __init__(self, base):
        self.counter, self.version = base._version_counter, base._version_counter[0]

    def __call__(self, view):
        return None if self.counter[0] == self.version else view_error(view, base_modified=True)


def stale_no_grad_view_error(view):
    """PyTorch's refusal of a view made under ``no_grad`` whose base requires grad and was written in
    place since (the view's own writes count: they are its base's), or None."""
    if "_made_in_no_grad" not in view.__dict__:
        return None
    base = view._view_of
    if base._requires_grad and view._view_version != base._version_counter[0]:
        return view_error(view, base_modified=True)
    return None


def _refuse_once_base_changes(view, base):
    if view._grad_fn is not None and view._grad_fn._use_error in (None, FOLLOW_BASE):
        view._grad_fn._use_error = _StaleViewCheck(base)


def _address(a):
    """Where an array's first element is in memory (NumPy or CuPy)."""
    interface = a.__array_interface__ if isinstance(a, np.ndarray) else a.__cuda_array_interface__
    return interface["data"][0]


def _element_offsets(a, start):
    """Each element's distance from ``start`` in memory, counted in elements (shaped like ``a``)."""
    offsets = np.full(a.shape, (_address(a) - start) // a.itemsize, dtype=np.int64)
    for dim, (size, stride) in enumerate(zip(a.shape, a.strides)):
        step = np.arange(size, dtype=np.int64) * (stride // a.itemsize)
        offsets += step.reshape((size,) + (1,) * (a.ndim - dim - 1))
    return offsets


def positions_in_base(view, base):
    """Which element of ``base`` (flat, C order) each element of ``view`` is; None if it is none.

    PyTorch describes every view by ``as_strided`` (sizes, strides, offset into
    the base's memory); here the same information is read from the two NumPy
    arrays: an element is known by its address.  None means that ``view`` no
    longer lies inside ``base`` (``base.data = other`` gave the base new memory).
    """
    start = _address(base._data)
    view_offsets = _element_offsets(view._data, start)
    if base._data.flags.c_contiguous:  # the usual base: an element's offset is its flat position
        inside = view_offsets.size == 0 or (view_offsets.min() >= 0 and view_offsets.max() < base._data.size)
        return view_offsets if inside else None
    base_offsets = _element_offsets(base._data, start).reshape(-1)
    order = np.argsort(base_offsets, kind="stable")
    found = np.searchsorted(base_offsets[order], view_offsets).clip(0, max(base_offsets.size - 1, 0))
    positions = order[found] if base_offsets.size else found
    if view_offsets.size and not np.array_equal(base_offsets[positions], view_offsets):
        return None
    return positions


def base_index(view, base):
    """``positions_in_base`` as an index into ``base`` (one integer array per dim): ``base[index]`` has
    the view's values and shape."""
    cached = view.__dict__.get("_base_index")  # (view array, base array, index): arrays keep their layout
    if cached is not None and cached[0] is view._data and cached[1] is base._data:
        return cached[2]
    if base._data.ndim == 0:
        index = _index_of_0d_base(view)
        view._base_index = (view._data, base._data, index)
        return index
    positions = positions_in_base(view, base)
    index = None
    if positions is not None:  # (computed on the CPU from shapes and strides; used where the base lives)
        device = backend.device_of(base._data)
        index = tuple(backend.to_device(i, device) for i in np.unravel_index(positions, base._data.shape))
    view._base_index = (view._data, base._data, index)
    return index


def _index_of_0d_base(view):
    """``base_index`` of a view of a 0-d base: its one element, as ``base[..., None]`` (shape (1,)),
    ``base[..., None, None]`` (shape (1, 1))...  An ``expand`` of it (several elements) is that element
    repeated: position 0 of the base seen as a (1,) array, once per element of the view (``IndexPut``
    indexes a 0-d array so); ``graph_from_base`` expands the base instead."""
    if view._data.size == 0:
        return None  # nothing to follow
    if view._data.size > 1:
        return (np.zeros(view._data.shape, dtype=np.intp),)
    return (Ellipsis,) + (None,) * view._data.ndim


class AsStrided(indexing.Index):
    """A view's graph made again from its base's new graph: ``base[base_index]``.

    PyTorch regenerates the ``grad_fn`` of a view whose base changed in place as
    ``as_strided`` of the base; the gradient is the index gradient (repeated
    positions, as in an ``expand`` view, add up)."""

    _backward_name = "AsStridedBackward0"


class _AsStridedOf0d(shape_fns.Expand):
    """``AsStrided`` of a 0-d base: a 0-d array has no dim to index its one element repeatedly, so
    the view is the base expanded (the gradient adds up over the repeats)."""

    _backward_name = "AsStridedBackward0"


class _Unread:
    """``Node._use_error`` of the node ``refresh_views`` remade for a view: PyTorch remakes a view's
    ``grad_fn`` only when something reads it (``v.grad_fn``, ``v.is_leaf``, ``repr``, an op that records
    ``v``), from its base's graph at that time.  Until then its in-place check reads the raw node: empty
    for a view that had none (``was_empty``: a leaf that requires grad, ``is_raw_leaf``), and a base
    detached in place meanwhile leaves nothing to remake it from (``follow_detached_base``).  The first
    read (``use_error``) marks the node read at the base's version and lets the use go on.  A view that
    retains its gradient (``retain_grad()``) keeps it on its old node until then (``retained``: that node
    and the view's output number there), as PyTorch moves the hook only when it remakes the node."""

    __slots__ = ("was_empty", "retained")

    def __init__(self, was_empty, retained=None):
        self.was_empty, self.retained = was_empty, retained

    def __call__(self, view):
        view._grad_fn._use_error = FOLLOW_BASE
        base = view.__dict__.get("_view_of")  # (gone when the base got other memory: no longer a view)
        if base is not None:
            view._view_version = base._version_counter[0]  # PyTorch's attr_version of the view
        if self.retained is not None:
            move_retained_grad(view, *self.retained)
        return None


def _retained_node(view):
    """Where ``view``'s ``retain_grad()`` is: its node, or the one an unread node keeps it on; None when
    it retains nothing."""
    if not view.__dict__.get("_retains_grad") or view._grad_fn is None:
        return None
    unread = view._grad_fn._use_error
    if type(unread) is _Unread and unread.retained is not None:
        return unread.retained
    return view._grad_fn, view._output_nr


def is_raw_leaf(t):
    """Is ``t`` a leaf to PyTorch's in-place check (no node, or a view's remade node not read yet)?"""
    fn = t._grad_fn
    return fn is None or (type(fn._use_error) is _Unread and fn._use_error.was_empty)


def read_graph(t):
    """Read the node of ``t`` as PyTorch's ``grad_fn()`` does: a view's node is marked read (``_Unread``), or
    remade when its base was written since (``_FollowBase``)."""
    fn = t._grad_fn
    if fn is not None and type(fn._use_error) in (_Unread, _FollowBase):
        fn._use_error(t)


class _FollowBase:
    """``Node._use_error`` of a view's node (``FOLLOW_BASE``, one for all): PyTorch's ``grad_fn()`` of a
    view compares the version its node was made at (``attr_version``, here ``_view_version``) with its
    base's, and when the base was written since remakes the node from the base's graph at that time
    (``AsStridedBackward0``, ``remake_from_base``).  A write that records a graph remakes the nodes at once
    (``refresh_views``); this catches the writes that record nothing (under ``no_grad``, through
    ``detach()``, ``increment_version``) and a base detached in place since (``detach_()``)."""

    __slots__ = ()

    def __call__(self, view):
        base = view.__dict__.get("_view_of")  # (gone when the base got other memory: no longer a view)
        if base is not None and view._view_version != base._version_counter[0]:
            remake_from_base(view, base)
        return None


FOLLOW_BASE = _FollowBase()


def follow_detached_base(view, base):
    """``base.detach_()``: a view whose node was remade from the base's graph but not read yet (``_Unread``)
    gets it from the detached base instead (``remake_from_base``), as PyTorch makes it only when read; the
    others are remade when read, once the base is written (``_FollowBase``)."""
    fn = view._grad_fn
    if fn is not None and type(fn._use_error) is _Unread:
        remake_from_base(view, base)


def remake_from_base(view, base):
    """The node PyTorch remakes for ``view`` from ``base``'s graph now: ``AsStridedBackward0`` to the base's
    node (or gradient accumulator) when the base requires grad, else one whose gradient goes nowhere (the
    view still requires grad); none for a view that had none.  A split/unbind output gets PyTorch's refusal
    instead (``view_error``)."""
    message = view_error(view, base_modified=True)
    if message is not None:
        with grad_mode.enable_grad():
            set_graph(view, _RefusedView.apply(base, message))
        return
    if base._requires_grad:
        source = base
    elif is_raw_leaf(view):
        view._grad_fn, view._requires_grad = None, False
        return
    else:
        source = type(base)._make(base._data, True)  # requires grad, its gradient dropped: PyTorch's invalid edge
        source._requires_grad_of_base = True
    with grad_mode.enable_grad():  # (a read under no_grad remakes it too)
        fresh = graph_from_base(view, source)
    if fresh is not None:
        retained = _retained_node(view)  # (an unread node keeps it on the node before)
        set_graph(view, fresh, move_retained=False)
        if retained is not None:
            move_retained_grad(view, *retained)
        fresh._grad_fn._use_error = FOLLOW_BASE
        view._view_version = base._version_counter[0]


def refresh_views(base):
    """After an in-place op gave ``base`` a new ``grad_fn``, remake its views' graph.

    An older view shares the new values (same memory) and must share the new
    graph too: PyTorch regenerates a view's ``grad_fn`` when its base changed
    (when something reads it: a view that had no node keeps a leaf to the
    in-place check until then, ``_Unread``).
    """
    views = base.__dict__.get("_views")
    if not views:
        return
    if forward_ad._state.active:  # the graph only: the views' tangents are their own (forward mode)
        return forward_ad.without_tangents(refresh_views, base)
    # split/unbind outputs from the highest down: output 0's error node is then the
    # newest, so backward raises its error, the one PyTorch raises (output 0 is used first).
    for view in sorted(views, key=lambda v: v.__dict__.get("_multi_view", ("", -1))[1], reverse=True):
        if "_requires_grad_of_base" in view.__dict__ and "_made_in_no_grad" in view.__dict__:
            continue  # no graph to remake: its use is refused (function.refuse_stale_no_grad_view)
        message = view_error(view, base_modified=True)
        if message is not None:  # PyTorch refuses such a view once its base changed
            if view._grad_fn is not None and type(view._grad_fn._use_error) is str:
                continue  # refused already
            fresh = _RefusedView.apply(base, message)
        else:
            fresh = graph_from_base(view, base)
            if fresh is None:  # no longer a view of ``base`` (or empty): nothing to follow
                continue  # (not views.discard(view): a WeakSet compares tensors with ==, elementwise)
            if fresh._grad_fn is not None:  # made when something reads it (or not at all, as PyTorch)
                fresh._grad_fn._use_error = _Unread(is_raw_leaf(view), _retained_node(view))
                set_graph(view, fresh, move_retained=False)  # (retain_grad() moves when it is read)
                continue
        set_graph(view, fresh)


def graph_from_base(view, base):
    """``view``'s values read from ``base`` in the graph (``AsStridedBackward0``); None if ``view`` no
    longer lies in ``base``'s memory."""
    if base._data.ndim == 0 and view._data.size > 1:  # an expand() of a 0-d base: its one element, repeated
        return _AsStridedOf0d.apply(base, view._data.shape)
    index = base_index(view, base)
    return None if index is None else AsStrided.apply(base, index)


def set_graph(t, fresh, move_retained=True):
    """``t`` now has the graph of ``fresh`` (same values): its ``grad_fn``, output number and
    ``requires_grad``.  ``retain_grad()`` follows the new node, as in PyTorch (not after an in-place
    view op such as ``unsqueeze_``: ``move_retained=False``, ``.grad`` keeps the old shape); hooks
    registered on the old value stay with the old node."""
    old_node, old_nr = t._grad_fn, t._output_nr
    t._grad_fn, t._output_nr, t._requires_grad = fresh._grad_fn, fresh._output_nr, fresh._requires_grad
    if move_retained and old_node is not None:
        move_retained_grad(t, old_node, old_nr)


def move_retained_grad(t, old_node, old_nr):
    """``retain_grad()`` of ``t`` moves from output ``old_nr`` of ``old_node`` to ``t``'s node now (PyTorch's
    ``update_tensor_hooks_on_new_gradfn``)."""
    if t.__dict__.get("_retains_grad") and t._grad_fn is not None and old_node._retained:
        old_node._retained.pop(old_nr, None)
        t._grad_fn._retain(t._output_nr, t)


def multi_view(base, outs, name):
    """``split``/``unbind`` return several views: PyTorch forbids in-place ops on them
    (and refuses each one's later use once its base changed)."""
    for nr, out in enumerate(outs):
        track_view(base, out)
        out._multi_view = (name, nr, base._requires_grad)
        _refuse_once_base_changes(out, out._view_of)
    return outs


def view_error(view, base_modified=False):
    """PyTorch's refusal of an in-place op on ``view`` (or, ``base_modified``, of using ``view`` after
    an in-place op on its base), or None when such a view may be written.

    Refused: an output of ``split``/``unbind`` (a function that returns several
    views), and a view made under ``no_grad`` written with grad mode on.
    """
    fn = view._grad_fn
    if fn is not None and type(fn._use_error) is str:  # refused already (refresh_views): its own node is gone
        if base_modified:
            return fn._use_error
        fn = None
    what = "its base or another view of its base has been modified inplace" if base_modified \
        else "is being modified inplace"
    no_grad = f"A view was created in no_grad mode and {what} with grad mode enabled"
    if "_made_in_no_grad" in view.__dict__:
        if fn is not None:  # made with grad mode on, of a view made under no_grad
            no_grad = (f"Output {view._output_nr} of {_forward_name(fn)} is a view of a view which was "
                       f"created in no_grad mode and {what} with grad mode enabled")
        return (f"{no_grad}. Given that this use case is ambiguous and error-prone, it is forbidden. You can "
                "clarify your code by moving both the view and the inplace either both inside the no_grad block "
                "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
                "tracked).")
    if "_multi_view" not in view.__dict__:
        return None
    name, nr, made_with_grad = view._multi_view
    if fn is not None:  # PyTorch names the view's own op: "Output 0 of Select" for x.unbind()[1][0]
        name, nr = _forward_name(fn), view._output_nr
    # PyTorch's words for a view of a tensor that did not require grad when the view was made
    which = f"Output {nr} of {name} is a view and {what}" if made_with_grad else no_grad
    return (
        f"{which}. This view is the output of "
        "a function that returns multiple views. Such functions do not allow the output views to be "
        "modified inplace. You should replace the inplace operation by an out-of-place one."
    )


class _RefusedView(Function):
    """The graph of a view PyTorch refuses once its base changed in place (``view_error``): using
    it in an op that records a graph raises PyTorch's error (``Node._use_error``), and so does
    its backward."""

    _backward_name = "Error"

    @staticmethod
    def forward(ctx, base, message):  # only the node counts: the view keeps its own values
        ctx.message = message
        ctx._use_error = message
        return base._data

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(ctx.message)


def has_internal_overlap(array):
    """Do several elements of ``array`` share one memory location?  PyTorch's test: a stride 0
    along a dim of size > 1 (an ``expand``), in a tensor that is not empty.  Every in-place write asks:
    the usual array has no stride 0 at all, which ``0 in strides`` tells at once."""
    strides = array.strides
    return 0 in strides and array.size > 1 and any(s == 0 and n > 1 for s, n in zip(strides, array.shape))


def seen_alike(a, b):
    """Are NumPy arrays ``a`` and ``b`` the same memory seen the same way (first element, shape and
    strides: PyTorch's full overlap, ``MemOverlapStatus::Full``)?"""
    return a.shape == b.shape and a.strides == b.strides and _address(a) == _address(b)


def check_no_overlap(target, source, full_ok=True):
    """Refuse to write ``source`` into ``target`` when they share memory (PyTorch's check).

    The result would depend on the order the elements are written in.  The same
    elements exactly (``t.add_(t)``, ``t[0:2] = t[0:2]``) are fine for ordinary
    in-place ops (``full_ok``), not for indexed writes (``t[[0, 1]] = t[:2]``).
    PyTorch checks only dense tensors and leaves the other overlapping cases to
    memory order; those are refused here too.
    """
    a, b = target._data, source._data
    if source is target and not full_ok:  # PyTorch: a tensor and itself overlap fully, even when empty
        raise RuntimeError(OVERLAP_ERROR)
    if type(a) is not np.ndarray or type(b) is not np.ndarray or not np.may_share_memory(a, b):
        return
    if (full_ok and seen_alike(a, b)) or not np.shares_memory(a, b):
        return
    raise RuntimeError(OVERLAP_ERROR)


OVERLAP_ERROR = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
    "single memory location. Please clone() the tensor before performing the operation."
)
