"""``torch.autograd.forward_ad``: forward-mode AD with dual tensors.

Reverse mode (``backward``) sends one gradient from an output back to every
input: a row of the Jacobian per pass, J^T v.  Forward mode sends one
*tangent* from the inputs forward to every output, alongside the values: a
column of the Jacobian per pass, J u, with no graph kept and no backward pass::

    import edutorch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)    # x carries (value, direction)
        y = f(x)                               # every op pushes the tangent along
        jvp = fwAD.unpack_dual(y).tangent      # J(primal) @ tangent

How a tangent flows (``function.py``, ``_apply``): while a dual level is open
and an input of an op carries a tangent, ``Function.apply`` runs the op's
``forward`` as always, then its tangent formula, the static method ``jvp``
written beside ``backward`` in the op's file, and attaches what it returns to
the outputs (:func:`push_tangents`).  Without a dual level the op pays one
flag read.  The formulas are ordinary Tensor code run with forward AD off
(a tangent has no tangent), in the caller's grad mode, so reverse mode can
differentiate a tangent (``jacrev(jacfwd(f))``) and forward mode a gradient
(``jacfwd(jacrev(f))``, which is how ``torch.func.hessian`` works).

PyTorch supports a single level at a time ("Nested forward mode AD is not
supported at the moment"), and so does this module.  A tensor's tangent is
kept in its ``_fw_grad`` attribute (class default ``None``) and dropped when
the level is exited.
"""
import collections
import functools
import weakref

import numpy as np

from .. import backend
from . import function as _function

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


class _State:
    """The open dual level (``None``: none) and whether ops push tangents now."""

    level = None
    # True while a level is open, False outside it and while a tangent formula runs:
    # the one flag ``Function.apply`` reads
    active = False
    duals = {}  # id -> weak reference, of every live object given a tangent at this level


_state = _State()


