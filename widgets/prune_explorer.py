"""PruneExplorer: try pruning methods and amounts, see the mask and what it costs.

``PruneExplorerModel`` (no ipywidgets) drives ``nn.utils.prune`` through its
public functions only:

- a *preview* prunes a copy of the model at the chosen settings and reads
  ``<name>_mask`` from the copy, so the real model is untouched while the
  slider moves. The copy is ``copy.deepcopy`` with every tensor of the model
  shared (pruning never writes into a parameter: it adds ``<name>_orig``,
  ``<name>_mask`` and a new ``<name>``), so a preview costs one mask, not a
  second model;
- masks are kept as ``bool`` arrays (a weight that was never pruned gets a
  read-only all-``True`` view that takes no memory), and previews live in a
  least-recently-used cache bounded in bytes by the model's own weights;
- ``apply()`` prunes the real model. Pruning a parameter again combines the
  masks in a ``PruningContainer`` (iterative pruning): the new amount is a
  fraction of the weights that are still left;
- ``undo()`` restores the previous state from a stack of snapshots (masks,
  and the values only where ``make_permanent()`` overwrites them: pruning
  itself never changes ``<name>_orig``, and ``prune.remove`` gives it new
  data, leaving the old values to a tensor that still holds them, so an undo
  copies no weights), ``make_permanent()`` calls ``prune.remove``.

Every state of the real model has a number (``version``) that keys the caches:
an ``undo()`` gives the model back its old number, so what was computed on
that state (the accuracy curves) is still there. ``curve_tasks()`` splits the
curves the controls may ask for next into one-point steps, for a view to run
in idle time; ``applied_tasks()`` does the same for the curve ``apply()`` will
need (on the preview's copy, pruned once more at each amount: the computation
``curve()`` makes after the apply), which ``apply()`` then takes over.

Every preview and evaluation runs the model forward, so forward hooks on it
(a ``HookMonitor`` on the same model, say) see those calls too, copies included.

Random methods draw from the framework's global generator. The model keeps
its own generator state, so a preview and the following ``apply()`` pick the
same random weights, and the explorer never disturbs the user's RNG stream.
"""
from __future__ import annotations

import copy
import itertools
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from ._common import framework_of, numpy_view, prune_module_of, to_numpy

GLOBAL = "all layers (global)"
METHODS = ("l1_unstructured", "random_unstructured", "ln_structured", "random_structured")
METHOD_LABELS = {
    "l1_unstructured": "L1 unstructured", "random_unstructured": "random unstructured",
    "ln_structured": "Ln structured", "random_structured": "random structured",
}
#: global pruning ranks weights of all layers together: only unstructured methods make sense
GLOBAL_METHODS = {"l1_unstructured": "L1Unstructured", "random_unstructured": "RandomUnstructured"}
DEFAULT_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
PREVIEW_CACHE_SIZE = 64  # previews kept at most (and at most the model's weight bytes)
AHEAD_PREVIEW_S = 0.05  # curves are computed ahead only when one preview takes less than this


@dataclass(frozen=True)
class Settings:
    """What the controls say: which weights, which method, how much."""

    layer: str = GLOBAL  # "0.weight" or GLOBAL
    method: str = "l1_unstructured"
    amount: float = 0.5
    n: float = 1  # norm order for ln_structured (1, 2, float("inf"), ...)
    dim: int = 0  # dimension of the channels for structured methods


@dataclass
class Outcome:
    """The state of a model after (real or previewed) pruning."""

    masks: dict  # "0.weight" -> bool NumPy mask (True = kept); all True for unpruned weights
    sparsity: dict  # "0.weight" -> fraction of zero weights
    global_sparsity: float  # over all listed weights together
    loss: float | None = None
    accuracy: float | None = None
    pruned_names: list = field(default_factory=list)  # "<name>_orig" / "<name>_mask" present
    nbytes: int = 0  # memory of the masks this outcome owns (not shared with the model's)


