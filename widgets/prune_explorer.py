"""PruneExplorer: try pruning methods and amounts, see the mask and what it costs.

``PruneExplorerModel`` (no ipywidgets) drives ``nn.utils.prune`` through its
public functions only:

- a *preview* prunes a ``copy.deepcopy`` of the model at the chosen settings
  and reads ``<name>_mask`` from the copy, so the real model is untouched
  while the slider moves;
- ``apply()`` prunes the real model. Pruning a parameter again combines the
  masks in a ``PruningContainer`` (iterative pruning): the new amount is a
  fraction of the weights that are still left;
- ``undo()`` restores the previous state from a stack of snapshots
  (``<name>_orig`` values + masks), ``make_permanent()`` calls ``prune.remove``.

Every preview and evaluation runs the model forward, so forward hooks on it
(a ``HookMonitor`` on the same model, say) see those calls too, copies included.

Random methods draw from the framework's global generator. The model keeps
its own generator state, so a preview and the following ``apply()`` pick the
same random weights, and the explorer never disturbs the user's RNG stream.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from ._common import framework_of, prune_module_of, to_numpy

GLOBAL = "all layers (global)"
METHODS = ("l1_unstructured", "random_unstructured", "ln_structured", "random_structured")
METHOD_LABELS = {
    "l1_unstructured": "L1 unstructured", "random_unstructured": "random unstructured",
    "ln_structured": "Ln structured", "random_structured": "random structured",
}
#: global pruning ranks weights of all layers together: only unstructured methods make sense
GLOBAL_METHODS = {"l1_unstructured": "L1Unstructured", "random_unstructured": "RandomUnstructured"}
DEFAULT_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
PREVIEW_CACHE_SIZE = 64  # previews kept (each holds one mask per weight)


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

    masks: dict  # "0.weight" -> NumPy mask (1 = kept); ones for unpruned weights
    sparsity: dict  # "0.weight" -> fraction of zero weights
    global_sparsity: float  # over all listed weights together
    loss: float | None = None
    accuracy: float | None = None
    pruned_names: list = field(default_factory=list)  # "<name>_orig" / "<name>_mask" present


class PruneExplorerModel:
    """State and pure computations behind ``PruneExplorer``."""

    def __init__(self, module, data=None, grid=DEFAULT_GRID):
        self.module = module
        self.data = data
        self.grid = tuple(grid)
        self.torch = framework_of(module)  # edutorch or torch: same API
        self.prune = prune_module_of(module)
        self.settings = Settings()
        self.undo_stack = []
        self.version = 0  # bumped when the real model changes: invalidates caches
        self._rng_state = self.torch.get_rng_state()
        self._preview_cache = {}
        self._curve_cache = {}
        self._current = None

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

    def _with_own_rng(self, action):
        """Run ``action`` with the explorer's generator state; return the state after it."""
        users_state = self.torch.get_rng_state()
        self.torch.set_rng_state(self._rng_state)
        try:
            action()
            return self.torch.get_rng_state()
        finally:
            self.torch.set_rng_state(users_state)

    def preview(self, amount=None):
        """What ``apply()`` would give at ``amount`` (default: the slider's), on a copy."""
        settings = self.settings if amount is None else Settings(
            **{**self.settings.__dict__, "amount": float(amount)})
        key = (settings, self.version)
        if key not in self._preview_cache:
            trial = copy.deepcopy(self.module)
            self._with_own_rng(lambda: self._prune(trial, settings))
            if len(self._preview_cache) >= PREVIEW_CACHE_SIZE:  # forget the oldest preview
                del self._preview_cache[next(iter(self._preview_cache))]
            self._preview_cache[key] = self.outcome(trial)
        return self._preview_cache[key]

    def curve(self):
        """``[(amount, sparsity, loss, accuracy), ...]`` over the grid, for these settings.

        ``sparsity`` is the chosen layer's (or the global one). One copy of the
        model per amount; cached until the settings (other than amount) or the
        model change.
        """
        s = self.settings
        key = (s.layer, s.method, s.n, s.dim, self.version)
        if key not in self._curve_cache:
            points = []
            for amount in self.grid:
                result = self.preview(amount)
                sparsity = (result.global_sparsity if s.layer == GLOBAL
                            else result.sparsity[s.layer])
                points.append((amount, sparsity, result.loss, result.accuracy))
            self._curve_cache[key] = points
        return self._curve_cache[key]

    def apply(self):
        """Prune the real model at the current settings (iteratively, on top of earlier pruning)."""
        self.undo_stack.append(self._snapshot())
        try:
            self._rng_state = self._with_own_rng(lambda: self._prune(self.module, self.settings))
        except Exception:
            self.undo_stack.pop()
            raise
        self._changed()
        return self.current()

    def make_permanent(self):
        """``prune.remove`` on every pruned weight: ``weight`` becomes a plain parameter again."""
        self.undo_stack.append(self._snapshot())
        for name in self.layers():
            owner, attr = _owner(self.module, name)
            if _is_pruned(owner, attr):
                self.prune.remove(owner, attr)
        self._changed()
        return self.current()

    def undo(self):
        """Go back to the state before the last ``apply()`` / ``make_permanent()``."""
        if not self.undo_stack:
            raise IndexError("nothing to undo")
        self._restore(self.undo_stack.pop())
        self._changed()
        return self.current()

    def _changed(self):
        self.version += 1
        self._preview_cache.clear()  # every cached preview was computed on the old model
        self._current = None

    def current(self):
        """``outcome()`` of the real model, cached until the explorer changes it.

        After changing the model yourself (training, pruning by hand), call ``refresh()``.
        """
        if self._current is None:
            self._current = self.outcome()
        return self._current

    def refresh(self):
        """Forget everything cached: the model was changed outside the explorer."""
        self._changed()
        self._curve_cache.clear()

    def _snapshot(self):
        """For every weight: its unmasked values, its mask (None when not pruned) and
        the order of its module's parameters (pruning moves ``weight`` to the end)."""
        snapshot = []
        for name in self.layers():
            owner, attr = _owner(self.module, name)
            if _is_pruned(owner, attr):
                original = to_numpy(getattr(owner, attr + "_orig"))
                mask = to_numpy(getattr(owner, attr + "_mask"))
            else:
                original, mask = to_numpy(getattr(owner, attr)), None
            order = [n for n, _ in owner.named_parameters(recurse=False)]
            snapshot.append((name, original, mask, order))
        return snapshot

    def _restore(self, snapshot):
        """Undo with the public API: ``remove``, copy the old values back, re-apply the old mask."""
        for name, original, mask, order in snapshot:
            owner, attr = _owner(self.module, name)
            if _is_pruned(owner, attr):
                self.prune.remove(owner, attr)
            weight = getattr(owner, attr)
            with self.torch.no_grad():
                weight.copy_(self.torch.as_tensor(original))
            if mask is not None:
                mask_tensor = self.torch.as_tensor(mask).to(weight.device)
                self.prune.custom_from_mask(owner, attr, mask=mask_tensor)
            _reorder_parameters(owner, order)

    # -- reading a model ------------------------------------------------------------
    def outcome(self, module=None):
        """Masks, sparsity, pruning names and (with data) loss/accuracy of ``module``
        (default: the real model)."""
        module = self.module if module is None else module
        masks, sparsity = {}, {}
        zeros = total = 0
        for name in self.layers():
            owner, attr = _owner(module, name)
            weight = to_numpy(getattr(owner, attr))
            masks[name] = (to_numpy(getattr(owner, attr + "_mask")) if _is_pruned(owner, attr)
                           else np.ones_like(weight))
            n_zero = int(np.count_nonzero(weight == 0))
            sparsity[name] = n_zero / weight.size
            zeros += n_zero
            total += weight.size
        result = Outcome(masks, sparsity, zeros / total if total else 0.0,
                         pruned_names=pruned_names(module))
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


def _owner(module, qualified):
    """``(submodule, "weight")`` for ``"encoder.0.weight"``."""
    prefix, _, attr = qualified.rpartition(".")
    return dict(module.named_modules())[prefix], attr


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
