"""GradientInspector: every parameter's gradient, what clipping does to it, and how it moves.

``GradientInspectorModel`` (no ipywidgets) runs ``zero_grad`` → forward → loss
→ ``backward`` on a batch and reads each parameter's ``.grad``:

- its norm, mean, std, |max| and fraction of exact zeros (``GradRow``);
- a histogram of ``log10|g|`` over fixed decades (``LOG_EDGES``), so that a
  vanishing gradient (1e-8) and an exploding one (1e+3) show up side by side;
  a gradient of more than ``SAMPLE_SIZE`` entries is histogrammed on a seeded
  random sample of that many (the view says so);
- ``clip_norm(max_norm)``: what ``nn.utils.clip_grad_norm_`` does: the total
  norm it returns (``get_total_norm``, the norm of the per-parameter norms,
  computed once per batch), the clip coefficient ``max_norm / (total_norm +
  1e-6)`` in the gradients' dtype, clamped to 1, and every parameter's norm
  after clipping (its norm times that factor: clipping scales every gradient
  by the same number). ``clip_value(clip_value)``: the same for
  ``clip_grad_value_``, each entry clamped into ``±clip_value`` (read from the
  gradient in slices, never copied whole). The tests check both against the
  real functions on copies. The real ``.grad`` tensors are untouched;
- ``step()``: one ``optimizer.step()`` with the gradients shown (clipped first
  when ``clip_mode`` says so), then the gradients of the next batch. Each
  computed gradient adds a ``StepRecord`` to ``history``: the timeline;
- ``rehearsal()``: the same step taken on deep copies of the module and the
  optimizer (the random number generator put back after it): what the next
  ``step()`` will show, known before it is taken, the real model untouched.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, replace

import numpy as np

from ._common import framework_of, numpy_view, sample_of, stats_of, to_numpy

#: bin edges of the log10|g| histograms: quarter decades from 1e-12 to 1e+4
LOG_EDGES = np.arange(-12.0, 4.0 + 1e-9, 0.25)
CLIP_MODES = ("none", "norm", "value")  # what step() does to .grad before optimizer.step()
CLIP_COEF_EPS = 1e-6  # clip_grad_norm_ divides by total_norm + 1e-6, as in PyTorch
SAMPLE_SIZE = 1 << 20  # a larger gradient's histogram counts a random sample of this many entries
CHUNK = 1 << 20  # entries of a gradient clamped at a time by clip_value (a 4 MB scratch)


@dataclass(frozen=True)
class GradRow:
    """One parameter's gradient, summarised."""

    name: str  # qualified, as in named_parameters(): "0.weight"
    shape: tuple
    stats: object  # widgets._common.Stats of the gradient (mean, std, min, max, norm, zeros)
    log_counts: np.ndarray  # entries per LOG_EDGES bin of log10|g| (exact zeros not counted)
    sampled: int = 0  # entries the histogram counted: numel, or SAMPLE_SIZE for a bigger gradient

    @property
    def abs_max(self):
        return max(abs(self.stats.min), abs(self.stats.max))


@dataclass(frozen=True)
class ClipResult:
    """What ``clip_grad_norm_`` / ``clip_grad_value_`` did to copies of the gradients."""

    kind: str  # "norm" or "value"
    threshold: float  # max_norm or clip_value
    total_norm: float  # the norm before clipping (what clip_grad_norm_ returns)
    clip_coef: float  # max_norm / (total_norm + 1e-6) ("value": nan)
    clip_coef_clamped: float  # min(clip_coef, 1): the factor every gradient is multiplied by
    before: dict  # name -> norm of .grad before clipping
    after: dict  # name -> norm after clipping
    clamped: dict  # name -> fraction of entries changed by the clipping
    total_after: float  # the norm of all clipped gradients together
    changed: float = 0.0  # fraction of ALL entries changed (each parameter weighed by its size)

    @property
    def finite(self):
        """False when the total norm is NaN or inf: clip_grad_norm_ would then multiply every
        gradient by NaN (or raise, with ``error_if_nonfinite=True``)."""
        return bool(np.isfinite(self.total_norm))


@dataclass(frozen=True)
class StepRecord:
    """The gradients of one training step, for the timeline."""

    step: int  # optimizer steps taken before these gradients were computed
    loss: float
    norms: dict  # name -> gradient norm
    total_norm: float  # all gradients as one vector (2-norm)
    clip: str  # what step() did to these gradients: "none", "norm" or "value"


