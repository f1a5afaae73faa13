"""``torch.func.vmap``: run a function written for one sample over a whole batch.

    def loss(w, x, y):                     # one sample: x of shape (3,)
        return (x @ w - y) ** 2
    vmap(loss, in_dims=(None, 0, 0))(w, xs, ys)   # xs of shape (B, 3): B losses

How PyTorch does it: each input tensor becomes a ``BatchedTensor`` that hides
its batch dimension, and every op has a *batching rule* that runs the op once
for the whole batch.  How edutorch does it: every op runs **per sample** (the
fallback PyTorch itself uses for ops without a batching rule): ``vmap`` calls
the function once per index ``i`` of the mapped dimensions, with
``x.select(in_dim, i)`` in place of each mapped input, and stacks the results
along ``out_dims``.  The values are PyTorch's; only the speed differs.  No op
batches natively here (docs/vmap.md, checked by tests/func/test_vmap.py).

What makes it more than a loop is that vmap still *knows which tensors are
batched*, so it refuses what PyTorch refuses:

* ``.item()``, ``float(x)``, ``if x > 0:`` on a batched tensor (a per-sample
  number cannot exist in PyTorch's batched world);
* an in-place op writing a batched tensor into an unbatched one;
* ops whose output size depends on the values (``nonzero``, ``unique``,
  boolean masks): the samples' results could not be stacked;
* random numbers unless ``randomness='different'`` or ``'same'``.

While a vmap runs, a tensor made by an op on batched inputs carries the
``_Level`` objects it is batched at (``_vmap_levels`` in its ``__dict__``);
``_Patches`` installs, while the outermost transform runs (``grad`` and ``vjp``
use it too), the small wrappers that propagate that mark through
``Function.apply`` and the Tensor methods, and check it in ``item``,
``__bool__``, the in-place ops and the random generator; ``Function.apply``
also refuses a user's ``autograd.Function`` that PyTorch's transforms refuse.
"""
import contextlib
import functools
import types

import edutorch

from .. import functional as _functional_module
from .. import random as _random
from .._tensor import Tensor
from ..autograd.function import Function
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

RANDOMNESS = ("error", "different", "same")
ITEM_ERROR = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() "
              "on a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
              "somewhere inside PyTorch internals, please file a bug report.")
CONTROL_FLOW_ERROR = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
                      "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")
DATA_POINTER_ERROR = "Cannot access data pointer of Tensor that doesn't have storage"
RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                "'different' randomness flags on vmap or perform the randomness operation out of vmap")
DYNAMIC_SHAPE_ERROR = ("vmap: We do not support batching operators that can output dynamic shape. Attempted to "
                       "vmap over aten::{}. Please file an issue at https://github.com/pytorch/pytorch/issues if "
                       "you need this feature.")
MASK_ERROR = ("vmap: We do not support batching operators that can support dynamic shape. Attempting to batch "
              "over indexing with a boolean mask.")
MASKED_SELECT_ERROR = ("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support "
                       "this because for each batch this would return a differently shaped Tensor. Please file an "
                       "issue at https://github.com/pytorch/pytorch/issues if you need this feature.")
SETUP_CONTEXT_ERROR = ("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                       "...), it must override the setup_context staticmethod. For more details, please see "
                       "https://pytorch.org/docs/main/notes/extending.func.html")
INPLACE_RANDOM_ERROR = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will "
                        "appear like same randomness. If this is necessary for your usage, please file an issue "
                        "with functorch.")
SAME_RANDOMNESS_ERROR = ("Vmap does not currently support same randomness with a batched tensor input. Please file "
                         "an issue with functorch")
BATCH_NORM_ERROR = ("Batch norm got a batched tensor as input while the running_mean or running_var, which will be "
                    "updated in place, were not batched.\nIf you are using a module and do not need eval mode, "
                    "please set `track_running_stats` to be False.If you are using a prebuilt module and do not need "
                    "eval mode, please see the functorch website for resources on how to patch your module to work "
                    "with vmap")
INPLACE_ERROR = ("vmap: {}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
                 "that has more elements than `self`. This happened due to `other` being vmapped over but `self` "
                 "not being vmapped over in a vmap. Please try to use out-of-place operators instead of {}. If said "
                 "operator is being called inside the PyTorch framework, please file a bug report instead.")
