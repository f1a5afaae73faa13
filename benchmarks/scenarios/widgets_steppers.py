"""Widget latency of the two steppers: one control change → the new picture (PNG bytes).

Like ``widgets.py``: each repetition is one user action, including the model's
work, the redraw and the PNG encoding (not the transfer to the browser).
Limit: 100 ms median; no NumPy or torch contender.

- TrainingStepper, "next stage" on a 64-32-10 MLP over the shipped 8x8 digits
  (batch 32, Adam): cycles through zero_grad, forward, loss, backward, step
  (the step also redraws the loss/accuracy curves);
- TrainingStepper, change the learning rate slider between two steps;
- TrainingStepper, "next stage" as lesson 05 builds it (64-32-10, SGD with
  momentum, lr 0.05, 40 steps trained);
- TrainingStepper, lesson 05's ``parameter`` and ``optimizer`` dropdowns after a
  step, each picture drawn (the kept pictures forgotten before each input: what
  every input cost before they were rendered ahead), and the parameter dropdown
  going round its four choices once each was drawn (the kept pictures shown);
- BackwardStepper, the step slider on the lesson-sized MLP 64-32-10 with its
  cross-entropy loss (grouped by module, 14 nodes);
- BackwardStepper, the step slider on a 60-layer MLP + loss (241 nodes), all
  groups expanded: the tall graph is cropped around the current node;
- BackwardStepper, expanding a module group, or all of them, and collapsing
  again (each change re-lays out and redraws the whole graph: no cache), on
  the small MLP and on the 60-layer one.

A BackwardStepper keeps the pictures of the last steps it showed (and, in a
kernel, renders the neighbour steps ahead): every BackwardStepper row empties
that store before each move, so it times drawing a step, not showing a kept one.

``python benchmarks/scenarios/widgets_steppers.py`` (not ``bench.py``) clicks
the buttons of the lessons' widgets in a real ipykernel instead, as the
browser does (a ``comm_msg`` "click" on the button's comm), each once the
kernel sent nothing for ``--quiet`` seconds (default 0.5: the browser
benchmark's pace, which waits that long after the last picture), and prints for each click
the milliseconds until the kernel's first message (what a person sees first),
until each new picture left the kernel, and until its last message: the
kernel's part of what ``browser_latency.py`` measures, render-ahead included.
``--lesson05-cpu`` instead makes the browser benchmark's inputs on lesson 05's
TrainingStepper in-process, in a running event loop (as in a kernel), each after
the controls rested, and prints the CPU ms of each control (median: total, of it
drawing and PNG encoding), with the pictures rendered ahead ("rested") and with
every picture drawn ("drawn": the kept pictures forgotten before each input);
``--lesson06-cpu`` the same for lesson 06's TrainEvalExplorer ("drawn": what it
prepared and kept forgotten). Both print the model's share, drawing and PNG.
"""
import itertools
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import ipywidgets as W  # noqa: E402
import numpy as np  # noqa: E402

import edutorch as et  # noqa: E402
import edutorch.nn as nn  # noqa: E402
from edutorch.datasets import load_digits  # noqa: E402
from widgets import BackwardStepper, TrainingStepper  # noqa: E402

LIMITS = {"torch": None, "numpy": None, "ms": 100}


def _digits_mlp(hidden=(32,)):
    et.manual_seed(0)
    sizes = (64,) + tuple(hidden) + (10,)
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _training_stepper():
    view = TrainingStepper(_digits_mlp(), load_digits("train"), load_digits("test"),
                           optimizer="Adam", lr=0.01)
    for _ in range(10):  # every stage drawn once: its figure frames are cached
        view.next_button.click()
    return view


def _next_stage():
    view = _training_stepper()
    return lambda: view.next_button.click()


def _lesson05_stepper():
    view = TrainingStepper(_digits_mlp(), load_digits("train"), load_digits("test"),
                           optimizer="SGD+momentum", lr=0.05)
    view.run(40)
    for _ in range(10):  # every stage drawn once
        view.next_button.click()
    return view


def _lesson05_next_stage():
    return _lesson05_stepper().next_button.click