class GradientInspectorModel:
    """Gradients of ``module`` on ``data``, clipping previews and a training timeline.

    ``data``: one batch ``(x, y)`` (every step reuses it: full-batch descent), or
    any iterable of ``(x, y)`` batches such as a ``DataLoader`` (cycled).
    ``loss_fn(output, y)``: default cross-entropy for integer targets and 2-D
    outputs, mean squared error otherwise. ``optimizer``: default SGD with ``lr``.
    """

    def __init__(self, module, data, loss_fn=None, optimizer=None, lr=0.1, norm_type=2.0):
        self.module = module
        self.torch = framework_of(module)  # edutorch or torch: same API
        self.clip_grad = self.torch.nn.utils
        self.loss_fn = loss_fn
        self.norm_type = float(norm_type)
        self.optimizer = optimizer or self.torch.optim.SGD(module.parameters(), lr=lr)
        self._batches = _batch_source(data)
        self.one_batch = _is_one_batch(data)  # every step reuses it: the next batch is known
        self.steps = 0  # optimizer steps taken by this inspector
        self.history = []  # StepRecord per computed gradient
        self.loss = None
        self.rows = ()
        self.summarised = False  # whether rows describe the current gradients
        self._grads = {}  # name -> live .grad tensor of the current batch
        self._norms = {}  # name -> its norm of order norm_type (a 0-d tensor), once per batch
        self._total = None  # get_total_norm of the gradients: what clip_grad_norm_ returns
        self._by_value = {}  # clip_value -> ClipResult for the current gradients
        self.compute()

    # -- gradients ------------------------------------------------------------------
    def named_parameters(self):
        """Parameters that require grad, in ``named_parameters()`` order (depth order)."""
        return [(n, p) for n, p in self.module.named_parameters() if p.requires_grad]

    def compute(self, summarise=True):
        """``zero_grad`` → forward → loss → ``backward`` on the next batch; read the gradients.

        ``summarise=False`` (the steps in the middle of a run): only the norms for the
        timeline, not the statistics and histograms of every gradient (``rows`` keep
        the last ones summarised and ``summarised`` is False until ``summarise()``).
        """
        x, y = next(self._batches)
        self.module.zero_grad()  # every parameter, also those the optimizer does not own
        output = self.module(x)
        loss = self._loss(output, y)
        loss.backward()
        self.loss = float(loss.detach())
        self._grads = {n: p.grad for n, p in self.named_parameters() if p.grad is not None}
        vector_norm = self.torch.linalg.vector_norm
        self._norms = {n: vector_norm(g, self.norm_type) for n, g in self._grads.items()}
        self._total = self.clip_grad.get_total_norm(list(self._norms.values()), self.norm_type)
        self._by_value = {}
        self.summarised = False
        if summarise:
            self.summarise()
        self.history.append(StepRecord(self.steps, self.loss,
                                       {n: float(v) for n, v in self._norms.items()},
                                       float(self._total), "none"))
        return self.rows

    def summarise(self):
        """The statistics and histogram of every current gradient (``rows``); a run of
        steps computes them once, for the gradients it ends with."""
        self.rows = tuple(self._row(n, g) for n, g in self._grads.items())
        self.summarised = True
        return self.rows

    def _loss(self, output, y):
        if self.loss_fn is not None:
            return self.loss_fn(output, y)
        F = self.torch.nn.functional
        if output.dim() == 2 and not y.is_floating_point():
            return F.cross_entropy(output, y)
        return F.mse_loss(output, y.reshape(output.shape).to(output.dtype))

    @staticmethod
    def _row(name, grad):
        values = numpy_view(grad)
        sample = sample_of(values, SAMPLE_SIZE)
        magnitudes = np.abs(sample[sample != 0]).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log10(magnitudes[np.isfinite(magnitudes)])
        logs = np.clip(logs, LOG_EDGES[0], LOG_EDGES[-1])  # ends catch the rest
        counts, _ = np.histogram(logs, bins=LOG_EDGES)
        return GradRow(name, tuple(grad.shape), stats_of(values), counts, sample.size)

    def row(self, name):
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no gradient for {name!r}; parameters with .grad: {list(self._grads)}")

    def grad(self, name):
        """A NumPy copy of the current ``.grad`` of ``name``."""
        self.row(name)  # a clear KeyError for unknown names
        return to_numpy(self._grads[name])

    # -- clipping previews (the real .grad untouched) -------------------------------------
    def clip_norm(self, max_norm):
        """What ``clip_grad_norm_(parameters, max_norm, norm_type)`` would do to the grads.

        The total norm is ``get_total_norm``'s, as clip_grad_norm_ computes it; the
        coefficient is computed the same way, in the same dtype; each gradient is
        multiplied by the clamped coefficient, so its norm is multiplied by it too.
        """
        total = self._total
        coef = float(max_norm) / (total + CLIP_COEF_EPS)  # in the norm's dtype, as PyTorch
        factor = float(coef.clamp(max=1.0))
        before = {n: float(v) for n, v in self._norms.items()}
        after = {n: v * factor for n, v in before.items()}
        # scaling changes every nonzero entry, unless the factor is 1 (or NaN makes all NaN)
        nonzero = {n: self._nonzero(n) for n in before}
        changed = {n: (1.0 if np.isnan(factor) else nonzero[n] if factor < 1.0 else 0.0)
                   for n in before}
        return self._result("norm", max_norm, float(total), float(coef), factor, before, after,
                            changed)

    def _nonzero(self, name):
        """The fraction of nonzero entries of a gradient (from its row's statistics)."""
        for r in self.rows:
            if r.name == name:
                return 1.0 - r.stats.zeros
        return 1.0

    def clip_value(self, clip_value):
        """What ``clip_grad_value_(parameters, clip_value)`` would do: every entry clamped
        into ``[-clip_value, clip_value]``; the norms after and the entries changed.

        Remembered per value until the next gradients: the view asks again whenever the
        ``max_norm`` slider moves, and a big model's gradients take a while to read.
        """
        limit = float(clip_value)
        if limit not in self._by_value:
            before = {n: float(v) for n, v in self._norms.items()}
            after, changed = {}, {}
            for name, grad in self._grads.items():
                after[name], changed[name] = _clamped(numpy_view(grad), limit, self.norm_type)
            self._by_value[limit] = self._result("value", clip_value, float(self._total),
                                                 float("nan"), float("nan"), before, after,
                                                 changed)
        return self._by_value[limit]

    def _result(self, kind, threshold, total, coef, clamped_coef, before, after, changed):
        sizes = {n: g.numel() for n, g in self._grads.items()}
        entries = sum(sizes.values())
        overall = sum(changed[n] * sizes[n] for n in changed) / entries if entries else 0.0
        total_after = _norm_of_norms(list(after.values()), self.norm_type)
        return ClipResult(kind, float(threshold), total, coef, clamped_coef, before, after,
                          changed, total_after, overall)

    # -- training --------------------------------------------------------------------------
    def step(self, count=1, clip_mode="none", max_norm=1.0, clip_value=0.1, summarise=True):
        """``count`` times: clip the current gradients (``clip_mode``), ``optimizer.step()``,
        then compute the gradients of the next batch. Returns the rows: of the last
        gradients, or with ``summarise=False`` those summarised before (see ``compute``)."""
        if clip_mode not in CLIP_MODES:
            raise ValueError(f"clip_mode must be one of {CLIP_MODES}, got {clip_mode!r}")
        for done in range(count):
            parameters = [p for _, p in self.named_parameters()]
            if clip_mode == "norm":
                self.clip_grad.clip_grad_norm_(parameters, max_norm, norm_type=self.norm_type)
            elif clip_mode == "value":
                self.clip_grad.clip_grad_value_(parameters, clip_value)
            self.history[-1] = replace(self.history[-1], clip=clip_mode)
            self.optimizer.step()
            self.steps += 1
            self.compute(summarise=summarise and done == count - 1)
        return self.rows

    def can_rehearse(self):
        """Whether ``rehearsal()`` shows what the next ``step()`` will: one batch (the next
        is known: a loader's next batch cannot be read without taking it) and no hooks
        (a hook may print or record, and would do it once more for the copy)."""
        return self.one_batch and not _has_hooks(self.module, self.optimizer)

    def rehearsal(self, clip_mode="none", max_norm=1.0, clip_value=0.1):
        """A copy of this inspector after ``step(1, clip_mode, max_norm, clip_value)``.

        The step is taken on deep copies of the module and the optimizer (``deepcopy``
        of both at once keeps the optimizer's parameters those of the copied module)
        and of the gradients (a ``Parameter``'s deepcopy leaves out ``.grad``, as in
        PyTorch), and the random number generator is put back afterwards, so the
        real module, optimizer, gradients and generator are as they were: the real
        step that follows draws the same random numbers (dropout) and computes the
        same values.
        """
        shadow = copy.copy(self)  # the batches, the loss and the settings are shared
        shadow.module, shadow.optimizer = copy.deepcopy((self.module, self.optimizer))
        for (_, real), (_, twin) in zip(self.named_parameters(), shadow.named_parameters()):
            twin.grad = None if real.grad is None else real.grad.detach().clone()
        shadow.history = list(self.history)
        generator = self.torch.get_rng_state()
        try:
            shadow.step(1, clip_mode=clip_mode, max_norm=max_norm, clip_value=clip_value)
        finally:
            self.torch.set_rng_state(generator)
        return shadow

    def timeline(self, name=None):
        """``(steps, norms)``: the norm of ``name``'s gradient (default: the total) per record."""
        steps = np.array([r.step for r in self.history])
        if name is None:
            return steps, np.array([r.total_norm for r in self.history])
        return steps, np.array([r.norms.get(name, np.nan) for r in self.history])