# PyTorch's batching rules name these in-place ops "inplace arithmetic"; ``add_`` is checked
# by broadcasting instead; any other op falls back and is named ``aten::<op>_``.
_ARITHMETIC = {"Sub", "Mul", "Div", "Copy", "CopySlices"}
_NAMES = {"IndexAdd": "index_add_", "Fill": "fill_", "FillTensor": "fill_"}

_active = []  # the running vmap levels, outermost first


class _Level:
    """One running ``vmap``: its batch size and randomness mode."""

    def __init__(self, batch_size, randomness):
        self.batch_size = batch_size
        self.randomness = randomness


def levels_of(t):
    """The running vmap levels at which tensor ``t`` is batched."""
    marks = t.__dict__.get("_vmap_levels", ()) if isinstance(t, Tensor) else ()
    return [level for level in marks if level in _active]


def is_batched(t):
    """Is ``t`` batched at some running vmap level (as a PyTorch ``BatchedTensor`` would be)?"""
    return bool(levels_of(t))


def _mark(t, levels):
    """Record that ``t`` is batched at ``levels`` (added to those it already has)."""
    if isinstance(t, Tensor) and levels:
        old = t.__dict__.get("_vmap_levels", ())
        t.__dict__["_vmap_levels"] = tuple(old) + tuple(level for level in levels if level not in old)
    return t


def _tensor_args(args):
    """The tensors among an op's arguments, looking one level into lists (``cat([a, b])``)."""
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))
        elif isinstance(a, Tensor):
            yield a


def _levels_of_args(args):
    levels = []
    for t in _tensor_args(args):
        levels += [level for level in levels_of(t) if level not in levels]
    return levels


# -- the wrappers installed while a vmap runs ----------------------------------------
_ORIGINAL_APPLY = Function.__dict__["apply"].__func__


def _mark_results(out, levels):
    """Mark an op's tensor results (one, or a tuple/list of them) batched at ``levels``."""
    for o in (out if isinstance(out, (tuple, list)) else (out,)):
        _mark(o, levels)
    return out


def _check_custom_function(cls, levels):
    """PyTorch's conditions for a user's ``autograd.Function`` inside a transform."""
    if cls.__module__.startswith("edutorch"):  # a built-in op
        return
    if not cls._uses_setup_context:
        raise RuntimeError(SETUP_CONTEXT_ERROR)
    if levels and not getattr(cls, "generate_vmap_rule", False) and getattr(cls, "vmap", None) is None:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                           "override and implement the vmap staticmethod or set generate_vmap_rule=True. For more "
                           "details, please see https://pytorch.org/docs/main/notes/extending.func.html")


def _check_batch_norm(input, weight, bias, running_mean, running_var, training):
    """Training batch norm would write a batched mean into unbatched running statistics."""
    if training and any(stat is not None and set(levels_of(input)) - set(levels_of(stat))
                        for stat in (running_mean, running_var)):
        raise RuntimeError(BATCH_NORM_ERROR)


def _apply(cls, *args, **kwargs):
    """``Function.apply`` in a transform: checks, and the op's outputs are batched where its inputs are."""
    levels = _levels_of_args(args)
    _check_custom_function(cls, levels)
    if levels and cls.__name__ == "MaskedSelect":
        raise RuntimeError(MASK_ERROR)
    if cls.__name__ == "BatchNorm":
        _check_batch_norm(*args[:6])
    return _mark_results(_ORIGINAL_APPLY(cls, *args, **kwargs), levels)


def _marking(method):
    """A Tensor method under vmap: its results are batched where ``self`` or an argument is."""
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        levels = _levels_of_args(args + tuple(kwargs.values()))
        return _mark_results(method(*args, **kwargs), levels)
    return wrapper


def _original(name):
    """The Tensor method ``name`` as it was before vmap patched it."""
    return next(original for (_, n), original in _Patches.saved.items() if n == name)


def _item(self):
    if is_batched(self):
        raise RuntimeError(ITEM_ERROR)
    return _original("item")(self)


def _bool(self):
    if is_batched(self):
        raise RuntimeError(CONTROL_FLOW_ERROR)
    return _original("__bool__")(self)


def _no_storage(name):
    def method(self, *args, **kwargs):
        if is_batched(self):
            raise RuntimeError(DATA_POINTER_ERROR)
        return _original(name)(self, *args, **kwargs)
    return method


