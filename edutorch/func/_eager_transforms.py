"""``torch.func``'s autodiff transforms: reverse mode (``grad``, ``grad_and_value``, ``vjp``,
``jacrev``), forward mode (``jvp``, ``jacfwd``, ``linearize``) and ``hessian``.

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

The forward-mode transforms run ``f`` inside a dual level of
``torch.autograd.forward_ad`` on inputs made dual with ``make_dual``; the
tangents are pushed by each op's ``jvp`` formula (``autograd/forward_ad.py``).
PyTorch's ``hessian`` is ``jacfwd(jacrev(f))``: forward mode over reverse,
which works because the backward formulas are ops like any other and push
tangents too.  PyTorch's transforms nest freely; ``forward_ad`` has one level,
so a ``jvp`` inside another (``jacfwd(jacfwd(f))``) is computed by reverse mode
twice (``_jvp_by_reverse_mode``), the double-backward trick, whose ops still
carry the outer tangents.
"""
import contextlib
import functools

from .. import autograd
from .._creation import zeros_like
from .._tensor import Tensor
from ..autograd import forward_ad as fwAD, grad_mode
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
        tracked = t.view_as(t) if t.requires_grad else _detach_keeping_tangent(t).requires_grad_()
    return _mark(tracked, levels_of(t))


def _detach_keeping_tangent(t, own=None):
    """``t.detach()``, still carrying the tangent ``t`` has in an enclosing ``jvp``/``jacfwd``
    (PyTorch's transforms keep each level's tangent and graph apart; ``detach`` drops both).
    Given this transform's ``own`` inputs, the tangent is detached too unless its graph
    reaches beyond them."""
    detached = t.detach()
    tangent = fwAD.tangent_of(t) if fwAD._state.level is not None else None
    if tangent is not None:
        if own is not None and not _reaches_outside(tangent, own):
            tangent = tangent.detach()
        fwAD.set_tangent(detached, tangent)
    return detached


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
        return _mark(_detach_keeping_tangent(t, own), levels_of(t))
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


# -- forward mode: jvp, linearize, jacfwd -----------------------------------------------------
JVP_API = "jvp(f, primals, tangents)"


def _check_tensors(flat, argname):
    if not flat:
        raise RuntimeError(f"{JVP_API}: Expected {argname} to contain at least one Tensor.")
    for t in flat:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{JVP_API}: Expected {argname} to only contain Tensors, got {type(t)}")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``torch.func.jvp``: ``(func(*primals), J @ tangents)``, the Jacobian-vector product by forward mode.

    ``tangents`` has the structure of ``primals`` (a tuple); the result has the
    structure of ``func``'s output.  With ``has_aux=True`` ``func`` returns
    ``(output, aux)`` and so does this, plus ``aux`` third.
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{JVP_API}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_primals, spec = tree_flatten(primals)
    flat_tangents, tangent_spec = tree_flatten(tangents)
    if spec != tangent_spec:
        raise RuntimeError(
            f"{JVP_API}: Expected primals and tangents to have the same python structure. For example, if "
            f"primals is a tuple of 3 tensors, tangents also must be. Got primals with structure {spec} and "
            f"tangents with structure {tangent_spec}"
        )
    _check_tensors(flat_primals, "primals")
    _check_tensors(flat_tangents, "tangents")
    if _jvp_nesting[0]:  # inside another jvp: forward_ad has one level
        return _jvp_by_reverse_mode(func, flat_primals, spec, flat_tangents, strict, has_aux)
    with fwAD.dual_level(), transform_running(), _nested_jvp():
        duals = [fwAD.make_dual(p, t) for p, t in zip(flat_primals, flat_tangents)]
        result = late_bound(func)(*tree_unflatten(duals, spec))
        output, aux = _split_aux(result, has_aux, JVP_API)
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out)
        pairs = [_unpack(o, strict) for o in flat_out]
        if has_aux:
            aux = tree_map(lambda t: fwAD.unpack_dual(t).primal if isinstance(t, Tensor) else t, aux)
    primal_out = tree_unflatten([p for p, _ in pairs], out_spec)
    tangent_out = tree_unflatten([t for _, t in pairs], out_spec)
    return (primal_out, tangent_out, aux) if has_aux else (primal_out, tangent_out)


_jvp_nesting = [0]  # how many func.jvp run (the outermost owns the dual level)


@contextlib.contextmanager
def _nested_jvp():
    _jvp_nesting[0] += 1
    try:
        yield
    finally:
        _jvp_nesting[0] -= 1


