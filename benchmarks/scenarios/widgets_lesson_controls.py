"""Widget latency of the controls a person found slow in the lessons (issue 25, item 4).

Like ``widgets.py``: each repetition is one user action, including the model's
work, the redraw and the PNG encoding (not the transfer to the browser), on
models the size of the lessons'. Budget: about 40 ms of CPU per input, so that
with the transfer and the browser's decoding a person sees the new picture
within 100 ms (limit 100 ms, as the other widget rows).

- PruneExplorer on the digits MLP 64-128-64-10 with 359 evaluation images
  (lesson 04): the method dropdown and the weights dropdown, each cycling
  through its options, each picture drawn (the kept ones forgotten first). The
  curves are then cached, as they are in a kernel, where the explorer computes
  them while the controls rest; the method dropdown again with its pictures
  kept (what an input costs in a kernel once the controls rested: the view
  rendered them ahead); apply followed by undo (one repetition = both clicks;
  the pruned state's curve is computed afresh every time, the undone state's is
  remembered: without an event loop nothing is rendered ahead);
- ProfilerView (lesson 12): the sort-by dropdown cycling through its six keys
  on a profile of one training step of a 64-32-10 MLP (bars drawn as HTML);
- BackwardStepper on lesson 12's graph: a 4-block MLP of width 8 through
  ``checkpoint_sequential(..., 2, use_reentrant=False)``, the step slider
  forward through its 18 steps (every step drawn: the pictures it keeps are
  emptied first, and without an event loop nothing is rendered ahead); "next"
  and "prev" between two steps already drawn (what a click costs in a kernel,
  where the neighbour steps are rendered while the controls rest);
- GradientInspector on lesson 07's exploding network (six hidden ReLU layers of
  32, weights ×5, the digits batch of 256), in the state the lesson leaves it
  (5 steps clipped by norm): "step" (clipping by norm), the ``max_norm`` and
  ``clip_value`` sliders (each position drawn: the pictures the inspector keeps are
  forgotten first), and ``max_norm`` back and forth between two positions it keeps
  (what an arrow key costs once the neighbours were rendered ahead in a kernel).

``python benchmarks/scenarios/widgets_lesson_controls.py`` (not ``bench.py``) times
the inputs of the browser benchmark on lesson 04 in a running event loop, after the
controls rested and with every picture drawn, each split into phases (the model's
work, the curves, drawing, PNG), and the clicks of the browser benchmark on lesson 07: "when training" left
at "no clipping", five steps, during which the gradients explode (their ranges,
hence the axes, change at every step) and then turn NaN; "10 steps" twice after
them (when each picture leaves the widget); then its five inputs on each slider,
on the dropdown and on "step ▶", in a running event loop after the controls rested
(pictures rendered ahead, the next step rehearsed on copies) and with every picture
drawn.
"""
import os
import sys
import time
import warnings

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import itertools  # noqa: E402

import numpy as np  # noqa: E402

import edutorch as et  # noqa: E402
import edutorch.nn as nn  # noqa: E402
import edutorch.nn.functional as F  # noqa: E402
from edutorch.datasets import load_digits  # noqa: E402
from edutorch.profiler import profile, record_function  # noqa: E402
from edutorch.utils.checkpoint import checkpoint_sequential  # noqa: E402
from widgets import BackwardStepper, GradientInspector, ProfilerView, PruneExplorer  # noqa: E402

LIMITS = {"torch": None, "numpy": None, "ms": 100}


def _prune_explorer():
    et.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                          nn.Linear(64, 10))
    x, y = load_digits("test")
    return PruneExplorer(model, data=(x[:359], y[:359]))


def _cycle(dropdown):
    """A function that picks the dropdown's next option (each picked once first)."""
    values = [o[1] if isinstance(o, tuple) else o for o in dropdown.options]
    following = itertools.cycle(values[1:] + values[:1])
    for _ in values:
        dropdown.value = next(following)
    return lambda: setattr(dropdown, "value", next(following))


def _drawn(view, control):
    """``control``'s next option, each picture drawn: the pictures the view keeps forgotten
    first (before the view kept any, as on main, there is nothing to forget)."""
    next_option = _cycle(control)
    forget = getattr(view, "forget_pictures", lambda: None)
    return lambda: (forget(), next_option())


def _prune_method():
    view = _prune_explorer()
    return _drawn(view, view.method)


def _prune_method_kept():
    return _cycle(_prune_explorer().method)