class UnpackedDualTensor(collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """What :func:`unpack_dual` returns: the ``primal`` value (a view without tangent) and
    its ``tangent`` (``None`` if it has none at this level)."""


# -- levels -------------------------------------------------------------------------------
def enter_dual_level():
    """Open a forward AD level and return its number (0: PyTorch allows one at a time)."""
    if _state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _state.level = 0
    _state.active = True
    return 0


def exit_dual_level(*, level=None):
    """Close the level: every tangent made inside it is dropped."""
    current = -1 if _state.level is None else _state.level
    if level is None:
        level = current
    if level != current:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    for ref in list(_state.duals.values()):
        holder = ref()
        if holder is not None:
            holder._fw_grad = None
    _state.duals = {}
    _state.level = None
    _state.active = False


class dual_level:
    """``with dual_level():`` opens a forward AD level and closes it on the way out.

    Also a decorator: the function runs inside a level.
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc_info):
        exit_dual_level()

    def __call__(self, fn):
        @functools.wraps(fn)
        def inside_a_level(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        return inside_a_level


def _check_level(level, op):
    """PyTorch's error for a level other than the open one."""
    if level is not None and level != _state.level:
        raise RuntimeError(f"Invalid level given to {op}")


# -- dual tensors --------------------------------------------------------------------------
def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` that carries ``tangent`` as its forward gradient.

    ``tangent`` must have ``tensor``'s shape; it is kept as it is (it may itself
    require grad), or copied into a tensor laid out like ``tensor`` (:func:`in_layout_of`).
    """
    if level is None:
        level = -1 if _state.level is None else _state.level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not tensor.is_floating_point():
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.is_floating_point():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    _check_level(level, "_make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
            f"level {level} is not supported."
        )
    if tangent_of(tangent) is not None:  # (PyTorch's words, "level0" included)
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{level} is not "
                           "supported.")
    if tangent.shape != tensor.shape:
        raise _size_error(tensor, tangent)
    tangent = in_layout_of(tangent, tensor, same_storage=True)
    dual = without_tangents(tensor.view_as, tensor)  # a view: its ._base is ``tensor``
    dual._fw_view_of = None  # ... but its tangent is its own (forward_base)
    set_tangent(dual, tangent)
    return dual


def in_layout_of(tangent, primal, same_storage=False):
    """``tangent`` laid out in memory as ``primal`` is: itself when its strides are the primal's,
    else a copy with them (PyTorch's ``set_fw_grad`` keeps every tangent in its primal's layout:
    ``new_empty_strided`` then ``copy_``, recorded when the tangent requires grad), so that a view
    op allowed on the primal (``view``, ``flatten`` as a view) is allowed on its tangent too.
    ``same_storage`` (``make_dual``): a copy also when the two do not sit alike in memories of one
    size (PyTorch's ``has_same_meta``: storage offset and size), so the tangent of a dual of a view
    is not the caller's tensor."""
    t, p = tangent._data, primal._data
    if type(t) is not np.ndarray or type(p) is not np.ndarray or t.shape != p.shape or 0 in p.shape:
        return tangent
    if all(n == 1 or a == b for n, a, b in zip(p.shape, t.strides, p.strides)) or min(p.strides, default=0) < 0:
        if same_storage and _place(t) != _place(p):
            return without_tangents(tangent.clone)  # (laid out as it is: as the primal)
        return tangent
    steps = [s // p.itemsize for s in p.strides]
    memory = np.zeros(1 + sum((n - 1) * s for n, s in zip(p.shape, steps)), dtype=t.dtype)
    like = _function._Tensor._make(np.lib.stride_tricks.as_strided(memory, p.shape, p.strides))
    return without_tangents(like.copy_, tangent)  # (an expand's repeats: PyTorch's overlap error)


def _place(a):
    """Where the array ``a`` sits in the memory it views: (offset in bytes, that memory's size)."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return a.__array_interface__["data"][0] - root.__array_interface__["data"][0], root.nbytes


def _size_error(tensor, tangent):
    return RuntimeError(
        "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
        f"not supported. Tensor is of size {list(tensor.shape)} while the given forward gradient is of size "
        f"{list(tangent.shape)}."
    )


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor``: the primal is a view of it without tangent."""
    if level is None:
        level = -1 if _state.level is None else _state.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = tangent_of(tensor)
    if tangent is not None:
        _check_level(level, "_fw_primal")
    primal = without_tangents(tensor.view_as, tensor)
    primal._fw_view_of = None  # not a view for forward mode: never gets a tangent from ``tensor``
    return UnpackedDualTensor(primal, tangent)


# -- the tangent of a tensor ---------------------------------------------------------------
def tangent_of(tensor):
    """The tangent ``tensor`` carries at the open level, or ``None``.

    A view whose base got a tangent after the view was made reads its tangent
    as the same view of the base's tangent (PyTorch's view of a forward grad).
    """
    tangent = tensor._fw_grad
    if tangent is None and _state.level is not None:
        base = forward_base(tensor)
        if base is not None and base._fw_grad is not None:
            tangent = view_of_tangent(tensor, base)
            if tangent is not None:
                set_tangent(tensor, tangent)
    return tangent


def forward_base(tensor):
    """The tensor whose tangent the tangent of the view ``tensor`` is a view of, or None.

    PyTorch keeps two bases for a view: ``._base`` (the tensor that owns the memory,
    for backward) and a forward one.  They are the same, except that the outputs of
    ``make_dual`` and ``unpack_dual`` are views of their input for backward only:
    their tangent is their own (a write into the dual gives its base no tangent, a
    tangent the base gets later is not theirs), and their own views are forward views
    of them.  ``_fw_view_of`` records that (None: not a forward view); without it the
    forward base is ``._base``.
    """
    d = tensor.__dict__
    return d["_fw_view_of"] if "_fw_view_of" in d else d.get("_view_of")


def note_view(base, view):
    """``view`` was just made of ``base``: a view of a dual (or of a view of one) has the
    dual as its forward base (``views.track_view`` calls this)."""
    if "_fw_view_of" in base.__dict__:
        fw = base._fw_view_of
        view._fw_view_of = base if fw is None else fw


def set_tangent(holder, tangent):
    """Give ``holder`` (a tensor, or a saved output) ``tangent`` until the level closes."""
    holder._fw_grad = tangent
    key, duals = id(holder), _state.duals

    def forget(ref):  # the holder died: its entry goes (a long level does not pile up entries)
        if duals.get(key) is ref:
            del duals[key]

    duals[key] = weakref.ref(holder, forget)


def view_of_tangent(view, base):
    """The tangent of ``view`` as the same view of ``base``'s tangent: the elements of
    the tangent at the view's positions in ``base``, sharing its memory.

    Found as NumPy does, by the view's offset and strides in ``base``'s memory, which a
    tangent laid out like ``base`` (``in_layout_of``) shares; else ``None``.
    """
    tangent = base._fw_grad
    b, v, t = base._data, view._data, tangent._data
    if type(t) is not np.ndarray or type(b) is not np.ndarray or t.dtype != b.dtype or t.shape != b.shape \
            or any(n > 1 and p != q for n, p, q in zip(b.shape, b.strides, t.strides)):
        return None
    start = _element_at(b, v.__array_interface__["data"][0] - b.__array_interface__["data"][0])
    if start is None:
        return None
    array = np.lib.stride_tricks.as_strided(t[start], v.shape, v.strides)
    return _function._Tensor._make(array, tangent._requires_grad, None, 0, tangent._version_counter)


def _element_at(a, offset):
    """Slices of ``a`` that start at the element ``offset`` bytes after its first one (its index
    found dim by dim, largest stride first), or None if no element is there."""
    index = [0] * a.ndim
    for d in sorted(range(a.ndim), key=lambda d: -a.strides[d]):
        n, stride = a.shape[d], a.strides[d]
        if n > 1 and stride > 0:
            index[d] = min(offset // stride, n - 1)
            offset -= index[d] * stride
    if offset != 0 or any(s < 0 for s in a.strides):
        return None
    return tuple(slice(i, None) for i in index) or ...  # (a 0-d array: ``t[...]``, a view, not ``t[()]``)


def without_tangents(fn, *args):
    """``fn(*args)`` with forward AD off: a tangent formula, an op's forward, or an op on a primal."""
    was = _state.active
    _state.active = False
    try:
        return fn(*args)
    finally:
        _state.active = was


# -- what Function.apply calls while a level is open ---------------------------------------
def input_tangents(args, kwargs):
    """The tangent of each argument of an op (``None`` for a non-tensor or a tensor without);
    ``None`` when no argument has one, so the op runs as it does outside forward AD.

    Tangent formulas take positional arguments (``Function.apply`` binds a custom
    Function's keywords to their places, as PyTorch's does): a dual tensor still given
    by keyword (a keyword-only parameter) is refused rather than silently given no tangent."""
    Tensor = _function._Tensor
    for value in kwargs.values():
        if isinstance(value, Tensor) and tangent_of(value) is not None:
            raise NotImplementedError("forward AD: a dual tensor given as a keyword argument to an op")
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    for t in tangents:
        if t is not None:
            return tangents
    return None


def _check_no_tangent_of_tangent(tangents):
    """PyTorch refuses a tangent that has a tangent itself at the level (written in place with a
    dual: ``t = unpack_dual(x).tangent; t.mul_(y)`` with ``y`` dual): the op's formula would give
    its output such a tangent (not one whose formula is zeros, ``_zero_tangent``: floor, sign)."""
    for t in tangents:
        if t is not None and tangent_of(t) is not None:
            raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same "
                               f"level{_state.level} is not supported.")


def push_tangents(cls, ctx, args, results, tangents):
    """Run ``cls.jvp`` (the op's tangent formula) and give each output its tangent."""
    formula = cls.jvp
    if formula is _function.Function.jvp and cls._backward_name is not None:
        raise NotImplementedError(unsupported_message(cls))
    if not getattr(cls, "_zero_tangent", False):
        _check_no_tangent_of_tangent(tangents)
    custom = cls._backward_name is None
    if custom:  # PyTorch gives a custom jvp zeros for a tensor input without tangent
        tangents = [_zeros_if_missing(a, t) for a, t in zip(args, tangents)]
    else:
        ctx.primals, ctx.result = args, results
    ctx._in_jvp = custom  # a custom jvp reads what forward gave save_for_forward as ctx.saved_tensors
    try:
        out = without_tangents(formula, ctx, *tangents)
    finally:
        if custom:
            ctx._in_jvp = False
        else:  # (the node must not keep its inputs and outputs alive)
            del ctx.primals, ctx.result
    _attach(results, out, ctx, custom, _inputs_with_tangents(args, tangents))


def _zeros_if_missing(arg, tangent):
    if tangent is None and isinstance(arg, _function._Tensor):
        return arg.detach().new_zeros(arg.shape)
    return tangent


def unsupported_message(cls):
    """PyTorch's refusal of forward AD for an op without a tangent formula."""
    from ..profiler._names import op_name

    name = op_name(cls).replace("aten::", "")
    return (
        f"Trying to use forward AD with {name} that does not support it because it has not been "
        "implemented yet.\nPlease file an issue to PyTorch at "
        "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
        "prioritize its implementation or submit a PR adding the implementation to derivatives.yaml"
    )


def _inputs_with_tangents(args, tangents):
    """(input, its tangent) of each argument that has a tangent."""
    return [(a, t) for a, t in zip(args, tangents) if t is not None]


def _repeats(a):
    """Do elements of the array ``a`` share memory (a stride 0 along a dim of more than one)?"""
    return any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides))


def _own_tangent(out, tangent, inputs):
    """``tangent`` for the output ``out``, a copy if it shares memory with an input's tangent
    while ``out`` is not a view of that input (a formula may return an input's tangent itself:
    ``cumprod`` of a 0-d tensor): an in-place op on ``out`` writes its tangent, and must not
    write the input's (PyTorch's tangents of different tensors are different tensors)."""
    t = tangent._data
    for arg, other in inputs:
        if arg._version_counter is not out._version_counter and \
                backend.get_array_module(t).may_share_memory(t, other._data):
            return without_tangents(tangent.clone)
    return tangent


def _attach(results, tangents, ctx, custom, inputs=()):
    """Give each floating output its tangent (broadcast to its shape); a tangent for a saved
    output goes to the saved copy too, so that a backward run under forward AD sees it."""
    Tensor = _function._Tensor
    if not isinstance(results, tuple):
        results, tangents = (results,), (tangents,)
    elif not isinstance(tangents, tuple):
        tangents = tuple(tangents) if isinstance(tangents, list) else (tangents,)
    if len(tangents) != len(results):
        raise RuntimeError(
            f"Function's jvp returned an invalid number of forward gradients (expected {len(results)} but "
            f"got {len(tangents)})"
        )
    for out, tangent in zip(results, tangents):
        if tangent is None or not isinstance(out, Tensor) or not out.is_floating_point():
            continue
        if tangent.shape != out.shape:
            if custom:  # a built-in formula may leave a broadcast to this one place; a user's may not
                raise _size_error(out, tangent)
            tangent = without_tangents(tangent.expand, out.shape).contiguous()
        tangent = _own_tangent(out, tangent, inputs)
        if not _repeats(out._data):  # (a broadcast result: its tangent is not copied into repeated memory)
            tangent = in_layout_of(tangent, out)
        _set_output_tangent(out, tangent)
    for saved in ctx._for_backward if isinstance(ctx, _function.Node) else ():
        if getattr(saved, "is_output", False):
            out = results[saved.output_nr]
            if out is not None and out._fw_grad is not None:
                set_tangent(saved, out._fw_grad)


def _set_output_tangent(out, tangent):
    """An output of an in-place op keeps its tangent tensor and takes the new values into it
    (views of it see them); any other output gets ``tangent`` itself."""
    old = out._fw_grad
    if old is not None and old is not tangent:
        without_tangents(old.copy_, tangent)
    else:
        set_tangent(out, tangent)


def view_tangent_in_place(tensor, tangent):
    """After an in-place view op on ``tensor`` (``unsqueeze_``, ``t_``): its tangent tensor becomes
    ``tangent``, the same view of itself, in place (PyTorch runs the op on the tangent too, so a
    tangent read before, ``unpack_dual(x).tangent``, takes the new shape)."""
    old = tensor._fw_grad
    if old is None or old._requires_grad:  # (one with a graph of its own: a new tensor)
        set_tangent(tensor, tangent)
    else:
        old._data = tangent._data
        old._version_counter[0] += 1


def with_tangent_of(tensor, source):
    """``source`` (the tensor an in-place op reads ``tensor``'s old values from) with ``tensor``'s tangent."""
    tangent = tangent_of(tensor)
    if tangent is not None:
        source._fw_grad = tangent  # (a temporary: it dies with the op)
    return source


def copy_tangent_in_place(target, result, write_repeated):
    """After ``target.op_(...)``, computed out of place as ``result``: ``target``'s tangent
    becomes ``result``'s, written into the tangent it has (PyTorch updates a forward grad in
    place, so the tangents of its views and of its base follow).  A view whose base had no
    tangent gives the base a zero one first, as PyTorch does.  A tangent whose elements repeat
    (of an ``expand``) is written as the op wrote the values: ``write_repeated(old, new)``."""
    tangent = result._fw_grad
    old = tangent_of(target)
    base = forward_base(target)
    if old is None and base is not None and tangent_of(base) is None:
        xp = backend.get_array_module(base._data)
        set_tangent(base, _function._Tensor._make(xp.zeros_like(base._data)))
        old = tangent_of(target)
    if old is None:
        set_tangent(target, tangent)
    elif old is not tangent and _repeats(old._data):
        write_repeated(old, tangent)  # (PyTorch: the op run on the tangent, e.g. ``self_t[idx].fill_(0)``)
        old._version_counter[0] += 1
    elif old is not tangent:
        without_tangents(old.copy_, tangent)