def _clamped(values, limit, norm_type):
    """``(norm, fraction changed)`` of ``values`` clamped into ``[-limit, limit]``, read one
    slice of ``CHUNK`` entries at a time (the norm summed in float64)."""
    flat = values.reshape(-1)
    scratch = np.empty(min(flat.size, CHUNK))
    norms, changed = [], 0
    for start in range(0, flat.size, CHUNK):
        part = scratch[:flat[start:start + CHUNK].size]
        np.abs(flat[start:start + CHUNK], out=part, casting="unsafe")
        changed += int(np.count_nonzero(part > limit))
        np.minimum(part, limit, out=part)
        norms.append(_p_norm(part, norm_type))
    return _norm_of_norms(norms, norm_type), changed / max(flat.size, 1)


def _p_norm(magnitudes, p):
    """The p-norm of non-negative values (``inf``: the largest)."""
    if p == np.inf:
        return float(magnitudes.max(initial=0.0))
    if p == 2.0:
        return float(np.sqrt(np.dot(magnitudes, magnitudes)))
    return float(np.sum(magnitudes ** p) ** (1.0 / p))


def _norm_of_norms(norms, p):
    """The norm of several tensors seen as one vector, from their norms (as get_total_norm)."""
    return _p_norm(np.asarray(norms, dtype=np.float64), p) if norms else 0.0