def _prune_weights():
    view = _prune_explorer()
    return _drawn(view, view.layer)


def _prune_apply_undo():
    view = _prune_explorer()

    def apply_then_undo():
        view.apply_button.click()
        view.undo_button.click()
    return apply_then_undo


class _Phases:
    """CPU seconds per phase of an input: functions wrapped while it lasts; a call inside
    another timed one counts for the outer one (a curve's previews are the curve's)."""

    #: phase -> (module, class or None, function)
    PHASES = {"model": [("widgets.prune_explorer", "PruneExplorerModel", name)
                        for name in ("preview", "current", "apply", "undo")],
              "curve": [("widgets.prune_explorer", "PruneExplorerModel", "curve")],
              "draw": [("widgets._render", "Canvas", "_paste_background"),
                       ("widgets._render", "Canvas", "_draw_visible"),
                       ("widgets._render", "TensorPanel", "show")],
              "png": [("widgets._render", None, "png_bytes")]}

    def __init__(self):
        import importlib

        self.seconds, self.inside = {}, False
        for phase, places in self.PHASES.items():
            for module, cls, name in places:
                owner = importlib.import_module(module)
                owner = getattr(owner, cls) if cls else owner
                setattr(owner, name, self._timed(getattr(owner, name), phase))

    def _timed(self, function, phase):
        def timed(*args, **kwargs):
            if self.inside:
                return function(*args, **kwargs)
            self.inside, start = True, time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[phase] = self.seconds.get(phase, 0.0) + time.thread_time() - start
                self.inside = False
        return timed


def lesson04_inputs(inputs=5):
    """CPU ms of the inputs of the browser benchmark on lesson 04 (the amount slider's arrow
    keys, the weights and method dropdowns' next option, apply five times, undo five times),
    made in a running event loop (as in a kernel) after the controls rested; and the same
    with every picture drawn (the kept ones forgotten before each input: what every input
    cost before pictures were rendered ahead). ``{(control, "rested" or "drawn"): [(ms,
    {phase: ms}), ...]}``."""
    import asyncio

    phases = _Phases()

    async def inputs_of(keep):
        view = _prune_explorer()
        view.refresh()  # inside the loop: now it renders ahead
        times = {}
        controls = [(view.amount, "amount"), (view.layer, "weights"), (view.method, "method"),
                    (view.apply_button, "apply"), (view.undo_button, "undo")]
        for control, label in controls:
            for rep in range(inputs):
                await asyncio.sleep(0.2)
                while view.ahead.pending or view.ahead.timer is not None:  # the controls rest
                    await asyncio.sleep(0.02)
                if not keep and hasattr(view, "forget_pictures"):
                    view.forget_pictures()
                phases.seconds.clear()
                start = time.thread_time()
                if label == "amount":
                    step = control.step if rep % 2 == 0 else -control.step
                    control.value = round(control.value + step, 2)
                elif label in ("apply", "undo"):
                    control.click()
                else:
                    _one_input(control, rep)
                split = {phase: 1000 * t for phase, t in phases.seconds.items()}
                times.setdefault((label, "rested" if keep else "drawn"), []).append(
                    (1000 * (time.thread_time() - start), split))
        return times

    return {**asyncio.run(inputs_of(True)), **asyncio.run(inputs_of(False))}


def _profiler_sort():
    et.manual_seed(0)
    images, digits = load_digits("train")
    classifier = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    with profile() as prof:
        with record_function("forward"):
            loss = F.cross_entropy(classifier(images[:256]), digits[:256])
        with record_function("backward"):
            loss.backward()
    return _cycle(ProfilerView(prof, sort_by="count", row_limit=8).sort_by)


def _lesson12_stepper():
    et.manual_seed(0)
    deep = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(4)])
    x = et.tensor(np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32),
                  requires_grad=True)
    return BackwardStepper(checkpoint_sequential(deep, 2, x, use_reentrant=False).sum())


def _checkpointed_stepper():
    view = _lesson12_stepper()
    steps = itertools.cycle(range(1, view.slider.max + 1))

    def move():
        view.rendered.clear()  # draw the step, not the pictures kept from the last lap
        view.slider.value = next(steps)
    return move


def _stepper_next_prev():
    """Alternately "next" and "prev" between steps 5 and 6, both drawn once before."""
    view = _lesson12_stepper()
    view.slider.value = 5
    buttons = itertools.cycle([view.next_button, view.prev_button])
    next(buttons).click()
    next(buttons).click()
    return lambda: next(buttons).click()


