"""The ipywidgets view of ``TrainingStepperModel``: the training loop, line by line.

Layout::

    title
    [next stage ▶] [run N steps] [N] [■ stop] [progress ████░░] "step 40 / 100 ..."
    [optimizer ▾] [lr ──●──] [scheduler ▾] [parameter ▾] [state ▾]
    [ the loop's code, the line just run highlighted ]  [ what that line did (text) ]
    [ what it changed (2 pictures, each with its colour scale)                        ]
    [ loss and accuracy curves: train (per batch) and held-out                         ]
    [ table: each parameter's .grad, update Δ and optimizer state                      ]

"run N steps" trains in chunks inside an asyncio task, so the kernel handles
a click on "stop" between two chunks (a plain loop would block the kernel
until it ends); without a running event loop (a script, a test) ``run`` trains
synchronously. What a person sees of a run is paced for the browser: the
status at once, then a picture of the curves about every ``REDRAW_S`` (by the
clock: after the chunk that would end later than that), each followed by a
short rest of the kernel (``PAUSE_S``): the server and the browser share the
machine's cores with the kernel, and pictures sent faster than they can show
them only queue up (one every 30-50 ms made a person wait 300 ms for the first
and 400 ms between two on a 2-core machine). During a run the curves' x axis
already reaches the run's last step, so no picture of the run draws a new frame
(100 ms of text layout: it made a person wait 300 ms between two pictures when
the steps outgrew the axis); that frame is rendered ahead while the controls rest.

The controls that only change what is shown (the ``parameter``, ``state`` and
``optimizer`` dropdowns) show pictures rendered ahead: the stage's picture is
kept per what it shows (``_picture_key``), and while the controls rest
(``RenderAhead``) the view renders the dropdowns' next and previous choices
and what it can of the next stage. Rendering ahead only draws: no stage runs,
and the model, the optimizer and the random generators are left as they are.
So of the next stage, only zero_grad's picture is rendered ahead (it shows the
.grad it will drop: nothing needs to run); for backward, which must run to fill
the .grad, only its frame is prepared; forward, loss and step show what they
compute. Every update sends the pictures first and the texts after them.
"""
from __future__ import annotations

import asyncio
import html
import time

import ipywidgets as W
import numpy as np

from ._render import (BLUE, CSS_DPI, Canvas, PictureFallback, RenderAhead, TensorPanel,
                      font_size, html_style, joined_png, plain_lines, small_fonts)
from .training_stepper import OPTIMIZERS, SCHEDULERS, TrainingStepperModel

WIDTH_PX = 760  # CSS pixels: fits a notebook at its default width
CODE_PX = 380  # the loop's code; its caption takes the rest of the width
ORANGE = "#e85d04"
CHUNK = 5  # iterations between two chances to stop (and to redraw) during a run
REDRAW_S = 0.15  # during a run, a new picture of the curves about this often (seconds)
PAUSE_S = 0.04  # the kernel rests this long after the first status and after each picture
GAP_S = 0.01  # and this long after a chunk without a picture
KEEP = 16  # stage pictures kept: the one shown, and the dropdowns' choices rendered ahead


