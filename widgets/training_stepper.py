"""TrainingStepper: the training loop, one stage at a time.

``TrainingStepperModel`` (no ipywidgets) runs the loop every PyTorch
tutorial writes by hand, one line per call of ``next_stage()``::

    for x, y in batches:
        optimizer.zero_grad()          # 1. .grad cleared (set to None)
        output = model(x)              # 2. forward
        loss = loss_fn(output, y)      # 3. the loss
        loss.backward()                # 4. .grad filled
        optimizer.step()               # 5. parameters move by Δ; optimizer state updated
        scheduler.step()               #    (when a scheduler is chosen) next learning rate

and returns a ``StageResult`` saying what that line changed: each parameter's
``.grad`` before/after, the update ``Δ = p_after - p_before``, and the
optimizer's per-parameter state (``momentum_buffer``; Adam's ``exp_avg``,
``exp_avg_sq`` and ``step``; RMSprop's ``square_avg``), read from
``optimizer.state`` exactly as PyTorch keeps it. ``run(n)`` trains ``n`` whole
iterations in chunks and can be stopped between two iterations
(``request_stop()``); the held-out set is evaluated after every chunk.
Optimizer, learning rate and scheduler can be changed between any two stages.
Only the API PyTorch and edutorch share is used, so a real ``torch`` model works too.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ._common import framework_of, norm_of, numpy_view, to_numpy

STAGES = ("zero_grad", "forward", "loss", "backward", "step")
CODE = {
    "zero_grad": "optimizer.zero_grad()",
    "forward": "output = model(x)",
    "loss": "loss = loss_fn(output, y)",
    "backward": "loss.backward()",
    "step": "optimizer.step()",
}
#: each choice of the optimizer dropdown: the class in ``torch.optim`` and its arguments
OPTIMIZERS = {
    "SGD": ("SGD", {}),
    "SGD+momentum": ("SGD", {"momentum": 0.9}),
    "Adam": ("Adam", {}),
    "AdamW": ("AdamW", {"weight_decay": 0.01}),
    "RMSprop": ("RMSprop", {}),
}
#: each choice of the scheduler dropdown: the class in ``torch.optim.lr_scheduler``
#: and its arguments (stepped once per optimizer step)
SCHEDULERS = {
    "none": None,
    "StepLR": ("StepLR", {"step_size": 50, "gamma": 0.5}),
    "ExponentialLR": ("ExponentialLR", {"gamma": 0.99}),
    "CosineAnnealingLR": ("CosineAnnealingLR", {"T_max": 300}),
}


def build_optimizer(optim, name, params, lr):
    """``optim.SGD(params, lr=lr, momentum=0.9)`` etc., from the ``OPTIMIZERS`` table."""
    cls, kwargs = OPTIMIZERS[name]
    return getattr(optim, cls)(params, lr=lr, **kwargs)


def build_scheduler(lr_scheduler, name, optimizer):
    """``lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)`` etc.; None for "none"."""
    if SCHEDULERS[name] is None:
        return None
    cls, kwargs = SCHEDULERS[name]
    return getattr(lr_scheduler, cls)(optimizer, **kwargs)


def call_arguments(first, kwargs):
    """``"model.parameters(), lr=0.1, momentum=0.9"``: a call's arguments as Python source."""
    return ", ".join([first] + [f"{k}={v!r}" for k, v in kwargs.items()])