def _is_one_batch(data):
    """Whether ``data`` is one ``(x, y)`` batch (rather than an iterable of batches)."""
    return isinstance(data, (tuple, list)) and len(data) == 2 and hasattr(data[0], "shape")


#: the hooks that run during a step: a module's (forward and backward), a parameter's
#: (``register_hook``: ``_backward_hooks`` in PyTorch, ``_hooks`` in edutorch; after
#: accumulation) and an optimizer's (before and after ``step()``)
MODULE_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
TENSOR_HOOKS = ("_backward_hooks", "_hooks", "_post_accumulate_grad_hooks")
OPTIMIZER_HOOKS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks")


def _has_hooks(module, optimizer):
    """Whether a hook would run during a step of ``module`` and ``optimizer``."""
    owners = [(m, MODULE_HOOKS) for m in module.modules()]
    owners += [(p, TENSOR_HOOKS) for p in module.parameters()]
    owners.append((optimizer, OPTIMIZER_HOOKS))
    return any(getattr(owner, name, None) for owner, names in owners for name in names)


def _batch_source(data):
    """An endless iterator of ``(x, y)``: one batch repeated, or an iterable of batches cycled."""
    if _is_one_batch(data):
        return itertools.repeat(tuple(data))

    def cycle():
        while True:
            empty = True
            for batch in data:
                empty = False
                yield batch[0], batch[1]
            if empty:
                raise ValueError("data yielded no batches")
    return cycle()