class PruneExplorerModel:
    """State and pure computations behind ``PruneExplorer``."""

    def __init__(self, module, data=None, grid=DEFAULT_GRID, preview_bytes=None):
        """``preview_bytes``: memory allowed for cached previews (default: the
        bytes of the model's parameters)."""
        self.module = module
        self.data = data
        self.grid = tuple(grid)
        self.torch = framework_of(module)  # edutorch or torch: same API
        self.prune = prune_module_of(module)
        self.settings = Settings()
        self.undo_stack = []
        self._versions = itertools.count(1)
        self.version = 0  # names the state of the real model: the key of every cache
        self._rng_state = self.torch.get_rng_state()
        self.preview_bytes = (sum(p.numel() * p.element_size() for p in module.parameters())
                              if preview_bytes is None else preview_bytes)
        self._preview_cache = OrderedDict()  # least recently used first
        self._curve_cache = {}  # (layer, method, n, dim, version) -> the curve's points
        self._points = {}  # (settings, version) -> one point of a curve
        self._current = None
        self._outcomes = {}  # version -> outcome() of that state (the current one and the undoable ones)
        self._applies = 0  # how many apply() calls: each may have drawn from the explorer's generator
        #: the next apply() computed ahead (applied_tasks): (its apply_key, the pruned copy,
        #: the generator state after it, the copy's outcome, {amount: curve point})
        self._applied = None
        self.preview_seconds = 0.0  # how long the last preview took to compute

    # -- what can be pruned -------------------------------------------------------
    def layers(self):
        """Qualified names of every parameter called ``weight`` (pruned or not)."""
        names = []
        for prefix, m in self.module.named_modules():
            own = dict(m.named_parameters(recurse=False))
            if "weight" in own or "weight_orig" in own:
                names.append(f"{prefix}.weight" if prefix else "weight")
        return names

    def choices(self):
        """The layer dropdown: every weight, then the global option."""
        return self.layers() + [GLOBAL]

    def set(self, **changes):
        """Change some settings (layer, method, amount, n, dim); checks them."""
        settings = Settings(**{**self.settings.__dict__, **changes})
        if settings.layer not in self.choices():
            raise KeyError(f"unknown layer {settings.layer!r}; choose one of {self.choices()}")
        if settings.method not in METHODS:
            raise ValueError(f"unknown method {settings.method!r}; choose one of {METHODS}")
        self.settings = settings
        return settings

    # -- pruning ----------------------------------------------------------------------
    def _prune(self, module, settings):
        """Prune ``module`` (the real one or a copy) according to ``settings``."""
        s = settings
        if s.layer == GLOBAL:
            if s.method not in GLOBAL_METHODS:
                raise ValueError(
                    f"global pruning ranks all weights together, so it needs an unstructured "
                    f"method ({', '.join(GLOBAL_METHODS)}), not {s.method!r}")
            method = getattr(self.prune, GLOBAL_METHODS[s.method])
            pairs = [_owner(module, name) for name in self.layers()]
            self.prune.global_unstructured(pairs, pruning_method=method, amount=s.amount)
            return
        owner, name = _owner(module, s.layer)
        if s.method == "l1_unstructured":
            self.prune.l1_unstructured(owner, name, amount=s.amount)
        elif s.method == "random_unstructured":
            self.prune.random_unstructured(owner, name, amount=s.amount)
        elif s.method == "ln_structured":
            self.prune.ln_structured(owner, name, amount=s.amount, n=s.n, dim=s.dim)
        else:
            self.prune.random_structured(owner, name, amount=s.amount, dim=s.dim)

    def _prune_with_own_rng(self, module, settings, state=None):
        """``_prune`` with the explorer's generator state (or ``state``); return the state
        after it.

        Only the random methods draw from the generator: the others prune without
        touching it (saving and restoring its state costs more than their pruning).
        """
        state = self._rng_state if state is None else state
        if not settings.method.startswith("random"):
            self._prune(module, settings)
            return state
        users_state = self.torch.get_rng_state()
        self.torch.set_rng_state(state)
        try:
            self._prune(module, settings)
            return self.torch.get_rng_state()
        finally:
            self.torch.set_rng_state(users_state)

    def is_cached(self, amount=None):
        """Is the preview at these settings (``amount``: default the slider's) remembered?"""
        settings = self.settings if amount is None else Settings(
            **{**self.settings.__dict__, "amount": float(amount)})
        return (settings, self.version) in self._preview_cache

    def preview(self, amount=None, settings=None):
        """What ``apply()`` would give at ``amount`` (default: the slider's), on a copy;
        ``settings``: other settings than the controls' (``amount`` then replaces theirs)."""
        settings = self.settings if settings is None else settings
        if amount is not None:
            settings = Settings(**{**settings.__dict__, "amount": float(amount)})
        key = (settings, self.version)
        if key in self._preview_cache:
            self._preview_cache.move_to_end(key)
            return self._preview_cache[key]
        started = time.process_time()
        trial = self._trial_copy()
        self._prune_with_own_rng(trial, settings)
        result = self.outcome(trial)
        self._remember(key, result)
        self.preview_seconds = time.process_time() - started  # CPU: steadier on a busy machine
        return result

    def _trial_copy(self, module=None):
        """A copy of the model (or of ``module``, a copy itself) whose modules are new but
        whose tensors are the real ones.

        ``deepcopy`` looks every object up in ``memo`` first: listing each
        parameter, buffer and tensor attribute there makes the copy share it.
        Pruning the copy then only adds tensors to the copy's modules.
        """
        module = self.module if module is None else module
        memo = {}
        for m in module.modules():
            tensors = list(m.parameters(recurse=False)) + list(m.buffers(recurse=False))
            tensors += [v for v in vars(m).values() if hasattr(v, "detach")]
            memo.update((id(t), t) for t in tensors)
        return copy.deepcopy(module, memo)

    def _remember(self, key, result):
        """Cache a preview; forget the least recently used ones beyond the memory budget."""
        cache = self._preview_cache
        cache[key] = result
        used = sum(r.nbytes for r in cache.values())
        while len(cache) > 1 and (used > self.preview_bytes or len(cache) > PREVIEW_CACHE_SIZE):
            _, oldest = cache.popitem(last=False)
            used -= oldest.nbytes

    def curve(self, settings=None):
        """``[(amount, sparsity, loss, accuracy), ...]`` over the grid, for these settings
        (default: the controls').

        ``sparsity`` is the chosen layer's (or the global one). One copy of the
        model per amount; cached until the settings (other than amount) or the
        model change.
        """
        s = self.settings if settings is None else settings
        key = (s.layer, s.method, s.n, s.dim, self.version)
        if key not in self._curve_cache:
            self._curve_cache[key] = [self._curve_point(s, amount) for amount in self.grid]
        return self._curve_cache[key]

    def _curve_point(self, settings, amount):
        """``(amount, sparsity, loss, accuracy)`` of one preview (cached: points are small)."""
        key = (Settings(**{**settings.__dict__, "amount": amount}), self.version)
        if key not in self._points:
            self._points[key] = _point(self.preview(amount, settings), settings, amount)
        return self._points[key]

    def quick(self):
        """Is a preview quick enough (under ``AHEAD_PREVIEW_S`` of CPU) to compute ahead?
        On a big model it is not: someone who acts while a step runs waits for it."""
        return self.preview_seconds < AHEAD_PREVIEW_S

    def curve_tasks(self, wanted=None):
        """The curves a control may ask for next (or those of the ``wanted`` settings), as
        one-point steps (functions without arguments) to run while nobody waits: every
        other method on the chosen weights, then the chosen method on every other choice
        of weights. A step whose settings cannot prune (a structured method on all layers)
        does nothing. None unless previews are ``quick()``."""
        if not self.quick():
            return []
        s = self.settings
        if wanted is None:
            wanted = [Settings(s.layer, method, s.amount, s.n, s.dim) for method in METHODS]
            wanted += [Settings(layer, s.method, s.amount, s.n, 0) for layer in self.choices()]
        version = self.version
        tasks = []
        for settings in wanted:
            if (settings.layer, settings.method, settings.n, settings.dim, version) in self._curve_cache:
                continue
            tasks += [lambda settings=settings, amount=amount: self._point_ahead(settings, amount, version)
                      for amount in self.grid]
        return tasks

    def _point_ahead(self, settings, amount, version):
        if version != self.version:
            return  # the model changed since the step was planned
        try:
            self._curve_point(settings, amount)
        except (ValueError, RuntimeError, IndexError):
            pass  # e.g. a structured method on all layers: the controls say why when asked

    def apply_key(self):
        """What ``apply()`` would start from: the model's version, how many applies drew from
        the explorer's generator, and the settings. Equal keys, equal results."""
        return self.version, self._applies, self.settings

    def applied_tasks(self):
        """The curve ``apply()`` will need, as one-point steps to run while nobody waits
        (none when a preview takes ``AHEAD_PREVIEW_S`` or more, or without data).

        It is the curve of the pruned model, so it is computed on the preview's copy
        (pruned as ``apply()`` would prune the model, with the explorer's generator
        state), pruned once more at each amount: what ``curve()`` does after the apply.
        ``apply()`` takes the points over when its ``apply_key()`` is the same;
        ``applied()`` gives the copy's outcome and curve to draw ahead.
        """
        if self.data is None or not self.quick() or self.applied():
            return []
        key = self.apply_key()
        return [lambda amount=amount: self._applied_point(key, amount) for amount in self.grid]

    def _applied_point(self, key, amount):
        """One point of ``applied_tasks()`` (nothing when the settings or the model changed)."""
        if key != self.apply_key():
            return
        settings = key[2]
        try:
            if self._applied is None or self._applied[0] != key:
                trial = self._trial_copy()
                state = self._prune_with_own_rng(trial, settings)
                self._applied = (key, trial, state, self.outcome(trial), {})
            _, trial, state, _, points = self._applied
            if amount not in points:
                again = self._trial_copy(trial)
                self._prune_with_own_rng(again, Settings(**{**settings.__dict__, "amount": amount}),
                                         state)
                points[amount] = _point(self.outcome(again), settings, amount)
        except (ValueError, RuntimeError, IndexError):
            self._applied = None  # these settings cannot prune: apply() will say why

    def applied(self):
        """``(outcome, curve)`` of the model after ``apply()`` at the current settings, when
        ``applied_tasks()`` computed all of it; else None."""
        if self._applied is None or self._applied[0] != self.apply_key():
            return None
        _, _, _, outcome, points = self._applied
        if len(points) < len(self.grid):
            return None
        return outcome, [points[amount] for amount in self.grid]

    def apply(self):
        """Prune the real model at the current settings (iteratively, on top of earlier pruning)."""
        key = self.apply_key()
        self.undo_stack.append(self._snapshot())
        try:
            self._rng_state = self._prune_with_own_rng(self.module, self.settings)
        except Exception:
            self.undo_stack.pop()
            raise
        self._applies += 1
        self._changed()
        self._take_applied_points(key)
        return self.current()

    def _take_applied_points(self, key):
        """The points ``applied_tasks()`` computed for this apply become the new state's."""
        if self._applied is not None and self._applied[0] == key:
            s, points = key[2], self._applied[4]
            for amount, point in points.items():
                self._points[(Settings(**{**s.__dict__, "amount": amount}), self.version)] = point
            if len(points) == len(self.grid):
                self._curve_cache[(s.layer, s.method, s.n, s.dim, self.version)] = [
                    points[amount] for amount in self.grid]
        self._applied = None

    def make_permanent(self):
        """``prune.remove`` on every pruned weight: ``weight`` becomes a plain parameter again.

        With nothing pruned this changes nothing, so it adds no undo step.
        """
        pruned = [_owner(self.module, name) for name in self.layers()]
        pruned = [(owner, attr) for owner, attr in pruned if _is_pruned(owner, attr)]
        if not pruned:
            return self.current()
        self.undo_stack.append(self._snapshot(keep_values=True))
        for owner, attr in pruned:
            self.prune.remove(owner, attr)
        self._changed()
        return self.current()

    def undo(self):
        """Go back to the state before the last ``apply()`` / ``make_permanent()`` (and to
        its ``version``: what was cached for that state is valid again)."""
        if not self.undo_stack:
            raise IndexError("nothing to undo")
        version, snapshot = self.undo_stack.pop()
        self._restore(snapshot)
        self._changed(version)
        return self.current()

    def undone(self, settings=None):
        """``(version, outcome, curve)`` of the state ``undo()`` goes back to, for these
        settings (default: the controls'), from what was computed while it was the current
        one; None when that is not remembered (or nothing is left to undo)."""
        if not self.undo_stack:
            return None
        s = self.settings if settings is None else settings
        version = self.undo_stack[-1][0]
        curve = self._curve_cache.get((s.layer, s.method, s.n, s.dim, version))
        if version not in self._outcomes or (self.data is not None and curve is None):
            return None
        return version, self._outcomes[version], curve

    def _changed(self, version=None):
        """The real model changed: a new ``version`` (or an old one, after an undo)."""
        self.version = next(self._versions) if version is None else version
        self._current = None
        kept = {v for v, _ in self.undo_stack}  # the outcomes an undo may come back to
        self._outcomes = {v: o for v, o in self._outcomes.items() if v in kept}

    def current(self):
        """``outcome()`` of the real model, cached until the explorer changes it.

        After changing the model yourself (training, pruning by hand), call ``refresh()``.
        """
        if self._current is None:
            self._current = self._outcomes[self.version] = self.outcome()
        return self._current

    def refresh(self):
        """Forget everything cached: the model was changed outside the explorer."""
        self._changed()
        for cache in (self._preview_cache, self._curve_cache, self._points, self._outcomes):
            cache.clear()
        self._applied = None

    def _snapshot(self, keep_values=False):
        """``(version, state)``: the model's version and, for every weight, its mask (a
        bool copy, None when not pruned), the order of its module's parameters (pruning
        moves ``weight`` to the end) and, with ``keep_values``, a copy of its unmasked
        values.

        Pruning never writes into ``<name>_orig``, so undoing an ``apply()`` needs
        no copy of the values; ``prune.remove`` overwrites them, so
        ``make_permanent()`` keeps one.
        """
        snapshot = []
        for name in self.layers():
            owner, attr = _owner(self.module, name)
            if _is_pruned(owner, attr):
                values = getattr(owner, attr + "_orig")
                mask = numpy_view(getattr(owner, attr + "_mask")) != 0
            else:
                values, mask = getattr(owner, attr), None
            original = to_numpy(values) if keep_values else None
            order = [n for n, _ in owner.named_parameters(recurse=False)]
            snapshot.append((name, original, mask, order))
        return self.version, snapshot

    def _restore(self, snapshot):
        """Undo with the public API: ``remove``, put the unmasked values back, re-apply the
        old mask (``original`` None: the values in ``<name>_orig`` are still the old ones)."""
        for name, original, mask, order in snapshot:
            owner, attr = _owner(self.module, name)
            if _is_pruned(owner, attr):
                if original is None:  # remove() gives <name>_orig new data; these stay
                    original = getattr(owner, attr + "_orig").detach()
                self.prune.remove(owner, attr)
            weight = getattr(owner, attr)
            if original is not None:
                with self.torch.no_grad():
                    weight.copy_(self.torch.as_tensor(original))
            if mask is not None:
                mask_tensor = self.torch.as_tensor(mask).to(device=weight.device,
                                                            dtype=weight.dtype)
                self.prune.custom_from_mask(owner, attr, mask=mask_tensor)
            _reorder_parameters(owner, order)

    # -- reading a model ------------------------------------------------------------
    def outcome(self, module=None):
        """Masks, sparsity, pruning names and (with data) loss/accuracy of ``module``
        (default: the real model)."""
        module = self.module if module is None else module
        now = None if module is self.module else self.current()  # a copy shares the real model's unchanged weights
        masks, sparsity = {}, {}
        zeros = total = nbytes = 0
        for name in self.layers():
            owner, attr = _owner(module, name)
            tensor = getattr(owner, attr)
            if now is not None and tensor is _owner_attr(self.module, name):
                masks[name], sparsity[name] = now.masks[name], now.sparsity[name]
            else:
                weight = numpy_view(tensor)
                if _is_pruned(owner, attr):
                    masks[name] = numpy_view(getattr(owner, attr + "_mask")) != 0
                    nbytes += masks[name].nbytes
                else:
                    masks[name] = np.broadcast_to(True, weight.shape)  # no memory
                sparsity[name] = int(np.count_nonzero(weight == 0)) / max(weight.size, 1)
            zeros += round(sparsity[name] * masks[name].size)
            total += masks[name].size
        result = Outcome(masks, sparsity, zeros / total if total else 0.0,
                         pruned_names=pruned_names(module), nbytes=nbytes)
        if self.data is not None:
            result.loss, result.accuracy = self.evaluate(module)
        return result

    def evaluate(self, module=None):
        """Loss and accuracy on ``data=(x, y)`` in eval mode (each module's mode is restored).

        Integer targets and 2-D outputs: cross-entropy and accuracy (computed in
        NumPy from the logits). Otherwise: mean squared error, accuracy None.
        """
        module = self.module if module is None else module
        x, y = self.data
        modes = [(m, m.training) for m in module.modules()]  # submodules may differ
        module.eval()
        try:
            with self.torch.no_grad():
                output = to_numpy(module(x)).astype(np.float64)
        finally:
            for m, training in modes:
                m.training = training
        target = to_numpy(y) if hasattr(y, "detach") else np.asarray(y)
        if target.dtype.kind in "iu" and output.ndim == 2:
            shifted = output - output.max(axis=1, keepdims=True)  # stable log-softmax
            log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            loss = -log_probs[np.arange(len(target)), target].mean()
            accuracy = float((output.argmax(axis=1) == target).mean())
            return float(loss), accuracy
        return float(((output - target.reshape(output.shape)) ** 2).mean()), None