@dataclass(frozen=True)
class ParamChange:
    """What one stage did to one parameter.

    The arrays are NumPy *views* of the tensors the stage left (the ``.grad`` before
    and after, the optimizer state), not copies: they stay right until the next
    stage changes those tensors. When the stage left ``.grad`` alone, ``grad_before``
    and ``grad_after`` are the same array (its norm is computed once). Only ``delta``
    needs a copy (of the values before ``step()``), and it becomes the difference in
    place, in a buffer that the next ``step()`` reuses.
    """

    name: str
    shape: tuple
    grad_before: object  # NumPy view of .grad before the stage, or None
    grad_after: object  # ... after it
    delta: object  # p_after - p_before (NumPy), or None when the stage did not touch p
    value: object  # NumPy view of p after the stage (read it before the next stage)
    state: dict  # optimizer.state[p] after the stage: {key: float or NumPy view}

    @cached_property  # computed once per stage, on demand (a frozen dataclass may cache)
    def norm(self):
        """|p| after the stage."""
        return norm_of(self.value)

    @cached_property
    def delta_norm(self):
        return None if self.delta is None else norm_of(self.delta)

    @cached_property
    def grad_norm(self):
        """|p.grad| after the stage (None: no .grad)."""
        return None if self.grad_after is None else norm_of(self.grad_after)

    @cached_property
    def grad_before_norm(self):
        if self.grad_before is None:
            return None
        return self.grad_norm if self.grad_before is self.grad_after else norm_of(self.grad_before)


@dataclass(frozen=True)
class StageResult:
    """One stage that ran: which line, and what it changed."""

    stage: str
    iteration: int  # 0 for the first batch
    params: tuple  # ParamChange per parameter (named_parameters order)
    output: object = None  # NumPy copy of the model's output (forward and later stages)
    loss: float | None = None
    accuracy: float | None = None  # on this batch, for classification
    lr: float | None = None  # the learning rate the step used
    next_lr: float | None = None  # after scheduler.step()

    @property
    def code(self):
        return CODE[self.stage]

    def summary(self):
        """One line about what changed."""
        if self.stage == "zero_grad":
            had = sum(p.grad_before is not None for p in self.params)
            now = "None" if all(p.grad_after is None for p in self.params) else "zeros"
            return f"batch {self.iteration}: .grad of {had} parameters cleared (now {now})"
        if self.stage == "forward":
            acc = "" if self.accuracy is None else f", batch accuracy {self.accuracy:.1%}"
            return f"output {tuple(self.output.shape)} computed{acc}; no parameter changed"
        if self.stage == "loss":
            return f"loss = {self.loss:.4f} (a scalar with a grad_fn)"
        if self.stage == "backward":
            filled = sum(p.grad_after is not None for p in self.params)
            total = np.sqrt(sum(p.grad_norm ** 2 for p in self.params if p.grad_after is not None))
            return f".grad filled for {filled} parameters, total norm {total:.4g}"
        biggest = max(self.params, key=lambda p: p.delta_norm or 0.0)
        text = (f"parameters updated with lr {self.lr:.4g}; largest |Δ| {biggest.delta_norm:.3g} "
                f"({biggest.name})")
        if self.next_lr is not None and self.next_lr != self.lr:
            text += f"; scheduler: lr → {self.next_lr:.4g}"
        return text


def _state_view(state):
    """``optimizer.state[p]`` as plain values: 0-d tensors become floats, others NumPy views."""
    out = {}
    for key, value in state.items():
        if hasattr(value, "detach"):
            value = numpy_view(value)
            out[key] = float(value) if value.size == 1 and value.ndim == 0 else value
        else:
            out[key] = value
    return out