def _lesson05_after_step():
    """Lesson 05's stepper after a step (every dropdown changes the picture), each
    parameter's picture drawn once."""
    view = _lesson05_stepper()
    for name in view.parameter.options:
        view.parameter.value = name
    return view


def _cycle(dropdown, forget=None):
    """Set ``dropdown`` to its next option (round the end), first calling ``forget()``."""
    def change():
        if forget is not None:
            forget()
        dropdown.index = (dropdown.index + 1) % len(dropdown.options)
    return change


def _forget_pictures(view):
    """Forget what the view keeps: the next input draws its pictures (as before they were
    kept and rendered ahead)."""
    view.rendered.clear()
    view.curves.kept = None


def _lesson05_dropdown(name, kept=False):
    view = _lesson05_after_step()
    return _cycle(getattr(view, name), None if kept else lambda: _forget_pictures(view))


def _lr_slider():
    view = _training_stepper()
    values = itertools.cycle([0.001, 0.003, 0.01, 0.03])
    return lambda: setattr(view.lr, "value", next(values))


def _backward_stepper(hidden, expand):
    x, y = load_digits("train")
    view = BackwardStepper.for_model(_digits_mlp(hidden), x[:32], y[:32], nn.CrossEntropyLoss())
    view.expand.value = expand
    steps = itertools.cycle(range(1, view.slider.max + 1))
    for _ in range(view.slider.max):  # draw each step once (panel frames cached)
        view.slider.value = next(steps)
    return view, steps


def _step_slider(hidden, expand="(none)"):
    view, steps = _backward_stepper(hidden, expand)

    def move():
        view.rendered.clear()  # draw the step (see the module's doc)
        view.slider.value = next(steps)
    return move


def _expand_group(hidden):
    view, _ = _backward_stepper(hidden, "(none)")
    choices = itertools.cycle(["0", "2", "(all)", "(none)"])

    def expand():
        view.rendered.clear()
        view.expand.value = next(choices)
    return expand


def scenarios():
    note = "one control change = model work + redraw + PNG encode"
    cases = [
        ("widget TrainingStepper next stage (digits MLP 64-32-10, Adam, batch 32)", _next_stage()),
        ("widget TrainingStepper lr slider between steps (digits MLP)", _lr_slider()),
        ("widget TrainingStepper next stage (lesson 05: SGD+momentum)", _lesson05_next_stage()),
        ("widget TrainingStepper parameter dropdown after step, drawn (lesson 05)",
         _lesson05_dropdown("parameter")),
        ("widget TrainingStepper optimizer dropdown after step, drawn (lesson 05)",
         _lesson05_dropdown("optimizer")),
        ("widget TrainingStepper parameter dropdown, pictures kept (lesson 05)",
         _lesson05_dropdown("parameter", kept=True)),
        ("widget BackwardStepper step slider (MLP 64-32-10 + loss, 14 nodes)", _step_slider((32,))),
        ("widget BackwardStepper step slider (60-layer MLP + loss, 241 nodes, expanded)",
         _step_slider((32,) * 59, "(all)")),
        ("widget BackwardStepper expand a module group (MLP 64-4x32-10)", _expand_group((32,) * 4)),
        ("widget BackwardStepper expand a module group (60-layer MLP, 241 nodes)",
         _expand_group((32,) * 59)),
    ]
    return [{"name": name, "contenders": {"edutorch": fn, "numpy": None, "torch": None},
             "limits": dict(LIMITS), "setup_note": note} for name, fn in cases]


#: the widgets clicked in a kernel: (module, function building it, its buttons to click)
KERNEL_WIDGETS = {
    "05": ("benchmarks.scenarios.widgets_steppers", "_lesson05_stepper",
           ["next_button", "run_button"]),
    "06": ("benchmarks.scenarios.widgets_gradients_train_eval", "_lesson06_explorer",
           ["again_button", "next_button"]),
    "12": ("benchmarks.scenarios.widgets_steppers", "_lesson12_stepper_at_step_9",
           ["next_button", "prev_button"]),
}


def _lesson12_stepper_at_step_9():
    """Lesson 12's BackwardStepper half way (18 steps): "prev" has somewhere to go."""
    from benchmarks.scenarios.widgets_lesson_controls import _lesson12_stepper

    view = _lesson12_stepper()
    view.slider.value = 9
    return view