def _dynamic_shape(name, aten_name):
    def method(self, *args, **kwargs):
        if is_batched(self):
            raise RuntimeError(DYNAMIC_SHAPE_ERROR.format(aten_name))
        return _original(name)(self, *args, **kwargs)
    return method


def _masked_select(self, mask):
    if is_batched(mask):
        raise RuntimeError(MASKED_SELECT_ERROR)
    return _original("masked_select")(self, mask)


def _unique(input, *args, **kwargs):
    """``torch.unique`` (the function; the method is checked by ``_dynamic_shape``)."""
    if is_batched(input):
        raise RuntimeError(DYNAMIC_SHAPE_ERROR.format("_unique2"))
    return _ORIGINAL_UNIQUE(input, *args, **kwargs)


def _random_inplace(name):
    """``x.uniform_()``...: under 'different' randomness an unbatched ``x`` cannot hold per-sample draws."""
    def method(self, *args, **kwargs):
        if any(level.randomness == "different" and level not in levels_of(self) for level in _active):
            raise RuntimeError(INPLACE_RANDOM_ERROR)
        return _original(name)(self, *args, **kwargs)
    return method


def _check_same_randomness(args):
    if any(level.randomness == "same" for level in _levels_of_args(args)):
        raise RuntimeError(SAME_RANDOMNESS_ERROR)


def _random_from_tensor(name):
    """``x.bernoulli()``, ``x.multinomial(n)``: 'same' randomness cannot take batched probabilities."""
    def method(self, *args, **kwargs):
        _check_same_randomness((self,) + args)
        return _original(name)(self, *args, **kwargs)
    return method


def _random_function(original):
    """``torch.bernoulli``, ``torch.multinomial``, ``torch.normal``: as ``_random_from_tensor``."""
    @functools.wraps(original)
    def function(*args, **kwargs):
        _check_same_randomness(args + tuple(kwargs.values()))
        return original(*args, **kwargs)
    return function


def _inplace_error(self, fn, args):
    """PyTorch's error for writing batched values into an unbatched tensor, or None."""
    missing = [level for level in _levels_of_args(args) if level not in levels_of(self)]
    if not missing:
        return None
    name = fn.__name__
    if name == "Add":  # PyTorch's add_ rule broadcasts the batched shape against self's
        batched = next(t for t in _tensor_args(args) if missing[0] in levels_of(t))
        shape = [missing[0].batch_size, *batched.shape]
        return f"output with shape {list(self.shape)} doesn't match the broadcast shape {shape}"
    if name in _ARITHMETIC:
        return INPLACE_ERROR.format("inplace arithmetic", "inplace arithmetic")
    op = _NAMES.get(name) or "aten::" + "".join("_" + c.lower() if c.isupper() else c for c in name)[1:] + "_"
    return INPLACE_ERROR.format(op, op)


def _inplace(self, fn, *args):
    message = _inplace_error(self, fn, args)
    if message is not None:
        raise RuntimeError(message)
    return _original("_inplace")(self, fn, *args)


def _inplace_no_graph(t, ufunc, other, alpha):
    if is_batched(other) and not is_batched(t):
        return False  # let the general path (``_inplace``) raise PyTorch's error
    return _ORIGINAL_NO_GRAPH(t, ufunc, other, alpha)


from .._tensor_methods import inplace as _inplace_module  # noqa: E402

_ORIGINAL_NO_GRAPH = _inplace_module._inplace_no_graph
_ORIGINAL_UNIQUE = _functional_module.unique
_RANDOM_FUNCTIONS = {name: getattr(_random, name) for name in ("bernoulli", "multinomial", "normal")}


class _RandomGuard:
    """Stands in for the default generator's NumPy stream under ``randomness='error'``."""

    def __getattr__(self, name):
        raise RuntimeError(RANDOM_ERROR)


# Tensor attributes the generic ``_marking`` wrapper leaves alone: object protocol, printing,
# conversions (checked by their own wrappers below) and iteration (its ``select``s mark).
_NOT_OPS = {"__init__", "__new__", "__getattr__", "__setattr__", "__delattr__", "__repr__", "__str__", "__format__",
            "__hash__", "__array__", "__reduce__", "__reduce_ex__", "__deepcopy__", "__copy__", "__iter__",
            "__len__", "__init_subclass__", "__dir__", "__sizeof__", "__getstate__", "__setstate__", "__float__",
            "__int__", "__index__", "__contains__", "__reversed__", "__array_function__", "__array_ufunc__"}


