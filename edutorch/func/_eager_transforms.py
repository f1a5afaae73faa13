"""``torch.func``'s reverse-mode transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``, ``hessian``.

Each takes a function and returns a function (``grad(f)(x)`` is df/dx), so
they compose: ``grad(grad(f))``, ``vmap(grad(f))``, ``jacrev(jacrev(f))``.

How they work here: the transform gives ``f`` its own copies of the inputs
that require grad (``_track``), runs ``f`` with grad mode on, and asks
``torch.autograd.grad`` for the gradient, always with ``create_graph=True``
so that an enclosing transform can differentiate the result again.  A
result is then handed back detached unless its graph reaches a tensor that
requires grad *outside* this transform (an enclosing ``grad``'s input, a
model parameter closed over by ``f``), which is what PyTorch's levels give:
``grad(f)(x)`` for a plain ``x`` does not require grad, ``grad(grad(f))``
still works.
"""
import functools

from .. import autograd
from .._creation import zeros_like
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import AccumulateGrad
from ._pytree import LEAF, tree_flatten, tree_map, tree_unflatten
from ._vmap import late_bound, levels_of, _mark, transform_running, vmap


# -- argnums ------------------------------------------------------------------------
def _check_argnums(argnums, n_args):
    """PyTorch's checks of ``argnums`` (an int or a non-empty tuple of distinct ints)."""
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        for a in argnums:
            if not isinstance(a, int):
                raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    elif not isinstance(argnums, int):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in argnums if isinstance(argnums, tuple) else (argnums,):
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")


def _replace_args(args, argnums, new):
    """``args`` with the ``argnums`` positions replaced by ``new`` (a tuple when argnums is)."""
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new
    else:
        for a, value in zip(argnums, new):
            args[a] = value
    return tuple(args)


# -- giving f inputs of its own, and handing results back -------------------------------
def _track(t):
    """A copy of input ``t`` that requires grad, for this transform's own gradient.

    If ``t`` already requires grad (an enclosing transform tracks it), the copy
    is a view of it, so the graph stays connected to the outside.
    """
    if not isinstance(t, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    with grad_mode.enable_grad():
        tracked = t.view_as(t) if t.requires_grad else t.detach().requires_grad_()
    return _mark(tracked, levels_of(t))


def _reaches_outside(t, own):
    """Does ``t``'s graph reach a tensor requiring grad other than the transform's ``own`` inputs?"""
    if not isinstance(t, Tensor) or not t.requires_grad:
        return False
    if t.grad_fn is None:
        return not any(t is o for o in own)
    own_ids = {id(o) for o in own}
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in own_ids:
                return True
            continue
        stack.extend(fn for fn, _ in node.next_functions)
    return False


def _hand_back(tree, own):
    """Detach each tensor of ``tree`` whose graph only reaches this transform's inputs."""
    def lift(t):
        if not isinstance(t, Tensor) or _reaches_outside(t, own):
            return t
        return _mark(t.detach(), levels_of(t))
    return tree_map(lift, tree)


def _gradients(outputs, inputs, cotangents, retain_graph=True):
    """d(outputs)/d(inputs) weighted by ``cotangents``; zeros where an input was not used."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [zeros_like(t) for t in inputs]
    with grad_mode.enable_grad():
        grads = autograd.grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                              retain_graph=retain_graph, create_graph=True, allow_unused=True)
    return [zeros_like(t) if g is None else g for t, g in zip(inputs, grads)]


def _split_aux(result, has_aux, api):
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return result


# -- grad and grad_and_value ------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """``torch.func.grad_and_value``: ``(grad, value)`` of a function returning a scalar tensor.

    ``argnums`` picks the differentiated arguments (an int, or a tuple giving a
    tuple of gradients); each may be a nest of tensors.  With ``has_aux=True``
    ``func`` returns ``(value, aux)`` and the result is ``(grad, (value, aux))``.
    """
    api = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        chosen = args[argnums] if isinstance(argnums, int) else tuple(args[a] for a in argnums)
        leaves, spec = tree_flatten(chosen)
        tracked = [_track(t) for t in leaves]
        with grad_mode.enable_grad(), transform_running():
            result = late_bound(func)(*_replace_args(args, argnums, tree_unflatten(tracked, spec)), **kwargs)
        output, aux = _split_aux(result, has_aux, api)
        if not isinstance(output, Tensor):
            raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                               f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        from .._creation import ones_like

        grads = _gradients([output], tracked, [ones_like(output)], retain_graph=True)
        own = tracked
        gradient = _hand_back(tree_unflatten(grads, spec), own)
        value = _hand_back(output, own)
        return (gradient, (value, _hand_back(aux, own))) if has_aux else (gradient, value)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``torch.func.grad``: the gradient of ``func`` (which returns a scalar tensor) w.r.t. ``argnums``.

    ``grad(f)(x)`` equals ``torch.autograd.grad(f(x), x)[0]``; with ``has_aux=True``
    the result is ``(grad, aux)``.
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = gv(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


# -- vjp ------------------------------------------------------------------------------
def _pprint(spec):
    """A nest's structure as PyTorch prints it: leaves as ``*`` (``(*, *)``, ``{'a': *}``)."""
    class Star:
        def __repr__(self):
            return "*"
    return repr(tree_unflatten([Star()] * spec.num_leaves, spec)) if spec != LEAF else "*"


def vjp(func, *primals, has_aux=False):
    """``torch.func.vjp``: ``(func(*primals), vjp_fn)``; ``vjp_fn(v)`` is v^T J, one entry per primal.

    ``v`` has the structure of ``func``'s output; ``vjp_fn`` may be called many
    times (the graph is kept).  With ``has_aux=True``: ``(output, vjp_fn, aux)``.
    """
    api = "vjp(f, *primals)"
    leaves, spec = tree_flatten(primals)
    tracked = [_track(t) for t in leaves]
    with grad_mode.enable_grad(), transform_running():
        result = late_bound(func)(*tree_unflatten(tracked, spec))
    output, aux = _split_aux(result, has_aux, api)
    flat_out, out_spec = tree_flatten(output)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")
        if not o.is_floating_point():
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
                               f"with dtype {o.dtype}")
    own = tracked

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {_pprint(ct_spec)}, primal output: "
                               f"{_pprint(out_spec)}")
        grads = _gradients(flat_out, tracked, flat_ct, retain_graph=True)
        return _hand_back(tree_unflatten(grads, spec), own)

    if has_aux:
        return _hand_back(output, own), vjp_fn, _hand_back(aux, own)
    return _hand_back(output, own), vjp_fn