def _check_outputs(flat_out):
    if not flat_out or (len(flat_out) == 1 and flat_out[0] is None):
        raise RuntimeError(f"{JVP_API}: Expected f to be a function that has non-empty output (got output = {flat_out})")
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{JVP_API}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def _unpack(output, strict):
    """``(primal, tangent)`` of one output; a zero tangent for an output that does not depend on
    the inputs (an error with ``strict=True``, as PyTorch's)."""
    primal, tangent = fwAD.unpack_dual(output)
    if tangent is None:
        if strict:
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                               "inputs. This is not allowed with strict=True.")
        tangent = zeros_like(primal)
    return primal, tangent


def _jvp_by_reverse_mode(func, flat_primals, spec, flat_tangents, strict, has_aux):
    """J u by reverse mode twice (a ``jvp`` nested in another): with g(v) = vᵀJ, linear in v,
    J u is the gradient of g(v)·u with respect to v (at any v: here zeros)."""
    from .._creation import ones_like

    tracked = [_track(p) for p in flat_primals]  # (each keeps the enclosing jvp's tangent)
    with grad_mode.enable_grad(), transform_running():
        result = late_bound(func)(*tree_unflatten(tracked, spec))
        output, aux = _split_aux(result, has_aux, JVP_API)
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out)
        vs = [zeros_like(o).requires_grad_() for o in flat_out]
        gs = _gradients(flat_out, tracked, vs)
        total = sum((g * u).sum() for g, u in zip(gs, flat_tangents))
        if strict and not total.requires_grad:
            _unpack(flat_out[0].detach(), strict)  # PyTorch's error
        ju = _gradients([total], vs, [ones_like(total)])
    own = tracked + vs
    out = (_hand_back(output, own), _hand_back(tree_unflatten(ju, out_spec), own))
    return out + (_hand_back(aux, own),) if has_aux else out


def linearize(func, *primals):
    """``torch.func.linearize``: ``(func(*primals), jvp_fn)``; ``jvp_fn(*tangents)`` is J @ tangents
    at ``primals`` (here one forward-mode pass per call)."""
    output = jvp(func, primals, tuple(zeros_like(p) for p in primals))[0]

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def _standard_basis(flat_primals):
    """For each primal, the tangents that pick its elements one by one, stacked: row k of the
    identity of size N (all primals' elements), cut into the primals' shapes."""
    from .._creation import eye

    numels = [p.numel() for p in flat_primals]
    identity = eye(sum(numels), dtype=flat_primals[0].dtype)
    blocks = identity.split(numels, dim=1)
    return [b.reshape(sum(numels), *p.shape).to(p.dtype) for b, p in zip(blocks, flat_primals)], numels


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """``torch.func.jacfwd``: the Jacobian of ``func`` w.r.t. ``argnums`` by forward mode.

    One Jacobian-vector product per *input* element (a ``vmap`` of ``jvp`` over
    the rows of the identity, as PyTorch computes it), so it suits functions
    with few inputs and many outputs (``jacrev``: the other way round).  The
    result is laid out as ``jacrev``'s: ``output.shape + input.shape``.
    """
    @functools.wraps(func)
    def wrapper(*args):
        _check_argnums(argnums, len(args))
        chosen = (args[argnums],) if isinstance(argnums, int) else tuple(args[a] for a in argnums)
        flat_primals, spec = tree_flatten(chosen)
        basis, numels = _standard_basis(flat_primals)

        def restricted(*primals):
            new = primals[0] if isinstance(argnums, int) else primals
            return func(*_replace_args(args, argnums, new))

        def push_jvp(*flat_basis):
            result = jvp(restricted, chosen, tree_unflatten(list(flat_basis), spec), has_aux=has_aux)
            return (result[1], result[2]) if has_aux else result[1]

        results = vmap(push_jvp, randomness=randomness)(*basis)
        aux = None
        if has_aux:
            results, aux = results
            aux = tree_map(lambda t: t[0] if isinstance(t, Tensor) else t, aux)  # every row saw the same aux
        flat_out, out_spec = tree_flatten(results)
        per_output = []
        for rows in flat_out:  # rows: (N, *output.shape), one per input element
            columns = rows.movedim(0, -1).split(numels, dim=-1)
            jacobians = [c.reshape(*c.shape[:-1], *p.shape) for c, p in zip(columns, flat_primals)]
            inner = tree_unflatten(jacobians, spec)
            per_output.append(inner[0] if isinstance(argnums, int) else inner)
        jac = tree_unflatten(per_output, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """``torch.func.hessian``: the matrix of second derivatives of ``func`` w.r.t. ``argnums``.

    As PyTorch: ``jacfwd(jacrev(func))``, forward mode over reverse mode.
    """
    return jacfwd(jacrev(func, argnums), argnums)
