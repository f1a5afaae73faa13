"""TrainEvalExplorer: the same input through a model in ``train()`` and in ``eval()``.

``TrainEvalExplorerModel`` (no ipywidgets) answers three questions with the
public ``nn.Module`` API only:

- *what differs?* ``compare()`` runs the fixed input ``x`` in train mode and in
  eval mode (under ``no_grad``), with forward hooks recording what every
  submodule received and returned. The train-mode pass saves and restores the
  buffers, so looking never moves BatchNorm's running statistics, and it
  draws its random numbers from the explorer's own generator: every call drops
  other units, while the user's random stream is untouched. Each call is
  compared with the previous one: the eval output never changes, the train
  output does (where dropout is involved). After ``next_batch()`` the running
  statistics have moved, so the next call is not compared with the one before.
- *which modules are modal?* A module is modal when the same input gives a
  different output in ``train()`` than in ``eval()``: Dropout, BatchNorm with
  running statistics, or a user's module that checks ``self.training``.
  ``modal_modules()`` finds them by feeding each submodule, alone, the input
  it saw, in both modes. Dropout calls are explained by ``dropout_call``
  (zeroed units, the ``1/(1-p)`` scaling), BatchNorm by ``batch_norm_call``.
- *how do running statistics move?* ``next_batch()`` runs the next batch in
  train mode for real (the buffers change) and records every BatchNorm's
  ``running_mean``, ``running_var`` and ``num_batches_tracked`` (``history``),
  with the factor used: ``momentum``, or ``1/num_batches_tracked`` when
  ``momentum=None`` (a cumulative average).

Looking ahead (what the view does while its controls rest): ``compare_ahead()``
computes the next ``compare()`` and ``prepare_next_batch()`` the next
``next_batch()`` with the comparison after it, both without changing anything
(buffers, steps, history and the explorer's generator are put back). The click
then applies what was computed, while nothing it depends on has changed: the
state after it is the one computing it then would have left.
"""
from __future__ import annotations

import contextlib
import itertools
import time
from dataclasses import dataclass

import numpy as np

from ._common import framework_of, to_numpy

CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")  # route inputs, never modal themselves


@dataclass(frozen=True)
class Call:
    """What one module received (its first input) and returned in one forward call."""

    name: str
    class_name: str
    input: np.ndarray
    output: np.ndarray


@dataclass(frozen=True)
class Comparison:
    """One ``compare()``: the model's output in both modes and every module's call."""

    index: int  # 0 for the first compare()
    steps: int  # batches fed by next_batch() before this call (the buffers it saw)
    train_output: np.ndarray
    eval_output: np.ndarray
    train_calls: dict  # module name -> Call (train mode)
    eval_calls: dict  # module name -> Call (eval mode)
    train_change: float | None  # max |Δ| against the previous compare(); None the first time
    eval_change: float | None   # and after next_batch() (the running statistics moved)

    @property
    def difference(self):
        """max |train output − eval output|."""
        return float(np.max(np.abs(self.train_output - self.eval_output), initial=0.0))


@dataclass(frozen=True)
class Modal:
    """A module whose output for the same input differs between train() and eval()."""

    name: str
    class_name: str
    kind: str  # "dropout", "batchnorm" or "module" (anything else, e.g. a user's class)
    input: np.ndarray  # the input it was given in both modes
    train_output: np.ndarray
    eval_output: np.ndarray
    inside: tuple  # names of modal modules inside it ("" when it is modal on its own)


@dataclass(frozen=True)
class DropoutCall:
    """What a Dropout did in one train-mode call."""

    p: float
    zeroed: np.ndarray  # bool, True where the unit was dropped (input ≠ 0, output = 0)
    visible: np.ndarray  # bool, input ≠ 0: where dropping can be seen (a 0 stays 0 either way)
    scale: float  # 1 / (1 - p): the factor applied to the kept units
    observed_scale: float  # median of output / input over the kept units

    @property
    def fraction(self):
        """Zeroed units among those whose input was not already 0 (about ``p``)."""
        seen = int(self.visible.sum())
        return float(self.zeroed.sum() / seen) if seen else 0.0


@dataclass(frozen=True)
class BatchNormCall:
    """What a BatchNorm normalises with in train() (this batch) and in eval() (running)."""

    batch_mean: np.ndarray  # per channel, over every dim but 1
    batch_var: np.ndarray  # biased (what train() divides by)
    running_mean: np.ndarray | None  # what eval() uses (None without running stats)
    running_var: np.ndarray | None


