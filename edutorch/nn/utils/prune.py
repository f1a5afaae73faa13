"""``torch.nn.utils.prune``: zero out weights through a mask, reparametrised with a hook.

Pruning ``module.weight`` does three things to the module (as in PyTorch):

1. the original values move to a new parameter ``weight_orig`` (the optimizer
   keeps training *these*);
2. a buffer ``weight_mask`` of 0s and 1s records which entries are pruned;
3. ``weight`` becomes a plain attribute, ``weight_mask * weight_orig``,
   recomputed by a *forward pre-hook* before every forward call.  The hook is
   the pruning method object itself (it has ``__call__(module, inputs)``).

Because ``weight = mask * weight_orig`` is computed with ordinary tensor ops,
gradients flow back to ``weight_orig`` through the mask: pruned entries get a
zero gradient.  :func:`remove` makes the pruning permanent: ``weight`` is a
plain parameter again, holding the pruned values.

Pruning the same tensor again wraps the methods in a :class:`PruningContainer`,
which runs the new method only on the units that are still unpruned.

Masks are computed with NumPy on the arrays (they are not differentiable),
reached through ``edutorch/_array_interface.py``.
Which entries are "the k smallest" is a *set*; we find it with
``np.partition`` (linear time) instead of sorting.  When several entries tie
at the threshold, we prune the ones with the lowest flat index first.
PyTorch's ``topk`` breaks such ties in an unspecified, implementation-dependent
order, so on data with ties the *count* of pruned entries always matches
PyTorch but *which* of the tied entries are pruned may differ.
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ... import cat, ones_like, rand
from ..._array_interface import array_module, array_of, tensor_of


class BasePruningMethod(ABC):
    """Base class of pruning techniques (``torch.nn.utils.prune.BasePruningMethod``).

    A subclass sets ``PRUNING_TYPE`` (``"unstructured"``, ``"structured"`` or
    ``"global"``) and implements ``compute_mask(t, default_mask)``.
    """

    _tensor_name = None
    PRUNING_TYPE = None

    def __call__(self, module, inputs):
        """The forward pre-hook: recompute ``module.<name>`` from its mask and original."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """Return a mask (same shape as ``t``) that respects ``default_mask``.

        ``t`` holds the importance scores (the parameter itself by default);
        ``default_mask`` is the mask of earlier pruning (all ones the first time).
        """

    def apply_mask(self, module):
        """``<name>_mask * <name>_orig``: the pruned tensor (differentiable in ``_orig``)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` and install the hook.

        The first time, ``<name>`` moves to the parameter ``<name>_orig``; if
        the tensor was pruned before, the old and new methods are combined in
        a :class:`PruningContainer`.  Returns the method (or container) used.
        """
        method = _combine_with_old_method(cls, module, name, *args, **kwargs)

        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter "
                    f"{name} of {module}, got {importance_scores.shape} vs {orig.shape}"
                )
        else:
            importance_scores = orig

        first_time = not isinstance(method, PruningContainer)
        if first_time:
            # ``weight`` -> ``weight_orig``: the same Parameter object, new name
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").clone()

        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            # roll back, so a failed pruning leaves the module as it was
            if first_time:
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """Return ``t`` times the mask this method computes for it (no module involved)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as tensor t, "
                    f"got {importance_scores.shape} vs {t.shape}"
                )
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``<name>`` becomes a parameter holding the pruned values.

        Pruning is NOT undone: the zeros stay.  ``<name>_orig`` and
        ``<name>_mask`` are deleted.
        """
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed"
            )
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data  # the same Parameter object keeps living, now pruned
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _combine_with_old_method(cls, module, name, *args, **kwargs):
    """Make the new method and, if ``name`` was already pruned, put both in a container.

    The old method's forward pre-hook is taken off the module here; ``apply``
    registers the returned method (or container) as the new hook.
    """
    old_method = None
    found = 0
    hooks_to_remove = []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            hooks_to_remove.append(k)
            found += 1
    if found > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the "
            f"same tensor {name} of module {module}. Use a PruningContainer."
        )
    for k in hooks_to_remove:
        del module._forward_pre_hooks[k]

    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        method = old_method
    elif isinstance(old_method, BasePruningMethod):
        container = PruningContainer(old_method)
        container.add_pruning_method(method)
        method = container
    return method


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods applied one after another (iterative pruning).

    Its ``compute_mask`` runs only the *latest* method, and only on what is
    still unpruned: the remaining entries (unstructured), the channels that
    are not all zero yet (structured), or everything (global).
    """

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Append ``method`` (it must act on the same tensor name)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        elif method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on "
                f"the parameter named '{self._tensor_name}' to PruningContainer {self}."
                + f" Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """Combine ``default_mask`` with the latest method's mask on the unpruned part of ``t``."""
        return _combine_masks(self._pruning_methods[-1], t, default_mask)


def _combine_masks(method, t, mask):
    """Run ``method`` on the still-unpruned slice of ``t`` and write its mask back there."""
    new_mask = mask.to(dtype=t.dtype)
    everything = (slice(None),) * t.dim()
    if method.PRUNING_TYPE == "unstructured":
        alive = array_of(mask) == 1  # a boolean index: the entries still alive
        slc = everything if alive.all() else alive  # all alive: the whole tensor, no gather
    elif method.PRUNING_TYPE == "structured":
        if not hasattr(method, "dim"):
            raise AttributeError(
                "Pruning methods of PRUNING_TYPE "
                '"structured" need to have the attribute `dim` defined.'
            )
        n_dims = t.dim()
        dim = method.dim
        if dim < 0:
            dim = n_dims + dim
        if dim < 0:
            raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
        # channels along ``dim`` that still have a nonzero entry
        other_axes = tuple(d for d in range(n_dims) if d != dim)
        keep_channel = array_of(mask).sum(axis=other_axes) != 0
        slc = [slice(None)] * n_dims
        slc[dim] = keep_channel
        slc = tuple(slc)
    elif method.PRUNING_TYPE == "global":
        slc = everything
    else:
        raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")

    if slc is everything:  # the whole tensor, as on a first pruning: its mask is the new mask
        return method.compute_mask(t, default_mask=mask).to(dtype=t.dtype)

    partial_mask = method.compute_mask(tensor_of(array_of(t)[slc]), default_mask=tensor_of(array_of(mask)[slc]))
    array_of(new_mask)[slc] = array_of(partial_mask).astype(array_of(new_mask).dtype, copy=False)
    return new_mask


class Identity(BasePruningMethod):
    """Prune nothing: the reparametrisation with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prune ``amount`` of the (unpruned) entries, chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        pruned = None
        if nparams_toprune != 0:
            # like torch: a random score per entry, prune the k largest scores
            prob = array_of(rand(t.shape, device=t.device)).reshape(-1)
            _check_count(nparams_toprune, "topk")
            pruned = _k_smallest(-prob, nparams_toprune)
        return _masked_copy(default_mask, pruned)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune the ``amount`` (unpruned) entries with the smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        pruned = None
        if nparams_toprune != 0:
            scores = array_module(array_of(t)).abs(array_of(t)).reshape(-1)
            _check_count(nparams_toprune, "topk")
            pruned = _k_smallest(scores, nparams_toprune)
        return _masked_copy(default_mask, pruned)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` whole (unpruned) channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        # a random score per channel; the channels with the k lowest scores go
        prob = rand(tensor_size, device=t.device)
        _check_count(nparams_toprune, "kthvalue")
        threshold = prob.kthvalue(nparams_toprune).values
        keep = prob > threshold
        return _channel_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` (unpruned) channels along ``dim`` with the smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        norm = _compute_norm(t, self.n, self.dim)
        keep = _k_smallest(-norm, nparams_tokeep)  # the k largest norms stay
        return _channel_mask(t, self.dim, tensor_of(keep)) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prune with a mask given by the user."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match "
                f"self.mask shape {self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# -- the functional interface: prune a module in place and return it ---------------
def identity(module, name):
    """Add the pruning reparametrisation to ``module.<name>`` with a mask of ones."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` (a fraction or a count) random entries of ``module.<name>``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` with the smallest ``|value|``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` channels along ``dim`` with the smallest L``n`` norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune across several tensors at once, as if they were one long vector.

    ``parameters`` is an iterable of ``(module, name)`` pairs.  All scores are
    concatenated, one mask is computed for the whole vector (respecting
    earlier masks), then it is cut back into pieces and applied to each
    tensor with :func:`custom_from_mask`.
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)

    scores = _flatten(
        importance_scores.get((module, name), getattr(module, name)) for module, name in parameters
    )
    default_mask = _flat_default_mask(parameters, scores)

    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for '
            f"the `pruning_method`. Found method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    del scores, default_mask  # not needed any more: less memory while the masks are installed

    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer:pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)
        pointer += num_param


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` with the given ``mask`` (0 = pruned)."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent and take its hook off."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module):
    """True if ``module`` or any submodule has a pruning forward pre-hook."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


# -- helpers ------------------------------------------------------------------------
def _k_smallest(scores, k):
    """A bool array like ``scores``, True at its ``k`` smallest entries (ties: lowest index first).

    ``np.partition`` finds the k-th smallest value in linear time; everything
    below it is chosen, and the remaining slots go to the entries equal to it.
    A bool array (one byte per entry) rather than a list of indices (eight)
    keeps a 16.8 M-entry weight's ranking small and is written with one pass.
    """
    xp = array_module(scores)
    chosen = xp.zeros(scores.shape, dtype=bool)
    if k == 0:
        return chosen
    threshold = xp.partition(scores, k - 1)[k - 1]
    xp.less(scores, threshold, out=chosen)
    missing = k - int(xp.count_nonzero(chosen))
    chosen[xp.flatnonzero(scores == threshold)[:missing]] = True
    return chosen


def _masked_copy(default_mask, pruned):
    """A copy of ``default_mask`` with 0 where the flat bool array ``pruned`` is True (None: none).

    The unstructured methods rank first and copy the mask after: the scores and
    their ranking are freed before the mask is allocated, which keeps the peak
    memory of pruning a big tensor lower.
    """
    mask = array_of(default_mask).copy()
    if pruned is not None:
        mask.reshape(-1)[pruned] = 0
    return tensor_of(mask)


def _channel_mask(t, dim, keep):
    """A mask shaped like ``t`` with ones in the channels (along ``dim``) where ``keep`` (a bool vector)."""
    shape = [1] * t.dim()
    shape[dim] = t.shape[dim]
    return ones_like(t) * keep.reshape(shape)


def _flat_default_mask(parameters, scores):
    """The earlier masks of ``parameters`` as one flat Tensor, ones where a tensor was never
    pruned (PyTorch concatenates ``<name>_mask`` or ``ones_like``).

    Before any pruning that is ``ones_like(scores)``, made at once rather than
    one tensor of ones per parameter, then concatenated (half the memory). It
    is a real tensor, not an expanded ``1``: a pruning method may write into
    its ``default_mask``, as in PyTorch.
    """
    masks = [getattr(module, name + "_mask", None) for module, name in parameters]
    if all(mask is None for mask in masks):
        return ones_like(scores)
    return _flatten(mask if mask is not None else ones_like(getattr(module, name))
                    for mask, (module, name) in zip(masks, parameters))


def _flatten(tensors):
    """Concatenate tensors into one flat Tensor (what ``parameters_to_vector`` does), outside autograd."""
    return cat([t.detach().reshape(-1) for t in tensors])


def _validate_pruning_amount_init(amount):
    """Check ``amount`` alone: a float in [0, 1] or a non-negative int."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral)
        and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer"
        )


def _validate_pruning_amount(amount, tensor_size):
    """Check that a count to prune is not more than the units available."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}"
        )


def _validate_structured_pruning(t):
    """Channels only make sense for tensors with at least 2 dimensions."""
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to "
            "multidimensional tensors. Found tensor of shape "
            f"{shape} with {len(shape)} dims"
        )


def _check_count(k, op):
    """``amount=True`` passes validation (a bool is an int) and reaches PyTorch's
    ``topk(k=True)`` / ``kthvalue(k=True)``, which refuse it: the same TypeError here.
    (``ln_structured`` computes ``size - True``, an int: it prunes one channel, as PyTorch.)"""
    if isinstance(k, bool):
        raise TypeError(f"{op}(): argument 'k' must be int, not bool")


def _compute_nparams_toprune(amount, tensor_size):
    """An int ``amount`` is a count; a float is a fraction of ``tensor_size`` (rounded)."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    """The L``n`` norm of each channel along ``dim`` (over all other axes), as an array."""
    x = array_of(t)
    dim = dim % x.ndim
    axes = tuple(d for d in range(x.ndim) if d != dim)
    xp = array_module(x)
    if n == "nuc":
        if len(axes) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {list(axes)}")
        return xp.linalg.svd(xp.moveaxis(x, dim, 0), compute_uv=False).sum(axis=-1)
    if n == "fro":
        n = 2
    a = xp.abs(x)
    if n == float("inf"):
        return a.max(axis=axes)
    if n == float("-inf"):
        return a.min(axis=axes)
    if n == 0:
        return (a != 0).sum(axis=axes).astype(x.dtype)
    return (a ** n).sum(axis=axes) ** (1.0 / n)