def kernel_clicks(lesson, button, clicks=5, quiet=0.5):
    """Click ``button`` of lesson ``lesson``'s widget ``clicks`` times in a fresh ipykernel,
    each once the kernel sent nothing for ``quiet`` seconds; yield ``(first message,
    [pictures], last message)`` in ms after each click was sent."""
    import queue

    from jupyter_client.manager import start_new_kernel

    module, build, _ = KERNEL_WIDGETS[lesson]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    manager, client = start_new_kernel(kernel_name="python3", cwd=root)
    try:
        found = {}
        client.execute_interactive(
            f"import sys; sys.path.insert(0, {root!r})\n"
            f"from {module} import {build}\nview = {build}()\n"
            f"print(view.{button}.comm.comm_id)",
            output_hook=lambda m: found.update(id=m["content"].get("text", "").strip())
            if m["msg_type"] == "stream" else None, timeout=300)
        time.sleep(3.0)  # the widget renders ahead, as a lesson's would after Run All
        _drain(client, queue.Empty, quiet)
        for _ in range(clicks):
            click = client.session.msg("comm_msg", {"comm_id": found["id"], "data": {
                "method": "custom", "content": {"event": "click"}}})
            start = time.perf_counter()
            client.shell_channel.send(click)
            times = _drain(client, queue.Empty, quiet, start)
            pictures = [t for t, size in times if size > 1000]
            yield (times[0][0] if times else None), pictures, (times[-1][0] if times else None)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _drain(client, empty, quiet, start=None):
    """The widget messages the kernel sends until it sent none for ``quiet`` seconds (at
    most 60 s): ``(ms after start, bytes of their buffers)``."""
    seen, end, cap = [], time.perf_counter() + quiet, time.perf_counter() + 60
    while time.perf_counter() < min(end, cap):
        try:
            message = client.get_iopub_msg(timeout=max(0.01, end - time.perf_counter()))
        except empty:
            continue
        end = time.perf_counter() + quiet
        if message["msg_type"] == "comm_msg" and start is not None:
            size = sum(len(b) for b in message.get("buffers") or [])
            seen.append((round(1000 * (time.perf_counter() - start)), size))
    return seen


#: lesson 05's controls in the browser benchmark's order (a slider, the dropdowns, the button)
LESSON05_CONTROLS = ("lr", "optimizer", "scheduler", "parameter", "state_key", "next_button")
#: lesson 06's (TrainEvalExplorer): the step slider, the module dropdown, the two buttons
LESSON06_CONTROLS = ("step", "module", "again_button", "next_button")


def _lesson_input(view, control, rep):
    """The browser benchmark's input ``rep`` on ``control``: an arrow key on a slider (right,
    left, ...), the next option of a dropdown, a click; False: disabled or nothing to choose."""
    widget = getattr(view, control)
    if widget.disabled:
        return False
    if isinstance(widget, W.Button):
        widget.click()
    elif control == "lr":
        exponent = round(np.log10(widget.value) / widget.step) * widget.step
        widget.value = widget.base ** (exponent + (widget.step if rep % 2 == 0 else -widget.step))
    elif isinstance(widget, W.IntSlider):
        if widget.max == widget.min:
            return False
        up = widget.value + 1 if widget.value < widget.max else widget.value - 1
        down = widget.value - 1 if widget.value > widget.min else widget.value + 1
        widget.value = up if rep % 2 == 0 else down
    elif len(widget.options) < 2:
        return False
    else:
        _cycle(widget)()
    return True


def _forget_prepared(view):
    """Forget what a TrainEvalExplorer prepared and kept: the next input computes and draws
    (as before the clicks were prepared ahead)."""
    view.model._ahead = view.model._batch_ahead = None
    view.kept_outputs.clear()
    view.kept_details.clear()


def _lesson06_awake():
    """Lesson 06's explorer, scheduling what it prepares (inside the event loop)."""
    from benchmarks.scenarios.widgets_gradients_train_eval import _lesson06_explorer

    view = _lesson06_explorer()
    view._draw_details(new_frame=False)
    return view