@dataclass(frozen=True)
class BatchNormState:
    """One BatchNorm's buffers after ``step`` batches fed by ``next_batch()``."""

    step: int
    running_mean: np.ndarray
    running_var: np.ndarray
    num_batches_tracked: int
    momentum: float | None  # the module's setting
    factor: float | None  # weight of the newest batch: momentum, or 1/num_batches_tracked
    batch_mean: np.ndarray | None  # the batch just fed (None for step 0)
    batch_var: np.ndarray | None  # unbiased: what the running_var update uses


class TrainEvalExplorerModel:
    """Train vs eval behaviour of ``module`` on input ``x``; running statistics over batches.

    ``batches``: what ``next_batch()`` feeds, an iterable of input tensors or of
    ``(x, y)`` pairs (a ``DataLoader``), cycled; default: ``x`` itself, again and again.
    """

    def __init__(self, module, x, batches=None):
        self.module = module
        self.torch = framework_of(module)
        self.x = x
        self._batches = _cycle(batches if batches is not None else [x])
        self._peeked = []  # the next batch, taken from ``batches`` by prepare_next_batch()
        #: taking a batch early draws no random number of the user's: a list, or a loader with
        #: its own generator (a shuffling DataLoader without one draws from the global generator)
        self.can_prepare_batches = (batches is None or isinstance(batches, (list, tuple))
                                    or getattr(batches, "generator", None) is not None)
        self._batch_ahead = None  # (tensors, key: _depends_on; state fed, comparison, generator)
        self._rng_state = self.torch.get_rng_state()
        self.comparisons = []
        self._ahead = None  # (tensors, key: _depends_on; the next comparison, generator after it)
        self.compare_seconds = 0.0  # what the last comparison computed took (both passes)
        self.history = {name: [self._state(m, 0, None)] for name, m in self.batch_norms()}
        self.steps = 0
        self._modal = None

    # -- which modules -----------------------------------------------------------------
    def named_submodules(self):
        """Every submodule but the root and the containers, in ``named_modules()`` order."""
        return [(n, m) for n, m in self.module.named_modules()
                if n and type(m).__name__ not in CONTAINERS]

    def batch_norms(self):
        """BatchNorm layers with running statistics."""
        base = self.torch.nn.modules.batchnorm._BatchNorm
        return [(n, m) for n, m in self.module.named_modules()
                if isinstance(m, base) and m.running_mean is not None]

    def kind_of(self, module):
        nn = self.torch.nn.modules
        if isinstance(module, nn.dropout._DropoutNd):
            return "dropout"
        if isinstance(module, nn.batchnorm._BatchNorm):
            return "batchnorm"
        return "module"

    # -- running the model without disturbing it ------------------------------------
    def _with_own_rng(self, action):
        """Run ``action`` with the explorer's generator; the user's state is restored."""
        users_state = self.torch.get_rng_state()
        self.torch.set_rng_state(self._rng_state)
        try:
            return action()
        finally:
            self._rng_state = self.torch.get_rng_state()
            self.torch.set_rng_state(users_state)

    def _run(self, module, inputs, training, keep_buffers=True, record=()):
        """``module(*inputs)`` in train or eval mode under ``no_grad``; modes (and buffers,
        with ``keep_buffers``) restored. ``record``: ``(name, submodule)`` pairs whose
        calls are returned as ``{name: Call}``."""
        modes = [(m, m.training) for m in module.modules()]
        saved = ([(b, b.detach().clone()) for b in module.buffers()] if keep_buffers else [])
        calls, handles = {}, []
        for name, sub in record:
            handles.append(sub.register_forward_hook(_recorder(name, calls)))
        module.train(training)
        try:
            with self.torch.no_grad():
                output = self._with_own_rng(lambda: module(*inputs))
        finally:
            for handle in handles:
                handle.remove()
            for m, mode in modes:
                m.training = mode
            with self.torch.no_grad():
                for buffer, value in saved:
                    buffer.copy_(value)
        return to_numpy(output), calls

    # -- train vs eval -------------------------------------------------------------------
    def compare(self):
        """``x`` through the model in train() and in eval(); returns a ``Comparison``.

        The one ``compare_ahead()`` computed, when nothing it depends on has changed since."""
        ahead, self._ahead = self._ahead, None
        if self._ready(ahead):
            comparison, self._rng_state = ahead[2], ahead[3]
        else:
            comparison = self._compare()
        self.comparisons.append(comparison)
        return comparison

    def compare_ahead(self):
        """What the next ``compare()`` will return, computed now (while the controls rest)
        without changing anything: the explorer's generator is put back, so whatever runs
        next (a batch, or ``compare()`` after the model changed) draws the same numbers.
        Asked again while nothing changed, it returns the same comparison."""
        if self._ready(self._ahead):
            return self._ahead[2]
        with self._looking_ahead():
            comparison = self._compare()
            after = self._rng_state
        self._ahead = (*self._depends_on(), comparison, after)
        return comparison

    def _ready(self, ahead):
        """Whether ``ahead`` (``_ahead``, ``_batch_ahead``) was computed for the state now."""
        return ahead is not None and ahead[1] == self._depends_on()[1]

    @contextlib.contextmanager
    def _looking_ahead(self):
        """Around a computation that puts back what it changes (buffer values, the generator):
        what was computed ahead before it stays valid after it. Putting a buffer back is an
        in-place copy, which bumps its ``_version``: the keys are taken again."""
        key, rng = self._depends_on()[1], self._rng_state
        try:
            yield
        finally:
            self._rng_state = rng
            tensors, now = self._depends_on()
            for name in ("_ahead", "_batch_ahead"):
                kept = getattr(self, name)
                if kept is not None and kept[1] == key:
                    setattr(self, name, (tensors, now, *kept[2:]))

    def _depends_on(self):
        """``(tensors, key)``: what a comparison depends on besides the generator. The key:
        the comparisons so far, the batches fed, and the ``id`` and ``_version`` (bumped by
        every in-place change) of every parameter, buffer and ``x``; the tensors are kept
        with it, so that no other tensor can take one of those ids."""
        tensors = (*self.module.parameters(), *self.module.buffers(), self.x)
        return tensors, (len(self.comparisons), self.steps,
                         tuple((id(t), t._version) for t in tensors))

    def _compare(self):
        started = time.perf_counter()
        record = self.named_submodules()
        train_out, train_calls = self._run(self.module, (self.x,), True, record=record)
        eval_out, eval_calls = self._run(self.module, (self.x,), False, record=record)
        previous = self.comparisons[-1] if self.comparisons else None
        if previous is not None and previous.steps != self.steps:
            previous = None  # the buffers changed in between: nothing to compare with
        comparison = Comparison(
            len(self.comparisons), self.steps, train_out, eval_out, train_calls, eval_calls,
            None if previous is None else _max_change(train_out, previous.train_output),
            None if previous is None else _max_change(eval_out, previous.eval_output))
        self.compare_seconds = time.perf_counter() - started
        return comparison

    def modal_modules(self):
        """Each submodule fed, alone, the input it saw in eval mode, in both modes.

        Computed once (on ``x``); a parent of a modal module is listed too, with
        ``inside`` naming the modal modules it contains.
        """
        if self._modal is None:
            submodules = self.named_submodules()
            _, calls = self._run(self.module, (self.x,), False, record=submodules)
            found = []
            for name, m in submodules:
                if name not in calls:
                    continue  # not called by forward()
                given = self.torch.as_tensor(calls[name].input)
                train_out, _ = self._run(m, (given,), True)
                eval_out, _ = self._run(m, (given,), False)
                if train_out.shape != eval_out.shape or not np.array_equal(train_out, eval_out):
                    found.append(Modal(name, type(m).__name__, self.kind_of(m),
                                       calls[name].input, train_out, eval_out, ()))
            names = [f.name for f in found]
            self._modal = [Modal(**{**f.__dict__, "inside": tuple(
                n for n in names if n.startswith(f.name + "."))}) for f in found]
        return list(self._modal)

    def dropout_call(self, name, comparison=None):
        """Which units the Dropout ``name`` zeroed in the train pass, and the scaling."""
        comparison = comparison or self.comparisons[-1]
        module = dict(self.module.named_modules())[name]
        call = comparison.train_calls[name]
        zeroed = (call.output == 0) & (call.input != 0)
        kept = (call.output != 0) & (call.input != 0)
        ratios = call.output[kept] / call.input[kept]
        p = float(module.p)
        return DropoutCall(p, zeroed, call.input != 0, 1.0 / (1.0 - p) if p < 1 else float("inf"),
                           float(np.median(ratios)) if ratios.size else float("nan"))

    def batch_norm_call(self, name, comparison=None):
        """The batch statistics train() used for ``x`` next to the running ones eval() used."""
        comparison = comparison or self.comparisons[-1]
        module = dict(self.module.named_modules())[name]
        mean, var = _channel_stats(comparison.train_calls[name].input, ddof=0)
        running = module.running_mean is not None
        return BatchNormCall(mean, var,
                             to_numpy(module.running_mean) if running else None,
                             to_numpy(module.running_var) if running else None)

    # -- running statistics over batches ---------------------------------------------
    def next_batch(self, count=1):
        """Feed ``count`` batches in train mode (buffers really change); record the states.

        The first is the one ``prepare_next_batch()`` computed, when nothing it depends on
        has changed since: its buffers, history and generator are taken as it left them,
        and the next ``compare()`` returns the comparison computed after it."""
        ahead, self._batch_ahead = self._batch_ahead, None
        for i in range(count):
            if i == 0 and self._ready(ahead):
                self._peeked.clear()  # the batch it fed
                fed, comparison, rng = ahead[2:]
                self._restore(fed)
                self._ahead = (*self._depends_on(), comparison, rng)
            else:
                self._feed(self._peeked.pop() if self._peeked else next(self._batches))
        return self.steps

    def prepare_next_batch(self):
        """What the next ``next_batch()`` (one batch) and the ``compare()`` after it will do,
        computed now without changing anything (the batch is taken from ``batches`` now and
        kept for it); returns that comparison (the same when asked again while nothing
        changed). ``after_next_batch()`` shows the state it leaves."""
        if self._ready(self._batch_ahead):
            return self._batch_ahead[3]
        if not self._peeked:
            self._peeked.append(next(self._batches))
        with self._looking_ahead():
            before = self._snapshot()
            self._feed(self._peeked[0])
            fed = self._snapshot()
            comparison = self._compare()
            after = self._rng_state
            self._restore(before)
        self._batch_ahead = (*self._depends_on(), fed, comparison, after)
        return comparison

    @contextlib.contextmanager
    def after_next_batch(self):
        """The explorer in the state ``prepare_next_batch()`` computed (buffers, steps,
        history), for the ``with`` block only (to draw it); yields the comparison."""
        fed, comparison = self._batch_ahead[2:4]
        with self._looking_ahead():
            before = self._snapshot()
            self._restore(fed)
            try:
                yield comparison
            finally:
                self._restore(before)

    def _feed(self, batch):
        """``batch`` through the model in train mode: its BatchNorms' buffers move."""
        norms = self.batch_norms()
        _, calls = self._run(self.module, (batch,), True, keep_buffers=False, record=norms)
        self.steps += 1
        for name, m in norms:
            self.history[name].append(self._state(m, self.steps, calls.get(name)))

    def _snapshot(self):
        """What feeding a batch changes: the buffers' values, the steps, the history, the
        explorer's generator."""
        return ([b.detach().clone() for b in self.module.buffers()], self.steps,
                {name: list(states) for name, states in self.history.items()}, self._rng_state)

    def _restore(self, snapshot):
        values, self.steps, history, self._rng_state = snapshot
        with self.torch.no_grad():
            for buffer, value in zip(self.module.buffers(), values):
                buffer.copy_(value)
        for name, states in history.items():
            self.history[name][:] = states

    def _state(self, module, step, call):
        nbt = int(module.num_batches_tracked)
        momentum = module.momentum
        factor = (momentum if momentum is not None else (1.0 / nbt if nbt else None))
        batch_mean = batch_var = None
        if call is not None:
            batch_mean, batch_var = _channel_stats(call.input, ddof=1)
        return BatchNormState(step, to_numpy(module.running_mean), to_numpy(module.running_var),
                              nbt, momentum, factor if step else None, batch_mean, batch_var)


def _recorder(name, calls):
    def hook(module, args, output):
        calls[name] = Call(name, type(module).__name__, to_numpy(args[0]), to_numpy(output))
    return hook


def _max_change(new, old):
    if new.shape != old.shape:
        return float("inf")
    return float(np.max(np.abs(new - old), initial=0.0))


def _channel_stats(values, ddof):
    """Mean and variance per channel (dim 1) over every other dim, as BatchNorm computes them."""
    values = np.asarray(values, dtype=np.float64)
    axes = (0,) + tuple(range(2, values.ndim))
    return values.mean(axis=axes), values.var(axis=axes, ddof=ddof)


def _cycle(batches):
    """Endless inputs: tensors, or the first element of ``(x, y)`` pairs."""
    for batch in itertools.cycle(batches) if isinstance(batches, (list, tuple)) else _loop(batches):
        yield batch[0] if isinstance(batch, (tuple, list)) else batch


def _loop(iterable):
    while True:
        empty = True
        for item in iterable:
            empty = False
            yield item
        if empty:
            raise ValueError("batches yielded nothing")