class TrainingStepperModel:
    """The loop ``zero_grad → forward → loss → backward → step``, one stage per call.

    ``train``/``test``: ``(x, y)`` tensors (``test`` optional: the held-out set);
    ``loss_fn``: default ``nn.CrossEntropyLoss()``; ``optimizer``: a key of
    ``OPTIMIZERS``; ``scheduler``: a key of ``SCHEDULERS``; batches of
    ``batch_size`` drawn without replacement, reshuffled every epoch (``seed``).
    """

    def __init__(self, model, train, test=None, loss_fn=None, optimizer="SGD", lr=0.1,
                 scheduler="none", batch_size=32, seed=0):
        self.model = model
        self.lib = framework_of(model)
        self.train_x, self.train_y = train
        self.test = test
        self.loss_fn = loss_fn if loss_fn is not None else self.lib.nn.CrossEntropyLoss()
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)
        self.names = [name for name, _ in model.named_parameters()]
        self.stage_index = 0  # the next stage to run
        self.stages_run = 0  # stages run so far: which stage ``last`` is (a view keeps pictures by it)
        self.versions_before = None  # versions() when the last stage began
        self.iteration = 0  # batches started
        self.steps = 0  # optimizer steps taken
        self.history = []  # per optimizer step: {"step", "loss", "accuracy", "lr"}
        self.evaluations = []  # {"step", "loss", "accuracy"} on the held-out set
        self.last = None  # the last StageResult
        self._order, self._cursor = np.empty(0, dtype=np.int64), 0
        self._step_buffers = []  # the arrays of the last step's Δ, reused by the next step
        self._stop = False
        self.optimizer_name, self.scheduler_name, self.lr = optimizer, scheduler, lr
        self.optimizer = self.scheduler = None
        self.set_optimizer(optimizer, lr)
        self.set_scheduler(scheduler)

    # -- settings, changeable between stages ----------------------------------------------
    def set_optimizer(self, name, lr=None):
        """A fresh optimizer (its state starts empty) on the model's parameters."""
        if name not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {name!r}; choose one of {list(OPTIMIZERS)}")
        self.lr = self.lr if lr is None else lr
        self.optimizer_name = name
        self.optimizer_steps = 0  # steps taken by this optimizer (0: its state is empty)
        self.optimizer = build_optimizer(self.lib.optim, name, self.model.parameters(), self.lr)
        if self.scheduler is not None:
            self.set_scheduler(self.scheduler_name)
        if self.last is not None:  # what is shown now is the new optimizer's state: empty
            self.last = replace(self.last, params=tuple(replace(p, state={})
                                                        for p in self.last.params))

    def set_lr(self, lr):
        """Write ``lr`` into every param group (the schedule restarts from it)."""
        self.lr = lr
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.set_scheduler(self.scheduler_name)

    def set_scheduler(self, name):
        """A new schedule starting at the current learning rate (``"none"``: constant lr)."""
        if name not in SCHEDULERS:
            raise ValueError(f"unknown scheduler {name!r}; choose one of {list(SCHEDULERS)}")
        self.scheduler_name = name
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr
            group.pop("initial_lr", None)  # so the new schedule starts from self.lr
        self.scheduler = build_scheduler(self.lib.optim.lr_scheduler, name, self.optimizer)

    def current_lr(self):
        return float(self.optimizer.param_groups[0]["lr"])

    @property
    def next_stage_name(self):
        return STAGES[self.stage_index]

    def next_stage_code(self):
        """The line the next stage runs: ``"optimizer.step()"``."""
        return CODE[self.next_stage_name]

    # -- one stage ----------------------------------------------------------------------------
    def next_stage(self):
        """Run the next line of the loop and return what it changed (a ``StageResult``).

        Nothing is copied but what the stage overwrites in place: the values
        before ``step()`` (for Δ, into the buffers of the previous step) and,
        before ``backward()``, a ``.grad`` that is not None (accumulation adds into it).
        """
        stage = STAGES[self.stage_index]
        self.versions_before = self.versions()
        parameters = list(self.model.parameters())
        copy_grads = stage == "backward"
        grad_tensors = [p.grad for p in parameters]
        grads_before = [None if g is None else (to_numpy(g) if copy_grads else numpy_view(g))
                        for g in grad_tensors]
        values_before = self._values_before_step(parameters) if stage == "step" else None
        extra = getattr(self, "_" + stage)()
        state = self.optimizer.state
        params = []
        for i, (name, p) in enumerate(zip(self.names, parameters)):
            value = numpy_view(p)
            delta = None
            if values_before is not None:  # Δ = after - before, written over the copy
                delta = np.subtract(value, values_before[i], out=values_before[i])
            if stage not in ("zero_grad", "backward") and p.grad is grad_tensors[i]:
                grad_after = grads_before[i]  # .grad left alone: the same array
            else:
                grad_after = None if p.grad is None else numpy_view(p.grad)
            params.append(ParamChange(
                name, tuple(p.shape), grads_before[i], grad_after, delta, value,
                _state_view(state[p]) if p in state else {}))
        self.last = StageResult(stage, self.iteration - 1, tuple(params), **extra)
        self.stage_index = (self.stage_index + 1) % len(STAGES)
        self.stages_run += 1
        return self.last

    def _values_before_step(self, parameters):
        """Copies of the parameters' values, for Δ: written into the previous step's Δ
        arrays when they fit (a big model's copy is then not allocated anew every step;
        the previous step's ``delta`` is overwritten)."""
        old = self._step_buffers
        if len(old) == len(parameters) and all(
                b.shape == tuple(p.shape) and b.dtype == numpy_view(p).dtype
                for b, p in zip(old, parameters)):
            for buffer, p in zip(old, parameters):
                np.copyto(buffer, numpy_view(p))
        else:
            self._step_buffers = [to_numpy(p) for p in parameters]
        return self._step_buffers

    def _zero_grad(self):
        self.x, self.y = self._next_batch()
        self.iteration += 1
        self.optimizer.zero_grad()
        self.output = self.loss = None
        return {}

    def _forward(self):
        # the modes are the user's: model.train() by default, or e.g. a frozen body left in eval()
        self.output = self.model(self.x)
        return {"output": to_numpy(self.output), "accuracy": self._accuracy(self.output, self.y)}

    def _loss(self):
        self.loss = self.loss_fn(self.output, self.y)
        return {"output": to_numpy(self.output), "loss": float(self.loss.item()),
                "accuracy": self._accuracy(self.output, self.y)}

    def _backward(self):
        self.loss.backward()
        return {"loss": float(self.loss.item())}

    def _step(self):
        lr = self.current_lr()
        self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        self.steps += 1
        self.optimizer_steps += 1
        loss, accuracy = float(self.loss.item()), self._accuracy(self.output, self.y)
        self.history.append({"step": self.steps, "loss": loss, "accuracy": accuracy, "lr": lr})
        return {"loss": loss, "accuracy": accuracy, "lr": lr, "next_lr": self.current_lr()}

    def _next_batch(self):
        """The next ``batch_size`` samples of a shuffled epoch (a new shuffle per epoch)."""
        n = len(self.train_y)
        if self._cursor >= len(self._order):
            self._order, self._cursor = self.rng.permutation(n), 0
        index = self._order[self._cursor:self._cursor + self.batch_size]
        self._cursor += self.batch_size
        index = self.lib.tensor(index)
        return self.train_x[index], self.train_y[index]

    @staticmethod
    def _accuracy(output, y):
        if output.ndim != 2 or y.ndim != 1 or y.dtype.is_floating_point:
            return None
        return float((output.argmax(1) == y).float().mean().item())

    # -- whole iterations -----------------------------------------------------------------------
    def finish_iteration(self):
        """Run the remaining stages of the current batch (all five when none is pending)."""
        while True:
            result = self.next_stage()
            if result.stage == "step":
                return result

    def run(self, steps, chunk=10):
        """Train ``steps`` whole iterations; a generator that yields after every ``chunk``.

        Each yield is ``(done, steps)``; the held-out set (when given) is
        evaluated at every yield. ``request_stop()`` (e.g. from a button while
        the caller awaits between chunks) ends the run before the next iteration.
        """
        self._stop = False
        done = 0
        while done < steps and not self._stop:
            self.finish_iteration()
            done += 1
            if done % chunk == 0 or done == steps or self._stop:
                self.evaluate()
                yield done, steps
        if done < steps:  # stopped: report where we are
            self.evaluate()
            yield done, steps
        self._stop = False

    def run_all(self, steps, chunk=10):
        """``run`` without pausing: the number of iterations done."""
        done = 0
        for done, _ in self.run(steps, chunk):  # noqa: B007 (the last value is the answer)
            pass
        return done

    def request_stop(self, stop=True):
        """Ask a running ``run`` to stop before its next iteration (``False``: take it back)."""
        self._stop = stop

    @property
    def stopping(self):
        return self._stop

    def evaluate(self):
        """Loss and accuracy on the held-out set (``model.eval()``, no grad); None without one."""
        if self.test is None:
            return None
        x, y = self.test
        modes = [(m, m.training) for m in self.model.modules()]
        self.model.eval()
        with self.lib.no_grad():
            output = self.model(x)
            record = {"step": self.steps, "loss": float(self.loss_fn(output, y).item()),
                      "accuracy": self._accuracy(output, y)}
        for m, training in modes:  # each module back in its own mode (model.train() would set all)
            m.train(training)
        if self.evaluations and self.evaluations[-1]["step"] == self.steps:
            self.evaluations[-1] = record
        else:
            self.evaluations.append(record)
        return record

    # -- reading ------------------------------------------------------------------------------
    def state_keys(self):
        """The optimizer's per-parameter state names now (``[]`` before the first step)."""
        keys = []
        for p in self.model.parameters():
            for key in self.optimizer.state.get(p, ()):
                if key not in keys:
                    keys.append(key)
        return keys

    def versions(self):
        """A tuple that changes when a parameter or its ``.grad`` is changed in place or
        replaced (by a stage, or by code outside the stepper): each tensor's ``_version``,
        which PyTorch bumps on every in-place change, and the ``.grad`` tensors' identity."""
        return tuple((p._version, id(p.grad), None if p.grad is None else p.grad._version)
                     for p in self.model.parameters())

    def zero_grad_preview(self):
        """What the next stage will show when it is ``zero_grad``, without running it (None
        when another stage is next): ``(StageResult, versions())`` with each .grad it will
        drop (``grad_before``; ``grad_after`` None: ``zero_grad()`` sets them to None, its
        default in PyTorch) and the versions it will leave. Nothing is touched (no batch is
        drawn); a view renders the stage's picture ahead with it. Only the parameters'
        .grad arrays are filled in (the optimizer state is left out: the picture shows none)."""
        if self.next_stage_name != "zero_grad":
            return None
        parameters = list(self.model.parameters())
        params = tuple(
            ParamChange(name, tuple(p.shape), None if p.grad is None else numpy_view(p.grad),
                        None, None, numpy_view(p), {})
            for name, p in zip(self.names, parameters))
        after = tuple((p._version, id(None), None) for p in parameters)
        return StageResult("zero_grad", self.iteration, params), after

    def values(self, name):
        """A NumPy copy of the parameter ``name`` now."""
        return to_numpy(dict(self.model.named_parameters())[name])

    def code_lines(self):
        """The loop as ``(stage or None, text)`` lines (the view highlights the stages)."""
        lines = [(None, "for x, y in batches:")]
        lines += [(stage, "    " + CODE[stage]) for stage in STAGES]
        if self.scheduler is not None:
            lines.append(("step", "    scheduler.step()"))
        return lines

    def setup_code(self):
        """How the optimizer and scheduler in use are built, as Python lines."""
        cls, kwargs = OPTIMIZERS[self.optimizer_name]
        lines = [f"optimizer = torch.optim.{cls}(",
                 "    " + call_arguments("model.parameters()", {"lr": self.lr, **kwargs}) + ")"]
        if self.scheduler is not None:
            cls, kwargs = SCHEDULERS[self.scheduler_name]
            lines += [f"scheduler = torch.optim.lr_scheduler.{cls}(",
                      "    " + call_arguments("optimizer", kwargs) + ")"]
        return lines

    def table(self, result=None):
        """Per-parameter rows for ``result`` (default: the last stage): name, shape, grad
        norm, |Δ| and the optimizer state summary."""
        result = result or self.last
        if result is None:
            return []
        if getattr(self, "_table_of", None) is result:
            return self._table
        rows = []
        for p in result.params:
            state = ", ".join(
                f"{k}={v:g}" if isinstance(v, (int, float)) else f"|{k}|={norm_of(v):.3g}"
                for k, v in p.state.items())
            delta, norm = p.delta_norm, (None if p.delta is None else p.norm)
            rows.append({
                "name": p.name, "shape": p.shape,
                "grad": p.grad_norm, "grad_before": p.grad_before_norm,
                "delta": delta,
                "relative": None if delta is None or norm == 0 else delta / norm,
                "state": state or "—",
            })
        self._table_of, self._table = result, rows  # the view asks again on every redraw
        return rows