# -- jacrev and hessian -------------------------------------------------------------------
def _basis(flat_out, j):
    """Cotangents for every element of output ``j``: one-hot rows for it, zero rows for the others."""
    from .._creation import eye, zeros

    n = flat_out[j].numel()
    rows = []
    for k, o in enumerate(flat_out):
        if k == j:
            rows.append(eye(n, dtype=o.dtype).reshape(n, *o.shape))
        else:
            rows.append(zeros(n, *o.shape, dtype=o.dtype))
    return rows


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """``torch.func.jacrev``: the Jacobian of ``func`` w.r.t. ``argnums`` by reverse mode.

    One vector-Jacobian product per output element (a ``vmap`` of ``vjp_fn`` over
    the rows of the identity, as PyTorch computes it), each reshaped to
    ``output.shape + input.shape``.  Nests of outputs and inputs give nests of
    Jacobians: ``jac[output][input]``.  ``chunk_size`` is passed to that vmap.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, len(args))
        chosen = (args[argnums],) if isinstance(argnums, int) else tuple(args[a] for a in argnums)

        def restricted(*primals):
            new = primals[0] if isinstance(argnums, int) else primals
            return func(*_replace_args(args, argnums, new), **kwargs)

        result = vjp(restricted, *chosen, has_aux=has_aux)
        output, vjp_fn = result[0], result[1]
        flat_out, out_spec = tree_flatten(output)
        flat_in, in_spec = tree_flatten(chosen)
        per_output = []
        for j, o in enumerate(flat_out):
            rows = vmap(lambda *ct: tree_flatten(vjp_fn(tree_unflatten(list(ct), out_spec)))[0],
                        chunk_size=chunk_size)(*_basis(flat_out, j))
            jacobians = [r.reshape(*o.shape, *p.shape) for r, p in zip(rows, flat_in)]
            inner = tree_unflatten(jacobians, in_spec)
            per_output.append(inner[0] if isinstance(argnums, int) else inner)
        jac = tree_unflatten(per_output, out_spec)
        return (jac, result[2]) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """``torch.func.hessian``: the matrix of second derivatives of ``func`` w.r.t. ``argnums``.

    PyTorch computes ``jacfwd(jacrev(func))`` (forward over reverse); edutorch
    has no forward mode yet and computes ``jacrev(jacrev(func))``: the same
    values (up to rounding), by reverse over reverse.
    """
    return jacrev(jacrev(func, argnums), argnums)