def _tensor_ops():
    """``(owner class, name)`` of every Tensor method that is an op (``add``, ``__gt__``, ``sum``...)."""
    for owner in Tensor.__mro__[:-1]:
        for name, value in owner.__dict__.items():
            public = not name.startswith("_") or (name.startswith("__") and name.endswith("__"))
            if isinstance(value, types.FunctionType) and public and name not in _NOT_OPS:
                yield owner, name


class _Patches:
    """The wrappers above, installed while the outermost transform runs and removed after it."""

    saved = {}
    CHECKED = {
        "item": _item, "__bool__": _bool, "tolist": _no_storage("tolist"), "numpy": _no_storage("numpy"),
        "nonzero": _dynamic_shape("nonzero", "nonzero"), "unique": _dynamic_shape("unique", "_unique2"),
        "masked_select": _masked_select, "_inplace": _inplace,
        "bernoulli": _random_from_tensor("bernoulli"), "multinomial": _random_from_tensor("multinomial"),
        **{name: _random_inplace(name) for name in ("uniform_", "normal_", "bernoulli_", "random_", "exponential_",
                                                     "geometric_", "log_normal_", "cauchy_")},
    }

    replacements = None  # [(owner, name, wrapper)], built on first use

    @classmethod
    def _build(cls):
        """The wrappers, made once: every Tensor op marks its results, a few methods also check."""
        cls.replacements = [(owner, name, _marking(owner.__dict__[name]))
                            for owner, name in _tensor_ops() if name not in cls.CHECKED]
        for name, wrapper in cls.CHECKED.items():
            owner = next(k for k in Tensor.__mro__ if name in k.__dict__)  # Tensor or one of its mixins
            cls.replacements.append((owner, name, wrapper))

    @classmethod
    def install(cls):
        if cls.replacements is None:
            cls._build()
        for owner, name, wrapper in cls.replacements:
            cls.saved[owner, name] = owner.__dict__[name]
            setattr(owner, name, wrapper)
        Function.apply = classmethod(_apply)
        _inplace_module._inplace_no_graph = _inplace_no_graph
        edutorch.unique = edutorch.functional.unique = _unique
        for name, original in _RANDOM_FUNCTIONS.items():
            setattr(edutorch, name, _random_function(original))

    @classmethod
    def remove(cls):
        for (owner, name), original in cls.saved.items():
            setattr(owner, name, original)
        cls.saved.clear()
        Function.apply = classmethod(_ORIGINAL_APPLY)
        _inplace_module._inplace_no_graph = _ORIGINAL_NO_GRAPH
        edutorch.unique = edutorch.functional.unique = _ORIGINAL_UNIQUE
        for name, original in _RANDOM_FUNCTIONS.items():
            setattr(edutorch, name, original)


_depth = [0]  # how many torch.func transforms are running


@contextlib.contextmanager
def transform_running():
    """While any transform (vmap, grad, vjp) runs, the wrappers above are installed (by the outermost)."""
    if _depth[0] == 0:
        _Patches.install()
    _depth[0] += 1
    try:
        yield
    finally:
        _depth[0] -= 1
        if _depth[0] == 0:
            _Patches.remove()


class _Running:
    """Context of one vmap level: pushes it, installs the wrappers, sets the random mode."""

    def __init__(self, level):
        self.level = level
        self.transform = transform_running()

    def __enter__(self):
        self.transform.__enter__()
        _active.append(self.level)
        generator = _random.default_generator
        self.saved_rng = generator._rng
        if self.level.randomness == "error":
            generator._rng = _RandomGuard()
        self.start_state = None
        if self.level.randomness == "same" and not isinstance(generator._rng, _RandomGuard):
            self.start_state = generator._rng.bit_generator.state
        return self

    def start_sample(self):
        """``randomness='same'``: every sample draws the numbers the first one drew."""
        if self.start_state is not None:
            _random.default_generator._rng.bit_generator.state = self.start_state

    def __exit__(self, *exc):
        if self.level.randomness == "error":
            _random.default_generator._rng = self.saved_rng
        _active.pop()
        self.transform.__exit__(*exc)


def late_bound(func):
    """``MyFunction.apply`` was bound before the transform patched ``Function.apply``: look it up again."""
    if getattr(func, "__func__", None) is _ORIGINAL_APPLY:
        return func.__self__.apply
    return func