def _exploding_net():
    """Lesson 07's ``exploding_net()``: six hidden ReLU layers of 32, every weight × 5."""
    et.manual_seed(0)
    layers, size = [], 64
    for _ in range(6):
        layers += [nn.Linear(size, 32), nn.ReLU()]
        size = 32
    model = nn.Sequential(*layers, nn.Linear(size, 10))
    with et.no_grad():
        for layer in model:
            if isinstance(layer, nn.Linear):
                layer.weight.mul_(5.0)
    return model


def _lesson07_inspector():
    """The lesson's cell: clipping by norm when training, five steps, clip_value 0.1."""
    x, y = load_digits("train")
    inspector = GradientInspector(_exploding_net(), (x[:256], y[:256]), lr=0.1)
    inspector.clip_mode.value = "norm"
    inspector.max_norm.value = 1.0
    inspector.train(5)
    inspector.clip_value.value = 0.1
    return inspector


def _lesson07_step():
    return _lesson07_inspector().step_button.click


def _lesson07_slider(name, exponents, kept=False):
    """The slider ``name`` cycling through ``10 ** exponents``: each position drawn (the
    kept pictures forgotten first), or with ``kept`` shown from the pictures it keeps (two
    positions back and forth: what an arrow key finds after the controls rested)."""
    inspector = _lesson07_inspector()
    slider = getattr(inspector, name)
    values = itertools.cycle(10.0 ** np.array(exponents))

    def move():
        if not kept:
            inspector.forget_pictures()
        slider.value = next(values)
    return move


def scenarios():
    note = "one control change = model work + redraw + PNG encode"
    cases = [
        ("widget PruneExplorer method dropdown (digits MLP 64-128-64-10, 359 images)",
         _prune_method()),
        ("widget PruneExplorer weights dropdown (digits MLP 64-128-64-10, 359 images)",
         _prune_weights()),
        ("widget PruneExplorer method dropdown, pictures kept (digits MLP 64-128-64-10)",
         _prune_method_kept()),
        ("widget PruneExplorer apply + undo (digits MLP 64-128-64-10, 359 images)",
         _prune_apply_undo()),
        ("widget ProfilerView sort-by dropdown (a training step of a 64-32-10 MLP)",
         _profiler_sort()),
        ("widget BackwardStepper step slider (lesson 12: 4 checkpointed blocks, 18 steps)",
         _checkpointed_stepper()),
        ("widget BackwardStepper next/prev, steps drawn before (lesson 12)",
         _stepper_next_prev()),
        ("widget GradientInspector step, clipping by norm (lesson 07 exploding net)",
         _lesson07_step()),
        ("widget GradientInspector max_norm slider (lesson 07 exploding net)",
         _lesson07_slider("max_norm", [-1, -0.5, 0, 0.5, 1])),
        ("widget GradientInspector clip_value slider (lesson 07 exploding net)",
         _lesson07_slider("clip_value", [-2, -1.5, -1, -0.5, 0])),
        ("widget GradientInspector max_norm slider back and forth, pictures kept (lesson 07)",
         _lesson07_slider("max_norm", [0, 0.05], kept=True)),
    ]
    return [{"name": name, "contenders": {"edutorch": fn, "numpy": None, "torch": None},
             "limits": dict(LIMITS), "setup_note": note} for name, fn in cases]


def lesson07_unclipped_steps(runs=3):
    """CPU ms of each of the five "step" clicks of the browser benchmark on lesson 07 (the
    "when training" dropdown left at "no clipping"), the median over ``runs`` fresh
    inspectors: the gradients explode, then turn NaN."""
    warnings.simplefilter("ignore", RuntimeWarning)  # the overflow is the lesson's point
    times = []
    for _ in range(runs):
        inspector = _lesson07_inspector()
        inspector.clip_mode.value = "none"
        clicks = []
        for _ in range(5):
            start = time.thread_time()
            inspector.step_button.click()
            clicks.append(1000 * (time.thread_time() - start))
        times.append(clicks)
    return [float(np.median(column)) for column in zip(*times)]


def lesson07_after_the_browser_steps():
    """Lesson 07's inspector as the browser benchmark leaves it before "10 steps": "when
    training" at "no clipping" and five steps taken (the gradients are NaN)."""
    warnings.simplefilter("ignore", RuntimeWarning)
    inspector = _lesson07_inspector()
    inspector.clip_mode.value = "none"
    for _ in range(5):
        inspector.step_button.click()
    return inspector