def _lesson05_awake():
    view = _lesson05_stepper()
    view._draw_all()
    return view


#: lesson -> (the widget built and rendering ahead, in a loop; its controls; forget its pictures)
LESSON_CPU = {"05": (_lesson05_awake, LESSON05_CONTROLS, _forget_pictures),
              "06": (_lesson06_awake, LESSON06_CONTROLS, _forget_prepared)}


def lesson_cpu(lesson="05", inputs=5, rest_s=0.6):
    """CPU ms per input on lesson ``lesson``'s widget, the browser benchmark's inputs in a
    running event loop, each after ``rest_s`` of quiet and what the view renders ahead:
    ``{(control, "rested" or "drawn"): [(total, drawing, PNG), ...]}``; "drawn": what was
    kept and prepared forgotten before each input. The rest of the total is model work
    (and the widgets' messages)."""
    import asyncio

    import widgets._render as render

    build, controls, forget = LESSON_CPU[lesson]
    spent = {"draw": 0.0, "png": 0.0}
    canvas_png, png_bytes = render.Canvas.png, render.png_bytes

    def timed_png(canvas):  # drawing = Canvas.png minus its PNG encoding
        start, encoded = time.thread_time(), spent["png"]
        try:
            return canvas_png(canvas)
        finally:
            spent["draw"] += time.thread_time() - start - (spent["png"] - encoded)

    def timed_bytes(canvas):
        start = time.thread_time()
        try:
            return png_bytes(canvas)
        finally:
            spent["png"] += time.thread_time() - start

    async def inputs_of(keep):
        view = build()  # inside the loop: it renders ahead
        times = {}
        for control in controls:
            for rep in range(inputs):
                await asyncio.sleep(rest_s)
                while view.ahead.pending or view.ahead.timer is not None:
                    await asyncio.sleep(0.02)
                if not keep:
                    forget(view)
                spent.update(draw=0.0, png=0.0)
                start = time.thread_time()
                if _lesson_input(view, control, rep):
                    total = time.thread_time() - start
                    times.setdefault((control, "rested" if keep else "drawn"), []).append(
                        tuple(1000 * t for t in (total, spent["draw"], spent["png"])))
        return times

    render.Canvas.png, render.png_bytes = timed_png, timed_bytes
    try:
        return {**asyncio.run(inputs_of(True)), **asyncio.run(inputs_of(False))}
    finally:
        render.Canvas.png, render.png_bytes = canvas_png, png_bytes


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="the lessons' buttons clicked in a kernel")
    parser.add_argument("--only", default="05,06,12", help="lessons: 05, 06, 12")
    parser.add_argument("--clicks", type=int, default=5)
    parser.add_argument("--quiet", type=float, default=0.5,
                        help="seconds without a message before the next click")
    parser.add_argument("--lesson05-cpu", action="store_true",
                        help="CPU ms of lesson 05's inputs in-process, rested and drawn")
    parser.add_argument("--lesson06-cpu", action="store_true",
                        help="CPU ms of lesson 06's inputs in-process, rested and drawn")
    args = parser.parse_args()
    for lesson, wanted in (("05", args.lesson05_cpu), ("06", args.lesson06_cpu)):
        for (control, how), times in (lesson_cpu(lesson, args.clicks) if wanted else {}).items():
            total, draw, png = (np.median(column) for column in zip(*times))
            print(f"lesson {lesson} {control:12s} {how}: CPU ms per input "
                  + " ".join(f"{t[0]:.1f}" for t in times)
                  + f" (median {total:.1f}: model {total - draw - png:.1f}, drawing {draw:.1f},"
                  f" PNG {png:.1f})", flush=True)
    if args.lesson05_cpu or args.lesson06_cpu:
        sys.exit()
    for lesson in args.only.split(","):
        for button in KERNEL_WIDGETS[lesson][2]:
            for first, pictures, last in kernel_clicks(lesson, button, args.clicks, args.quiet):
                shown = " ".join(str(t) for t in pictures[:8]) + (" …" if len(pictures) > 8 else "")
                print(f"{lesson} {button}: first message {first} ms, pictures at [{shown}] ms, "
                      f"last {last} ms", flush=True)