# -- vmap itself ----------------------------------------------------------------------
def _func_name(func):
    return getattr(func, "__name__", repr(func))


def _check_in_dims(func, in_dims, args):
    """One in_dim (int or None) per leaf of ``args``, with PyTorch's errors."""
    name = _func_name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_dims = broadcast_prefix(in_dims, args, lambda d: d is None or not isinstance(d, (tuple, list, dict)))
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {tree_flatten(args)[1]}.")
    return flat_dims


def _normalized_in_dims(func, in_dims, flat_args, flat_dims):
    """Each in_dim checked against its input and made non-negative."""
    name = _func_name(func)
    result = []
    for arg, dim in zip(flat_args, flat_dims):
        if dim is None:
            result.append(None)
            continue
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input but "
                             f"the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        n = arg.dim()
        if not -n <= dim < n:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some input, "
                             f"but that input is a Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        result.append(dim % n)
    return result


def _batch_size(flat_args, dims):
    sizes = [arg.shape[d] for arg, d in zip(flat_args, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _sample_args(flat_args, dims, i, level):
    """The inputs of sample ``i``: each mapped tensor's slice ``i``, marked batched."""
    return [arg if d is None else _mark(arg.select(d, i), [level]) for arg, d in zip(flat_args, dims)]


def _zero_sample_args(flat_args, dims, level):
    """Stand-in inputs for an empty batch: zeros of one sample's shape (to learn the outputs' shapes)."""
    def zeros(arg, d):
        shape = list(arg.shape)
        del shape[d]
        return _mark(arg.new_zeros(shape), [level])
    return [arg if d is None else zeros(arg, d) for arg, d in zip(flat_args, dims)]


def _check_out_dims(func, out_dims):
    def ok(d):
        if d is None or (isinstance(d, int) and not isinstance(d, bool)):
            return True
        return isinstance(d, (tuple, list)) and all(ok(x) for x in d)
    if not ok(out_dims):
        raise ValueError(f"vmap({_func_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
                         "a python collection of ints representing where in the outputs the vmapped dimension "
                         "should appear.")


def _stack_outputs(func, samples, out_dims, level, batch_size):
    """Stack the samples' outputs along ``out_dims`` (or pass an unbatched one through for None)."""
    from .. import _functional

    name = _func_name(func)
    flat_first, spec = tree_flatten(samples[0])
    flat_dims = broadcast_prefix(out_dims, samples[0], lambda d: not isinstance(d, (tuple, list)))
    if flat_dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                         f"has structure {spec}.")
    columns = [tree_flatten(s)[0] for s in samples]
    results = []
    for j, dim in enumerate(flat_dims):
        column = [leaves[j] for leaves in columns]
        if dim is None:
            if any(level in levels_of(x) for x in column):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            results.append(column[0])
            continue
        if not isinstance(column[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(column[0])}. Did you mean to set out_dims= to None for output?")
        stacked = _functional.stack(column, dim)
        results.append(stacked if batch_size else stacked.narrow(dim % stacked.dim(), 0, 0))
    return tree_unflatten(results, spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``torch.func.vmap``: ``func`` mapped over dimension ``in_dims`` of its inputs.

    ``in_dims``/``out_dims``: an int, None (not mapped: the same value for every
    sample) or a nest matching the inputs/outputs.  ``randomness``: 'error'
    (random ops raise), 'different' (each sample draws its own numbers) or
    'same' (every sample draws the same numbers).  ``chunk_size`` bounds how many
    samples PyTorch batches at once; per-sample execution needs no chunks, so it
    is checked and otherwise has no effect.
    """
    if randomness not in RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(func, out_dims)
        flat_args, spec = tree_flatten(args)
        dims = _normalized_in_dims(func, in_dims, flat_args, _check_in_dims(func, in_dims, args))
        batch_size = _batch_size(flat_args, dims)
        level = _Level(batch_size, randomness)
        samples = []
        with _Running(level) as running:
            call = late_bound(func)
            for i in range(batch_size):
                running.start_sample()
                samples.append(call(*tree_unflatten(_sample_args(flat_args, dims, i, level), spec), **kwargs))
            if batch_size == 0:
                samples.append(call(*tree_unflatten(_zero_sample_args(flat_args, dims, level), spec), **kwargs))
            return _stack_outputs(func, samples, out_dims, level, batch_size)

    return wrapped