def lesson07_ten_steps(runs=2):
    """The browser benchmark's "10 steps" on lesson 07 (after its five unclipped steps), in
    a running event loop as in a kernel: for each run, the ms from the click to each
    picture leaving the widget (``"t"``: timeline, ``"b"``: bars and histograms) and the
    CPU ms the run took. Pictures sent faster than the browser can show them queue up."""
    import asyncio

    warnings.simplefilter("ignore", RuntimeWarning)

    async def run():
        inspector = lesson07_after_the_browser_steps()
        results = []
        for _ in range(runs):
            sent, start = [], time.perf_counter()
            for name, image in (("t", inspector.timeline), ("b", inspector.image)):
                image.observe(lambda change, name=name, sent=sent, start=start: sent.append(
                    (name, 1000 * (time.perf_counter() - start))), names="value")
            cpu = time.thread_time()
            await inspector.start_training(10)
            results.append((sent, 1000 * (time.thread_time() - cpu)))
            for image in (inspector.timeline, inspector.image):
                image.unobserve_all("value")
            await asyncio.sleep(0.5)
        return results

    return asyncio.run(run())


def _one_input(control, rep):
    """What the browser benchmark does to ``control`` at input ``rep``: an arrow key on a
    slider (right, left, right, ...: the browser computes ``base ** exponent``), the next
    option of a dropdown, a click on a button."""
    if hasattr(control, "click"):
        control.click()
    elif hasattr(control, "base"):
        exponent = round(np.log10(control.value) / control.step) * control.step
        control.value = control.base ** (exponent + (control.step if rep % 2 == 0 else -control.step))
    else:
        values = [value[1] if isinstance(value, tuple) else value for value in control.options]
        control.value = values[(values.index(control.value) + 1) % len(values)]


def lesson07_rested_inputs(inputs=5):
    """CPU ms of each input of the browser benchmark on lesson 07's sliders, dropdown and
    "step ▶" (the dropdown's five inputs leave "no clipping", so the steps explode), made
    in a running event loop (as in a kernel) after the controls rested, so what the
    inspector renders ahead (the next step too: rehearsed on copies) is ready; and the same
    inputs with the kept pictures emptied before each (each drawn: what every input cost
    before pictures were rendered ahead). ``{(control, "rested" or "drawn"): [ms, ...]}``."""
    import asyncio

    warnings.simplefilter("ignore", RuntimeWarning)

    async def inputs_of(keep):
        inspector = _lesson07_inspector()
        inspector.refresh()  # inside the loop: now it renders ahead
        times = {}
        for control in (inspector.max_norm, inspector.clip_value, inspector.clip_mode,
                        inspector.step_button):
            for rep in range(inputs):
                await asyncio.sleep(0.2)
                while inspector.ahead.pending:  # the controls rest
                    await asyncio.sleep(0.02)
                if not keep:
                    inspector.forget_pictures()
                    getattr(inspector, "steps_ahead", {}).clear()  # (a step rehearsed ahead)
                start = time.thread_time()
                _one_input(control, rep)
                times.setdefault((control.description, "rested" if keep else "drawn"),
                                 []).append(1000 * (time.thread_time() - start))
        return times

    return {**asyncio.run(inputs_of(True)), **asyncio.run(inputs_of(False))}


if __name__ == "__main__":
    for (control, how), runs in lesson04_inputs().items():
        ms = [total for total, _ in runs]
        split = {phase: np.median([parts.get(phase, 0.0) for _, parts in runs])
                 for phase in _Phases.PHASES}
        print(f"lesson 04, {control}, {how}: CPU ms per input", " ".join(f"{t:.1f}" for t in ms),
              f"(median {np.median(ms):.1f}; medians by phase:",
              ", ".join(f"{phase} {t:.1f}" for phase, t in split.items()) + ")")
    steps = lesson07_unclipped_steps()
    print("lesson 07, five steps without clipping, CPU ms per click:",
          " ".join(f"{t:.0f}" for t in steps), f"(median {np.median(steps):.0f})")
    for sent, cpu in lesson07_ten_steps():
        print("lesson 07, 10 steps: pictures leave at", " ".join(f"{n}{t:.0f}" for n, t in sent),
              f"ms; CPU {cpu:.0f} ms")
    for (control, how), times in lesson07_rested_inputs().items():
        print(f"lesson 07, {control}, {how}: CPU ms per input", " ".join(f"{t:.1f}" for t in times),
              f"(median {np.median(times):.1f})")