def _point(outcome, settings, amount):
    """``(amount, sparsity, loss, accuracy)``: a curve's point from a pruned copy's outcome
    (``sparsity``: the chosen layer's, or the global one)."""
    sparsity = outcome.global_sparsity if settings.layer == GLOBAL else outcome.sparsity[settings.layer]
    return amount, sparsity, outcome.loss, outcome.accuracy


def _owner(module, qualified):
    """``(submodule, "weight")`` for ``"encoder.0.weight"``."""
    prefix, _, attr = qualified.rpartition(".")
    return dict(module.named_modules())[prefix], attr


def _owner_attr(module, qualified):
    owner, attr = _owner(module, qualified)
    return getattr(owner, attr)


def _reorder_parameters(module, order):
    """Register ``module``'s own parameters again in ``order`` (the same Parameter objects),
    so ``state_dict()`` keys come back in their old order after an undo."""
    for name in order:
        parameter = getattr(module, name)
        delattr(module, name)
        module.register_parameter(name, parameter)


def _is_pruned(owner, attr):
    """Has ``prune`` re-parametrised ``owner.<attr>`` (``<attr>_orig`` + ``<attr>_mask``)?"""
    return attr + "_orig" in dict(owner.named_parameters(recurse=False))


def pruned_names(module):
    """The ``<name>_orig`` parameters and ``<name>_mask`` buffers that pruning created."""
    return ([n for n, _ in module.named_parameters() if n.endswith("_orig")]
            + [n for n, _ in module.named_buffers() if n.endswith("_mask")])
