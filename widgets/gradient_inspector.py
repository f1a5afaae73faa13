"""GradientInspector: every parameter's gradient, what clipping does to it, and how it moves.

``GradientInspectorModel`` (no ipywidgets) runs ``zero_grad`` → forward → loss
→ ``backward`` on a batch and reads each parameter's ``.grad``:

- its norm, mean, std, |max| and fraction of exact zeros (``GradRow``);
- a histogram of ``log10|g|`` over fixed decades (``LOG_EDGES``), so that a
  vanishing gradient (1e-8) and an exploding one (1e+3) show up side by side;
- ``clip_norm(max_norm)``: what ``nn.utils.clip_grad_norm_`` does, found by
  *calling it* on copies of the gradients: the total norm it returns, the clip
  coefficient ``max_norm / (total_norm + 1e-6)`` clamped to 1, and every
  parameter's norm after clipping. ``clip_value(clip_value)``: the same for
  ``clip_grad_value_``. The real ``.grad`` tensors are untouched;
- ``step()``: one ``optimizer.step()`` with the gradients shown (clipped first
  when ``clip_mode`` says so), then the gradients of the next batch. Each
  computed gradient adds a ``StepRecord`` to ``history``: the timeline.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

from ._common import framework_of, stats_of, to_numpy

#: bin edges of the log10|g| histograms: quarter decades from 1e-12 to 1e+4
LOG_EDGES = np.arange(-12.0, 4.0 + 1e-9, 0.25)
CLIP_MODES = ("none", "norm", "value")  # what step() does to .grad before optimizer.step()
CLIP_COEF_EPS = 1e-6  # clip_grad_norm_ divides by total_norm + 1e-6, as in PyTorch


@dataclass(frozen=True)
class GradRow:
    """One parameter's gradient, summarised."""

    name: str  # qualified, as in named_parameters(): "0.weight"
    shape: tuple
    stats: object  # widgets._common.Stats of the gradient (mean, std, min, max, norm, zeros)
    log_counts: np.ndarray  # entries per LOG_EDGES bin of log10|g| (exact zeros not counted)

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
        self.steps = 0  # optimizer steps taken by this inspector
        self.history = []  # StepRecord per computed gradient
        self.loss = None
        self.rows = ()
        self._grads = {}  # name -> live .grad tensor of the current batch
        self.compute()

    # -- gradients ------------------------------------------------------------------
    def named_parameters(self):
        """Parameters that require grad, in ``named_parameters()`` order (depth order)."""
        return [(n, p) for n, p in self.module.named_parameters() if p.requires_grad]

    def compute(self):
        """``zero_grad`` → forward → loss → ``backward`` on the next batch; read the gradients."""
        x, y = next(self._batches)
        self.module.zero_grad()  # every parameter, also those the optimizer does not own
        output = self.module(x)
        loss = self._loss(output, y)
        loss.backward()
        self.loss = float(loss.detach())
        self._grads = {n: p.grad for n, p in self.named_parameters() if p.grad is not None}
        self.rows = tuple(self._row(n, g) for n, g in self._grads.items())
        self.history.append(StepRecord(self.steps, self.loss,
                                       {r.name: r.stats.norm for r in self.rows},
                                       float(np.sqrt(sum(r.stats.norm ** 2 for r in self.rows))),
                                       "none"))
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
        values = to_numpy(grad).astype(np.float64)
        magnitudes = np.abs(values[values != 0])
        logs = np.clip(np.log10(magnitudes), LOG_EDGES[0], LOG_EDGES[-1])  # ends catch the rest
        counts, _ = np.histogram(logs, bins=LOG_EDGES)
        return GradRow(name, tuple(grad.shape), stats_of(values), counts)

    def row(self, name):
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no gradient for {name!r}; parameters with .grad: {list(self._grads)}")

    def grad(self, name):
        """A NumPy copy of the current ``.grad`` of ``name``."""
        self.row(name)  # a clear KeyError for unknown names
        return to_numpy(self._grads[name])

    # -- clipping previews (on copies) --------------------------------------------------
    def _copies(self):
        """One stand-in tensor per gradient whose ``.grad`` is a copy of it (clipping copies)."""
        stand_ins = []
        for g in self._grads.values():
            stand_in = g.detach()
            stand_in.grad = g.detach().clone()
            stand_ins.append(stand_in)
        return stand_ins

    def clip_norm(self, max_norm):
        """``clip_grad_norm_(parameters, max_norm, norm_type)`` applied to copies of the grads."""
        copies = self._copies()
        total = self.clip_grad.clip_grad_norm_(copies, max_norm, norm_type=self.norm_type)
        coef = float(max_norm) / (total + CLIP_COEF_EPS)  # in the norm's dtype, as PyTorch
        return self._result("norm", max_norm, copies, float(total), float(coef),
                            float(coef.clamp(max=1.0)))

    def clip_value(self, clip_value):
        """``clip_grad_value_(parameters, clip_value)`` applied to copies of the grads."""
        copies = self._copies()
        self.clip_grad.clip_grad_value_(copies, clip_value)
        total = self.clip_grad.get_total_norm(list(self._grads.values()), self.norm_type)
        return self._result("value", clip_value, copies, float(total), float("nan"), float("nan"))

    def _result(self, kind, threshold, copies, total, coef, clamped_coef):
        names = list(self._grads)
        after = {n: float(c.grad.norm(self.norm_type)) for n, c in zip(names, copies)}
        changed = {n: float((c.grad != self._grads[n]).float().mean())
                   for n, c in zip(names, copies)}
        total_after = float(self.clip_grad.get_total_norm([c.grad for c in copies],
                                                          self.norm_type))
        before = {n: float(g.norm(self.norm_type)) for n, g in self._grads.items()}
        return ClipResult(kind, float(threshold), total, coef, clamped_coef, before, after,
                          changed, total_after)

    # -- training --------------------------------------------------------------------------
    def step(self, count=1, clip_mode="none", max_norm=1.0, clip_value=0.1):
        """``count`` times: clip the current gradients (``clip_mode``), ``optimizer.step()``,
        then compute the gradients of the next batch. Returns the new rows."""
        if clip_mode not in CLIP_MODES:
            raise ValueError(f"clip_mode must be one of {CLIP_MODES}, got {clip_mode!r}")
        for _ in range(count):
            parameters = [p for _, p in self.named_parameters()]
            if clip_mode == "norm":
                self.clip_grad.clip_grad_norm_(parameters, max_norm, norm_type=self.norm_type)
            elif clip_mode == "value":
                self.clip_grad.clip_grad_value_(parameters, clip_value)
            self.history[-1] = replace(self.history[-1], clip=clip_mode)
            self.optimizer.step()
            self.steps += 1
            self.compute()
        return self.rows

    def timeline(self, name=None):
        """``(steps, norms)``: the norm of ``name``'s gradient (default: the total) per record."""
        steps = np.array([r.step for r in self.history])
        if name is None:
            return steps, np.array([r.total_norm for r in self.history])
        return steps, np.array([r.norms.get(name, np.nan) for r in self.history])


def _batch_source(data):
    """An endless iterator of ``(x, y)``: one batch repeated, or an iterable of batches cycled."""
    if isinstance(data, (tuple, list)) and len(data) == 2 and hasattr(data[0], "shape"):
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