class CurvesPicture:
    """Loss and accuracy against optimizer steps: train per batch, held-out per evaluation.

    Redrawn like the other views (``_render.py``): the axes are a cached
    background and only the four lines are drawn on each update. The x range
    doubles when the steps outgrow it and the loss range is a power of two, so
    the background is re-rendered only a handful of times in a long run.
    """

    def __init__(self, width_px=WIDTH_PX, height=2.6):
        self.canvas = Canvas(ncols=2, width=width_px / CSS_DPI, height=height)
        self.figure = self.canvas.figure
        self.loss_ax, self.acc_ax = (self.figure.add_axes(slot) for slot in self.canvas.slots)
        self.lines = {}
        for ax, key in ((self.loss_ax, "loss"), (self.acc_ax, "accuracy")):
            self.lines[key, "train"] = ax.plot([], [], color=BLUE, lw=1.2,
                                               label="train (batch)")[0]
            self.lines[key, "test"] = ax.plot([], [], "o-", color=ORANGE, ms=4, lw=1.8,
                                              label="held-out")[0]
            ax.set_title(key, fontsize=font_size("title"), loc="left")
            small_fonts(ax, "optimizer steps")
            ax.grid(alpha=0.3)
        self.acc_ax.set_ylim(0, 1.02)
        # above the loss axes, right of its title: never on a curve, whatever the optimizer
        self.loss_ax.legend(fontsize=font_size("tick"), loc="lower right", bbox_to_anchor=(1, 1),
                            ncol=2, frameon=False, borderaxespad=0.1, handlelength=1.5,
                            columnspacing=1.0)
        self.canvas.animate(*self.lines.values())
        self.canvas.panels.append(self)
        self.limits = None
        self.kept = None  # (what the last picture showed, its PNG)

    def layout(self):
        """The axis limits: the background is cached per limits (see ``_render.Canvas``)."""
        return self.limits

    def png(self, history, evaluations, until=0):
        """The curves of ``history`` and ``evaluations`` (drawn again only when they grew, the
        last evaluation changed or the axes did: both lists only grow, or their last record
        is replaced). ``until``: the last step of a run in progress, which the x axis then
        reaches already (its frame is drawn once, or ahead: ``prepare``)."""
        limits = self._limits(history, evaluations, until)
        shown = (len(history), len(evaluations), dict(evaluations[-1]) if evaluations else None,
                 limits)
        if self.kept is None or self.kept[0] != shown:
            self.kept = (shown, self._png(history, evaluations, limits))
        return self.kept[1]

    def prepare(self, history, evaluations, until):
        """Render ahead the frame on which a run to step ``until`` will draw (``Canvas.prepare``:
        nothing else is drawn); the axes are set back as they were."""
        before = self.limits
        self._set_limits(self._limits(history, evaluations, until))
        self.canvas.prepare()
        if before is not None:
            self._set_limits(before)

    @staticmethod
    def _limits(history, evaluations, until=0):
        """``(x limit, loss limit)``: a power of two of steps (at least 16, and ``until``), a
        multiple of 0.5 above every loss."""
        last = max([h["step"] for h in history] + [e["step"] for e in evaluations] + [1, until])
        losses = [h["loss"] for h in history] + [e["loss"] for e in evaluations] + [1.0]
        return _power_of_two(max(16, last)), 0.5 * np.ceil(max(losses) * 1.05 / 0.5)

    def _set_limits(self, limits):
        if limits != self.limits:
            for ax in (self.loss_ax, self.acc_ax):
                ax.set_xlim(0, limits[0])
            self.loss_ax.set_ylim(0, limits[1])
            self.limits = limits

    def _png(self, history, evaluations, limits):
        for key in ("loss", "accuracy"):
            for kind, records in (("train", history), ("test", evaluations)):
                self.lines[key, kind].set_data(
                    [r["step"] for r in records],
                    [np.nan if r[key] is None else r[key] for r in records])
        self._set_limits(limits)
        return self.canvas.png()


def clock():
    """The seconds a run paces its pictures by (``time.perf_counter``; a test's fake clock)."""
    return time.perf_counter()


async def sleep(seconds):
    """The kernel rests (``asyncio.sleep``): the server and the browser get the CPU."""
    await asyncio.sleep(seconds)


def _picture_due(shown, chunk_seconds, now):
    """Whether a run shows its curves now, ``now`` seconds on its clock: when the next chunk,
    after a rest (``GAP_S``) and as long as the one just trained (``chunk_seconds``), would
    end more than ``REDRAW_S`` after the last picture (``shown``). So two pictures leave at
    most ``REDRAW_S`` apart (plus the drawing) while the chunks take alike, and at least
    ``REDRAW_S`` minus a chunk and its rest apart."""
    return now + GAP_S + chunk_seconds - shown > REDRAW_S


def _power_of_two(value):
    """The smallest power of two ≥ ``value``: an axis limit that rarely moves."""
    return 2.0 ** np.ceil(np.log2(value))


class TrainingStepper(PictureFallback, W.VBox):
    """Run the training loop one stage (line) at a time, or N steps with live curves.

    >>> stepper = TrainingStepper(model, train=(x, y), test=(x_test, y_test))
    >>> stepper.next_button.click()      # optimizer.zero_grad()
    >>> stepper.next_button.click()      # output = model(x)
    >>> stepper.run(100)                 # or the "run N steps" button (interruptible)
    """

    def __init__(self, model, train, test=None, loss_fn=None, optimizer="SGD", lr=0.1,
                 scheduler="none", batch_size=32, seed=0):
        self.model = TrainingStepperModel(model, train, test, loss_fn, optimizer, lr, scheduler,
                                          batch_size, seed)
        self.style = html_style()  # the text scale when the widget was built
        self.canvas = Canvas(ncols=2, width=WIDTH_PX / CSS_DPI, height=2.7)
        self.left_panel = TensorPanel(self.canvas, 0)
        self.right_panel = TensorPanel(self.canvas, 1)
        self.curves = CurvesPicture()
        self.rendered = {}  # _picture_key -> (PNG, left title, right title), KEEP at most
        self.ahead = RenderAhead(delay_s=0.2)  # the dropdowns' next choices, while nobody waits
        self.task = None  # the asyncio task of a run in progress
        self.after_run = False  # True from the end of a run to the next render ahead

        self.title = W.HTML()
        self.next_button = W.Button(description="next stage ▶", button_style="primary",
                                    tooltip="run the highlighted line",
                                    layout=W.Layout(width="120px"))
        self.run_button = W.Button(description="run N steps", icon="play",
                                   tooltip="train N whole iterations",
                                   layout=W.Layout(width="120px"))
        self.steps = W.BoundedIntText(value=100, min=1, max=100_000, description="N",
                                      layout=W.Layout(width="170px"))
        self.stop_button = W.Button(description="stop", icon="stop", disabled=True,
                                    tooltip="stop the run after the current chunk",
                                    layout=W.Layout(width="80px"))
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="150px"))
        self.status = W.Label()
        self.optimizer = W.Dropdown(options=list(OPTIMIZERS), value=optimizer,
                                    description="optimizer", layout=W.Layout(width="230px"))
        self.lr = W.FloatLogSlider(value=lr, base=10, min=-4, max=0, step=0.25, description="lr",
                                   readout_format=".4g", continuous_update=False,
                                   layout=W.Layout(width="280px"))
        self.scheduler = W.Dropdown(options=list(SCHEDULERS), value=scheduler,
                                    description="scheduler", layout=W.Layout(width="250px"))
        names = self.model.names
        self.parameter = W.Dropdown(options=names, value=names[0] if names else None,
                                    description="parameter", layout=W.Layout(width="230px"))
        self.state_key = W.Dropdown(options=["(none yet)"], description="state",
                                    layout=W.Layout(width="230px"))
        width = self.canvas.css_width
        half = f"{int(width.removesuffix('px')) // 2}px"
        self.code = W.HTML(layout=W.Layout(width=f"{CODE_PX}px", overflow="auto"))
        self.caption = W.HTML(layout=W.Layout(width=f"{WIDTH_PX - CODE_PX - 10}px"))
        self.left_title = W.HTML(layout=W.Layout(width=half))
        self.right_title = W.HTML(layout=W.Layout(width=half))
        self.image = W.Image(format="png", layout=W.Layout(width=width))
        self.curves_image = W.Image(format="png",
                                    layout=W.Layout(width=self.curves.canvas.css_width))
        self.table = W.HTML(layout=W.Layout(width=width, overflow="auto"))

        self.next_button.on_click(lambda _: self.next_stage())
        self.run_button.on_click(lambda _: self.start_run(self.steps.value))
        self.stop_button.on_click(lambda _: self.stop())
        self.optimizer.observe(self._on_optimizer, names="value")
        self.lr.observe(self._on_lr, names="value")
        self.scheduler.observe(self._on_scheduler, names="value")
        self.parameter.observe(lambda change: self._draw_stage(), names="value")
        self.state_key.observe(self._on_state_key, names="value")
        self._syncing = False  # True while _draw_all rewrites the state dropdown itself
        super().__init__([
            self.title,
            W.HBox([self.next_button, self.run_button, self.steps, self.stop_button,
                    self.progress, self.status]),
            W.HBox([self.optimizer, self.lr, self.scheduler]),
            W.HBox([self.parameter, self.state_key]),
            W.HBox([self.code, self.caption], layout=W.Layout(grid_gap="10px")),
            W.HBox([self.left_title, self.right_title]), self.image,
            self.curves_image, self.table,
        ])
        self.model.evaluate()
        self._draw_all()

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        m = self.model
        return (f"TrainingStepper({type(m.model).__name__}, {m.optimizer_name}, "
                f"{m.steps} steps, next: {m.next_stage_name})")

    def fallback_text(self):
        """Title, what the last line did, and each picture's title with its colour scale."""
        titles = [("left: ", self.left_title.value), ("right: ", self.right_title.value)]
        return [self.title.value, self.caption.value,  # a panel with a note has no title
                *(side + title for side, title in titles if plain_lines(title))]

    def fallback_png(self):
        """The notebook file's picture: what the last line changed, above the curves."""
        return joined_png([[self.image.value], [self.curves_image.value]])

    # -- actions --------------------------------------------------------------------------------
    def next_stage(self):
        """Run the highlighted line; show what it changed.

        The status says which line is running first: the kernel sends it at once,
        so on a big model the student sees it while the line runs.
        """
        self.ahead.schedule([])  # what waits to be rendered ahead is of the stage now left
        self.status.value = f"running {self.model.next_stage_code()}…"
        result = self.model.next_stage()
        self._draw_all(curves=result.stage == "step")
        self.status.value = ""
        return result

    def run(self, steps, chunk=CHUNK):
        """Train ``steps`` iterations now (blocking), redrawing after every chunk."""
        until = self.model.steps + steps
        for done, total in self.model.run(steps, chunk):
            self._show_progress(done, total, until=until)
        self._draw_all()

    def start_run(self, steps):
        """The button: train in an asyncio task when an event loop runs (a kernel), else now."""
        if self.task is not None and not self.task.done():
            return self.task
        self.ahead.schedule([])  # nothing rendered ahead while it trains
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.run(steps)
            return None
        self.task = asyncio.ensure_future(self.run_async(steps))
        return self.task

    async def run_async(self, steps, chunk=CHUNK):
        """Train chunk by chunk, giving the kernel a chance to handle "stop" in between.

        What a person sees: "0 / N steps" at once, the curves after the first iteration,
        then about every ``REDRAW_S`` seconds (``_picture_due``), and at the end.
        """
        self._running(True)
        self.progress.max, self.progress.value = steps, 0
        self.status.value = f"0 / {steps} steps"
        until = self.model.steps + steps  # the x axis reaches it from the first picture
        done = 0
        try:
            await sleep(PAUSE_S)  # shown before training takes the CPU
            if not self.model.stopping:  # (stop clicked meanwhile)
                for done, _ in self.model.run(1, chunk=1):  # the first point, at once
                    self._show_progress(done, steps, until=until)
            shown = clock()
            await sleep(PAUSE_S)
            rested, first = clock(), done
            if done < steps and not self.model.stopping:
                for more, _ in self.model.run(steps - done, chunk):  # a chunk since `rested`
                    done, now = first + more, clock()
                    if _picture_due(shown, now - rested, now):
                        self._show_progress(done, steps, until=until)
                        shown = clock()
                        await sleep(PAUSE_S)
                    else:
                        await sleep(GAP_S)
                    rested = clock()
        finally:
            self.model.request_stop(False)  # a stop asked for between two runs is used up
            self._running(False)
            self._show_progress(done, steps, curves=False)  # the curves: in _draw_all
            self.after_run = True
            self._draw_all()

    def stop(self):
        """Ask the run to stop before its next iteration."""
        self.model.request_stop()
        self.status.value = "stopping…"

    def _running(self, on):
        self.run_button.disabled = self.next_button.disabled = on
        self.optimizer.disabled = self.lr.disabled = self.scheduler.disabled = on
        self.stop_button.disabled = not on

    def _on_optimizer(self, change):
        self.model.set_optimizer(change["new"])
        self._draw_all()

    def _on_lr(self, change):  # only the text changes: the pictures show what already ran
        self.model.set_lr(change["new"])
        self._draw_title()
        self._draw_code()

    def _on_scheduler(self, change):
        self.model.set_scheduler(change["new"])
        self._draw_title()
        self._draw_code()

    def _on_state_key(self, change):
        if not self._syncing:
            self._draw_stage()

    # -- drawing -----------------------------------------------------------------------------
    def _show_progress(self, done, total, curves=True, until=0):
        self.progress.max, self.progress.value = total, done
        last = self.model.evaluations[-1] if self.model.evaluations else None
        held_out = "" if last is None or last["accuracy"] is None else \
            f", held-out accuracy {last['accuracy']:.1%}"
        self.status.value = f"{done} / {total} steps{held_out}"
        if curves:
            self.curves_image.value = self.curves.png(self.model.history, self.model.evaluations,
                                                      until)
        self._draw_title()

    def _draw_all(self, curves=True):
        """Everything: the pictures first (what a person waits for), then the texts."""
        self._sync_state_keys()
        titles = self._draw_picture()
        if curves:
            self.curves_image.value = self.curves.png(self.model.history, self.model.evaluations)
        self._draw_stage_text(titles)
        self._draw_title()
        self._draw_code()
        self._draw_table()

    def _sync_state_keys(self):
        """The state dropdown's options: the optimizer's state names now."""
        keys = self.model.state_keys() or ["(none yet)"]
        if list(self.state_key.options) != keys:
            previous = self.state_key.value
            self._syncing = True  # one redraw after this, not one per change of the dropdown
            try:
                self.state_key.options = keys
                tensors = [k for k in keys if k != "step"]
                self.state_key.value = previous if previous in keys else (tensors or keys)[0]
            finally:
                self._syncing = False

    def _draw_title(self):
        m = self.model
        self.title.value = (
            f"<b>TrainingStepper</b> — {html.escape(type(m.model).__name__)}, "
            f"{m.optimizer_name}, lr now {m.current_lr():.4g}, scheduler {m.scheduler_name}; "
            f"{m.steps} optimizer steps, batch size {m.batch_size}")

    def _draw_code(self):
        m = self.model
        done = m.last.stage if m.last is not None else None
        lines = [f"<span style='color:gray'>{html.escape(line)}</span>" for line in m.setup_code()]
        lines.append("")
        for stage, text in m.code_lines():
            mark = ""
            if stage is not None and stage == done:
                mark = "background:#ffe8a3;"
            is_next = stage == m.next_stage_name and not text.strip().startswith("scheduler")
            arrow = "▶ " if is_next else "  "
            lines.append(f"<span style='{mark}'>{arrow}{html.escape(text)}</span>")
        legend = ("<span style='background:#ffe8a3'>&nbsp;just ran&nbsp;</span> "
                  "▶ runs on the next click")
        self.code.value = (f"<pre style='{self.style}; margin:0'>{chr(10).join(lines)}</pre>"
                           f"<div style='{self.style}'>{legend}</div>")

    def _draw_stage(self):
        """The stage's picture and its texts (the parameter or the state dropdown changed)."""
        self._draw_stage_text(self._draw_picture())

    def _draw_picture(self):
        """Show the stage's picture (kept, or rendered now), then render ahead what the
        controls may ask for next; return the picture's two titles (HTML)."""
        name, state_key = self.parameter.value, self.state_key.value
        self.image.value, *titles = self._picture(name, state_key, self.model.optimizer_name)
        self._render_ahead(name, state_key)
        return titles

    def _draw_stage_text(self, titles):
        """The caption (what the line did), the pictures' titles and the parameter menu."""
        result = self.model.last
        # the forward and loss stages show the output and the loss: no parameter to pick
        idle = result is None or result.stage in ("forward", "loss")
        self.parameter.disabled = idle
        self.parameter.tooltip = (
            "the output and the loss are shown now: no parameter to pick until backward()"
            if idle else "the parameter shown in the pictures")
        code = html.escape(result.code) if result else ""
        text = html.escape(result.summary()) if result else "nothing has run yet"
        self.caption.value = f"<div style='{self.style}'><b>{code}</b> {text}</div>"
        self.left_title.value, self.right_title.value = (
            f"<div style='{self.style}'>{title}</div>" for title in titles)

    def _picture_key(self, name, state_key, optimizer):
        """What the stage's picture shows: the stage (``stages_run``, and the tensors'
        versions when it began and now, should code outside the stepper change them; see
        ``_render_next_zero_grad``), the parameter (not for forward and loss: they show the
        output) and, after step(), the optimizer's state: ``state_key`` of the optimizer
        that stepped, or the empty state of a new one (``optimizer`` not the one in use, or
        not stepped yet)."""
        m = self.model
        stage = None if m.last is None else m.last.stage
        shown = (m.stages_run, m.versions_before, m.versions(), stage)
        if stage in (None, "forward", "loss"):
            return shown
        if stage != "step":
            return (*shown, name)
        fresh = optimizer != m.optimizer_name or m.optimizer_steps == 0
        return (*shown, name, optimizer, None if fresh else state_key)

    def _picture(self, name, state_key, optimizer):
        """``(PNG, left title, right title)`` of the last stage for parameter ``name``, state
        ``state_key`` and optimizer ``optimizer``: rendered once and kept (the last ``KEEP``),
        so a picture rendered ahead while the controls rested is shown at once."""
        key = self._picture_key(name, state_key, optimizer)
        if key not in self.rendered:
            self._keep(key, self._render(self.model.last, name, state_key, optimizer))
        return self.rendered[key]

    def _keep(self, key, picture):
        """Keep ``picture`` under ``key``, forgetting the oldest beyond ``KEEP``."""
        if len(self.rendered) >= KEEP:
            del self.rendered[next(iter(self.rendered))]  # the oldest
        self.rendered[key] = picture

    def _render_next_zero_grad(self, name):
        """The picture of the next stage when it is zero_grad, rendered now: it shows each
        .grad as it is, which zero_grad will drop, so nothing needs to run
        (``zero_grad_preview``). Kept under the key the stage will have if the tensors are
        as now when it begins and it leaves the .grad None: else it is drawn anew."""
        m = self.model
        preview = m.zero_grad_preview()
        if preview is not None:
            result, after = preview
            key = (m.stages_run + 1, m.versions(), after, "zero_grad", name)
            if key not in self.rendered:
                self._keep(key, self._render(result, name, None, m.optimizer_name))

    def _render_ahead(self, name, state_key):
        """While the controls rest: the pictures of the parameter, state and optimizer
        dropdowns' next choices (when they change the picture), what can be of the next
        stage, the curves' frame of "run N steps", then the dropdowns' previous choices.
        After a run, that frame first: a person who ran N steps is likely to run N more."""
        m = self.model
        stage = None if m.last is None else m.last.stage
        now, controls = m.optimizer_name, []
        if stage not in (None, "forward", "loss"):  # (there the picture shows no parameter)
            controls.append([(other, state_key, now)
                             for other in _neighbours(self.parameter.options, name)])
        if stage == "step":
            if m.optimizer_steps:  # (a new optimizer shows no state: one picture for any key)
                controls.append([(name, other, now)
                                 for other in _neighbours(self.state_key.options, state_key)])
            controls.append([(name, state_key, other)
                             for other in _neighbours(list(OPTIMIZERS), now)])
        # each dropdown's next choice, the next stage, then the dropdowns' previous choices
        pictures = [lambda choice=choice: self._picture(*choice)
                    for choice in [c[0] for c in controls if c]]
        if name is not None:
            pictures += [lambda: self._render_next_zero_grad(name),
                         lambda: self._prepare_next_frame(name)]
        pictures.insert(0 if self.after_run else len(pictures), self._prepare_run_frame)
        pictures += [lambda choice=choice: self._picture(*choice)
                     for choice in [c for cs in controls for c in cs[1:]]]
        self.after_run = False
        self.ahead.schedule(pictures)

    def _prepare_next_frame(self, name):
        """The frame backward will draw for ``name`` when it is the next stage (it cannot be
        rendered ahead: it fills the .grad), rendered now if the canvas does not keep it (a
        parameter of a shape not shown in that stage yet): its .grad beside its values. The
        panels are given zeros of its shape (only the frame is rendered; nothing runs); a
        frozen parameter's .grad panel is a note (backward leaves its .grad None)."""
        m = self.model
        if m.next_stage_name != "backward":
            return
        parameter = dict(m.model.named_parameters())[name]
        zeros = np.zeros(tuple(parameter.shape))
        if parameter.requires_grad:
            self.left_panel.show(zeros)
        else:
            self.left_panel.message("")
        self.right_panel.show(zeros)
        self.canvas.prepare()

    def _prepare_run_frame(self):
        """The frame of the curves during a run of N steps (the ``N`` box) from now, rendered
        if the canvas does not keep it: its x axis reaches the run's last step."""
        m = self.model
        self.curves.prepare(m.history, m.evaluations, m.steps + self.steps.value)

    def _render(self, result, name, state_key, optimizer):
        """Draw the picture of ``result`` (a ``StageResult``: the last, or the next zero_grad's
        preview; see ``_picture``); ``(PNG, left title, right title)``."""
        m = self.model
        left, right = self.left_panel, self.right_panel
        if result is None:
            titles = (self._note(left, "press 'next stage ▶'"), self._note(right, ""))
            return (self.canvas.png(), *titles)
        change = next((p for p in result.params if p.name == name), None)
        stage = result.stage
        if stage == "zero_grad":
            titles = (self._show(left, change.grad_before, f"{name}.grad was None",
                                 f"{name}.grad before"),
                      self._note(right, f"{name}.grad is now None\n(set_to_none=True)"))
        elif stage in ("forward", "loss"):
            titles = (self._show(left, result.output, "", "output (rows: samples)"),
                      self._note(right, f"loss = {result.loss:.4f}", fontsize=font_size("big"),
                                 color="black") if stage == "loss"
                      else self._note(right, "no parameter changed"))
        elif stage == "backward":
            titles = (self._show(left, change.grad_after, "no .grad", f"{name}.grad"),
                      self._show(right, m.values(name), "", f"{name} (what step() will move)"))
        elif change.grad_after is None:  # step() skips a parameter without .grad (a frozen one)
            titles = (self._note(left, f"Δ {name} = 0:\nstep() skips a parameter\nwithout .grad"),
                      self._step_state(change, state_key, optimizer))
        else:  # step
            titles = (self._show(left, change.delta, "", f"Δ {name} (update)"),
                      self._step_state(change, state_key, optimizer))
        return (self.canvas.png(), *titles)

    def _step_state(self, change, key, optimizer):
        """The right panel after step(): the optimizer's ``state[key]`` of the parameter, or
        why there is none (a new optimizer, no .grad, no state kept); its title."""
        m, panel = self.model, self.right_panel
        if optimizer != m.optimizer_name or m.optimizer_steps == 0:  # switched after this step
            return self._note(panel, f"a new {optimizer}: its state is\n"
                              "empty until its first step()")
        value = change.state.get(key)
        if value is None and change.grad_after is None:  # e.g. a frozen parameter
            return self._note(panel, f"{change.name} had no .grad:\nstep() skipped it, no state")
        if value is None:
            return self._note(panel, f"{m.optimizer_name} keeps no\nper-parameter state")
        if np.ndim(value) == 0:
            return self._note(panel, f"state['{key}'] = {float(value):g}",
                              fontsize=font_size("big"), color="black")
        return self._show(panel, value, "", f"state['{key}']")

    def _show(self, panel, values, empty, what):
        """Draw ``values`` in ``panel`` (or the ``empty`` note); its title: ``what`` and the
        colour scale."""
        if values is None:
            return self._note(panel, empty)
        scale = panel.show(values)
        return f"<b>{html.escape(what)}</b><br>colours: ±{scale:.3g} (white = 0)"

    def _note(self, panel, text, **style):
        """A panel with a centred note; its title: none."""
        panel.message(text, **style)
        return ""

    def _draw_table(self):
        rows = self.model.table()
        if not rows:
            self.table.value = ""
            return
        fmt = lambda v, spec=".3g": "—" if v is None else format(v, spec)
        # one line per cell: a header or a shape never breaks inside (the table scrolls)
        head = "".join(f"<th style='white-space:nowrap'>{h}</th>" for h in (
            "parameter", "shape", "|.grad| before", "|.grad| after", "|Δ|", "|Δ|/|p|",
            "optimizer state"))
        cell = "<td style='white-space:nowrap'>{}</td>"
        body = "".join(
            "<tr>" + "".join(cell.format(v) for v in (
                html.escape(r["name"]), r["shape"], fmt(r["grad_before"]), fmt(r["grad"]),
                fmt(r["delta"]), fmt(r["relative"], ".2%") if r["relative"] is not None else "—"))
            + f"<td>{html.escape(r['state'])}</td></tr>" for r in rows)
        self.table.value = (f"<table style='{self.style}; border-collapse:collapse' cellpadding='3'>"
                            f"<tr>{head}</tr>{body}</table>")


def _neighbours(options, value):
    """The options after and before ``value`` (round the end, as the browser's next option
    is): what a dropdown is likely to be set to next."""
    options = list(options)
    if value not in options or len(options) < 2:
        return []
    at = options.index(value)
    return list(dict.fromkeys([options[(at + 1) % len(options)], options[at - 1]]))
