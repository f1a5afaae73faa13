"""The ipywidgets view of ``GradientInspectorModel``.

Layout::

    title: model, loss, step
    [max_norm ──●──] [clip_value ──●──]
    [when training ▾] [step ▶] [10 steps ▶▶]
    what clip_grad_norm_ returned, the clip coefficient; what clip_grad_value_ clamped
    [ gradient norm per parameter, log scale | histogram of log10|g| per parameter ]
    [ timeline: gradient norms across training steps, log scale                   ]
    [ table: norm, mean, std, |max|, zeros, norm after each clipping, per parameter ]

The sliders only *preview* clipping (on copies of the gradients); the step
buttons train, clipping the real gradients as "when training" says.

Speed: a slider moves by one step at a time (an arrow key, a drag), so while
the controls rest the view renders what one step either way of each slider
would show (``RenderAhead``), and the timeline of the other "when training"
state; it keeps the last ``KEEP`` of these pictures until the next gradients.
A control that lands on a kept position shows it without drawing.

"step ▶" trains, so its pictures cannot be drawn from what is known, but on a
small model (up to ``REHEARSE_PARAMETERS``) with one batch, the step itself can
be taken ahead on copies: while the controls rest, the model rehearses the next
step on deep copies of the module and the optimizer
(``GradientInspectorModel.rehearsal``: the real ones, and the random number
generator, are left as they were) and the view renders its pictures, kept
under ``_shown()``: everything they are drawn from (every statistic, the norms
of the timeline, the clipping previews, the slider values and the axes' ranges
before the step), as exact text. On the click the real step runs and, when
what it gives is exactly what was rehearsed, its pictures are shown without
drawing; anything else (the learning rate changed, a nondeterministic model)
gives another key, and the pictures are drawn as before.

"10 steps" is paced for the browser, as TrainingStepper's "run N steps": the
progress at once, then the timeline (the smaller picture, drawn from the norms
alone) after the first step and at most every ``REDRAW_S``, each followed by a
rest of the kernel (``PAUSE_S``): the server and the browser share the cores,
and pictures sent faster than they can show them only queue up (a picture of
both figures after every step made a person wait 450-600 ms between two on a
quiet 2-core machine). The bars, histograms, caption and table, which need the
statistics of every gradient, come once, for the last step.
"""
from __future__ import annotations

import asyncio
import html
import math
import time

import ipywidgets as W
import matplotlib as mpl
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullLocator

from ._render import (COLORBAR_ROOM, CSS_DPI, Canvas, PictureFallback, RenderAhead, font_size,
                      html_style, joined_png, set_title, small_fonts, text_scale)
from .gradient_inspector import LOG_EDGES, SAMPLE_SIZE, GradientInspectorModel

GREY, NORM_COLOUR, VALUE_COLOUR = "#b8b8b8", "#219ebc", "#f77f00"
HIST_CMAP = "Greys"  # counts are never negative: a one-sided scale from 0 to the row's peak
WIDTH_PX = 760  # CSS pixels: fits a notebook at its default width
LEGEND_INCHES = 0.5  # below the bar chart: its legend, outside the bars
TIMELINE_LEGEND_INCHES = 1.45  # right of the timeline: its legend
REDRAW_S = 0.1  # during "10 steps", a new picture at most this often (seconds)
PAUSE_S = 0.04  # the kernel rests this long after the first progress and after each picture
KEEP = 12  # pictures of slider positions the view keeps (shown or rendered ahead), per canvas
KEEP_REHEARSED = 4  # rehearsed models (copies of the model and its optimizer) kept
#: parameters up to which the next step is rehearsed while the controls rest (a deep copy
#: of the model and its optimizer, and one step: a click arriving meanwhile waits for it)
REHEARSE_PARAMETERS = 1 << 20
#: gradient entries (all parameters) up to which the clip_value slider's neighbours are
#: rendered ahead: each needs a clip_grad_value_ preview, a pass over every entry (on two
#: 4096x4096 layers ~100 ms that would hold up a click arriving meanwhile)
AHEAD_ENTRIES = 1 << 22


class GradientInspector(PictureFallback, W.VBox):
    """Per-parameter gradients, a ``clip_grad_norm_`` / ``clip_grad_value_`` preview, a timeline.

    >>> inspector = GradientInspector(model, data=(x, y))   # one forward + backward
    >>> inspector.max_norm.value = 0.5                       # preview clip_grad_norm_
    >>> inspector.step_button.click()                        # optimizer.step(), next gradients
    """

    def __init__(self, module, data, loss_fn=None, optimizer=None, lr=0.1):
        self.model = GradientInspectorModel(module, data, loss_fn=loss_fn, optimizer=optimizer,
                                            lr=lr)
        names = [r.name for r in self.model.rows]
        self.style = html_style()  # the text scale when the widget was built
        row = 0.24 * font_size("tick") / 10  # inches per parameter row: its label's height
        height = 1.1 + row * (len(names) + 1)
        legend = LEGEND_INCHES * text_scale()
        self.canvas = Canvas(ncols=2, width=WIDTH_PX / CSS_DPI, height=max(height, 2.4) + legend)
        for i, slot in enumerate(self.canvas.slots):  # room below for a legend
            self.canvas.slots[i] = _raised(slot, self.canvas.figure, legend)
        self.norms_panel = NormsPanel(self.canvas, 0, names)
        self.hist_panel = HistogramPanel(self.canvas, 1, names)
        self.timeline_canvas = Canvas(ncols=1, width=WIDTH_PX / CSS_DPI, height=2.8)
        self.timeline_panel = TimelinePanel(self.timeline_canvas, names)

        self.title = W.HTML()
        self.task = None  # the asyncio task of a run of several steps
        self.pictures = {}  # (max_norm, clip_value) -> (PNG, caption, table) of these gradients
        self.timelines = {}  # max_norm (None: no max_norm line) -> the timeline's PNG
        self.steps_ahead = {}  # _shown() after a rehearsed step -> {"image": ..., "timeline": ...}
        self.rehearsed = {}  # (clip_mode, slider positions) -> the model after the next step
        self.rehearsing = True  # False once a rehearsal failed (a model deepcopy refuses)
        self.parameter_count = sum(p.numel() for _, p in self.model.named_parameters())
        self.stepped = False  # the last input was a step: rehearse the next one first
        # the sliders' neighbours while nobody waits: from 0.1 s of quiet (each task takes
        # 5-20 ms), so that someone pressing an arrow key a few times a second finds them
        self.ahead = RenderAhead(delay_s=0.1)
        self.max_norm = W.FloatLogSlider(value=1.0, base=10, min=-4, max=3, step=0.05,
                                         description="max_norm", readout_format=".3g",
                                         continuous_update=True, layout=W.Layout(width="370px"))
        self.clip_value = W.FloatLogSlider(value=0.01, base=10, min=-6, max=1, step=0.05,
                                           description="clip_value", readout_format=".3g",
                                           continuous_update=True, layout=W.Layout(width="370px"))
        self.clip_mode = W.Dropdown(options=[("no clipping", "none"),
                                             ("clip_grad_norm_(max_norm)", "norm"),
                                             ("clip_grad_value_(clip_value)", "value")],
                                    value="none", description="when training",
                                    style={"description_width": "initial"},
                                    layout=W.Layout(width="330px"))
        self.step_button = W.Button(description="step ▶", tooltip="optimizer.step(), then the "
                                    "gradients of the next batch", layout=W.Layout(width="90px"))
        self.steps_button = W.Button(description="10 steps ▶▶", layout=W.Layout(width="110px"))
        width = self.canvas.css_width
        self.caption = W.HTML(layout=W.Layout(width=width))
        self.image = W.Image(format="png", layout=W.Layout(width=width))
        self.timeline = W.Image(format="png",
                                layout=W.Layout(width=self.timeline_canvas.css_width))
        self.table = W.HTML(layout=W.Layout(width=width, overflow="auto"))

        self.max_norm.observe(lambda change: self._draw_clipping(  # the max_norm line moves
            timeline=self.clip_mode.value == "norm", moved=True), names="value")
        self.clip_value.observe(lambda change: self._draw_clipping(moved=True), names="value")
        self.clip_mode.observe(lambda change: self._draw_timeline(ahead=True), names="value")
        self.step_button.on_click(lambda _: self.train(1))
        self.steps_button.on_click(lambda _: self.start_training(10))
        super().__init__([
            self.title,
            W.HBox([self.max_norm, self.clip_value]),
            W.HBox([self.clip_mode, self.step_button, self.steps_button]),
            self.caption, self.image, self.timeline, self.table,
        ])
        self._draw_gradients()
        for panel in (self.norms_panel, self.hist_panel, self.timeline_panel):
            _keep_label_in_place(panel.ax.xaxis)  # placed by the first drawing

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        return (f"GradientInspector({type(self.model.module).__name__}, "
                f"{len(self.model.rows)} parameters)")

    def fallback_png(self):
        """The notebook file's picture: the bars and histograms above the timeline."""
        return joined_png([[self.image.value], [self.timeline.value]])

    # -- reactions ------------------------------------------------------------------
    def train(self, count=1):
        """``count`` optimizer steps (clipping as "when training" says), then redraw (now)."""
        self.title.value = self._title(  # sent at once, seen while it runs
            progress=f"{count} optimizer step{'s' * (count > 1)}")
        self._step(count)
        self.stepped = True
        self._draw_gradients()

    def start_training(self, count):
        """The "10 steps" button: inside a running event loop (a kernel), an asyncio task
        that trains step by step with the progress in the title and the timeline, so the
        kernel stays free to send them (a big model's ten steps take seconds); otherwise
        ``train`` now. The controls wait meanwhile (disabled until the task ends)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.train(count)
            return None
        self._running(True)
        self.stepped = True
        self.ahead.schedule([])  # nothing rendered ahead between the steps: they would wait
        self.task = asyncio.ensure_future(self._train_async(count))
        return self.task

    def _running(self, on):
        for control in (self.step_button, self.steps_button, self.max_norm, self.clip_value,
                        self.clip_mode):
            control.disabled = on

    def _step(self, count, summarise=True):
        self.model.step(count, clip_mode=self.clip_mode.value, max_norm=self.max_norm.value,
                        clip_value=self.clip_value.value, summarise=summarise)

    async def _train_async(self, count):
        """Step by step, paced for the browser (see the module's doc): "training: step 1 /
        count" at once, the timeline after the first step and then at most every
        ``REDRAW_S`` (drawn again after the next step when it did not change), each
        picture followed by a rest of ``PAUSE_S``; the bars, histograms, caption and table
        (the statistics of every gradient) once, for the last step."""
        drawn = None  # when the last picture was sent (time.perf_counter())
        try:
            self.title.value = self._title(progress=f"step 1 / {count}")
            await asyncio.sleep(PAUSE_S)  # shown before training takes the CPU
            for done in range(1, count + 1):
                self._step(1, summarise=done == count)
                due = drawn is None or time.perf_counter() - drawn >= REDRAW_S
                if done < count and due and self._draw_progress(done, count):
                    await asyncio.sleep(PAUSE_S)
                    drawn = time.perf_counter()
                else:  # (a timeline that did not change, as in NaN steps, is not sent)
                    await asyncio.sleep(0)  # the kernel may answer other messages
        finally:
            self._running(False)
            if not self.model.summarised:  # a step raised: show the gradients it got to
                self.model.summarise()
            self._draw_gradients()

    def _draw_progress(self, done, count):
        """A picture during a run: the timeline (the cheaper picture, drawn from the norms
        alone), and the title with the step and its loss. Returns whether the picture
        changed (a widget sends no value equal to the one it has)."""
        self.timeline_panel.set_history(self.model)
        self.timelines.clear()  # they showed the previous steps
        shown = bytes(self.timeline.value)
        self._draw_timeline()
        self.title.value = self._title(progress=f"step {done} / {count}, loss "
                                       f"{self.model.loss:.4f}; bars and table at the end")
        return bytes(self.timeline.value) != shown

    def _title(self, progress=""):
        """The title: the model, its loss and steps; or, with ``progress``, how far a run got."""
        if progress:
            return (f"<b>GradientInspector</b> — "
                    f"{html.escape(type(self.model.module).__name__)}: training: {progress}…")
        return (f"<b>GradientInspector</b> — {html.escape(type(self.model.module).__name__)}: "
                f"loss {self.model.loss:.4f} after {self.model.steps} optimizer steps, "
                f"{len(self.model.rows)} parameters with .grad")

    def refresh(self):
        """Recompute the gradients on the next batch (after changing the model yourself)."""
        self.model.compute()
        self._draw_gradients()

    # -- drawing ------------------------------------------------------------------------
    def _draw_gradients(self):
        """New gradients: new frames (axis ranges, histograms, timeline), then the clipping
        (the pictures of a rehearsed step that gave exactly these gradients: kept)."""
        ready = self.steps_ahead.get(self._shown(self.model), {}) if self.steps_ahead else {}
        self.rehearsed.clear()  # rehearsed from the previous gradients
        self._set_frames()
        self.forget_pictures()  # they showed the previous gradients
        if "image" in ready:
            self.pictures[self._picture_key()] = ready["image"]
        if "timeline" in ready:
            self.timelines[self._timeline_key()] = ready["timeline"]
        # the bars and histograms first: the browser decodes that big picture while the
        # timeline is drawn, so the last one to arrive is the smaller timeline; the texts
        # (the title, the caption and the 10-column table) after both pictures
        self._draw_clipping(timeline=True)
        self.title.value = self._title()

    def _set_frames(self):
        """The panels' artists and axis ranges for the model's gradients (nothing drawn)."""
        self.norms_panel.set_rows(self.model.rows, self.model.history[-1].total_norm)
        self.hist_panel.set_rows(self.model.rows)
        self.timeline_panel.set_history(self.model)
        self.hist_note = _sample_note(self.model.rows)

    def forget_pictures(self):
        """Forget the kept pictures of slider positions: each is drawn again when shown."""
        self.pictures.clear()
        self.timelines.clear()

    def _picture_key(self, max_norm=None, clip_value=None):
        """The key of ``pictures`` for these slider values (default: the sliders')."""
        return (_position(self.max_norm.value if max_norm is None else max_norm),
                _position(self.clip_value.value if clip_value is None else clip_value))

    def _timeline_key(self, clip_mode=None, max_norm=None):
        """The key of ``timelines``: the max_norm line's position, or None (no line)."""
        clip_mode = self.clip_mode.value if clip_mode is None else clip_mode
        max_norm = self.max_norm.value if max_norm is None else max_norm
        return _position(max_norm) if clip_mode == "norm" else None

    def _draw_timeline(self, ahead=False):
        """The timeline as "when training" says (``ahead``: then render the neighbours)."""
        self.timeline.value = self._timeline_png(self.clip_mode.value, self.max_norm.value)
        if ahead:
            self._render_neighbours_ahead()

    def _draw_clipping(self, timeline=False, ahead=True, moved=False):
        """The clipping previews; ``timeline``: the timeline changed too (new gradients, or
        max_norm moved while training clips by norm); ``ahead``: then render the neighbours;
        ``moved``: a slider moved (the likely next input is another slider move)."""
        if moved:
            self.stepped = False
        png, caption, table = self._clipping_picture(self.max_norm.value, self.clip_value.value)
        self.image.value = png  # pictures first: the browser decodes them while it lays out text
        if timeline:
            self.timeline.value = self._timeline_png(self.clip_mode.value, self.max_norm.value)
        self.caption.value, self.table.value = caption, table
        if ahead:
            self._render_neighbours_ahead()

    def _clipping_picture(self, max_norm, clip_value):
        """``(PNG, caption, table)`` of the previews at these slider values: drawn once per
        gradients and kept (``KEEP``), so a position rendered ahead is shown at once."""
        key = self._picture_key(max_norm, clip_value)
        if key not in self.pictures:
            by_norm = self.model.clip_norm(max_norm)
            by_value = self.model.clip_value(clip_value)
            self.norms_panel.show_clipping(by_norm, by_value)
            self.hist_panel.show_clip_value(by_value.threshold)
            _keep(self.pictures, key, (self.canvas.png(),
                                       _caption_html(by_norm, by_value, self.style, self.hist_note),
                                       self._table_html(by_norm, by_value)))
        return self.pictures[key]

    def _timeline_png(self, clip_mode, max_norm):
        """The timeline with the ``max_norm`` line when ``clip_mode`` is "norm" (without it
        otherwise): drawn once per gradients and kept, like ``_clipping_picture``."""
        key = self._timeline_key(clip_mode, max_norm)
        if key not in self.timelines:
            self.timeline_panel.show_limit(clip_mode, max_norm)
            _keep(self.timelines, key, self.timeline_canvas.png())
        return self.timelines[key]

    def _render_neighbours_ahead(self):
        """While the controls rest: each slider one step either way (the timeline too, for
        max_norm), the timeline of the other "when training" state, and the timeline's
        axes for the steps range that comes next. The clip_value neighbours only up to
        ``AHEAD_ENTRIES`` gradient entries (each reads them all); and the next step,
        rehearsed (``_render_step_ahead``). After a step, what a step needs comes first (the
        rehearsal, then the steps axis: "10 steps" pastes it); after a slider, its neighbours."""
        max_norm, clip_value, mode = self.max_norm.value, self.clip_value.value, self.clip_mode.value
        sliders = []
        for value in _neighbours(self.max_norm):
            sliders += [lambda value=value: self._clipping_picture(value, clip_value),
                        lambda value=value: self._timeline_png(mode, value)]
        if sum(int(np.prod(r.shape, dtype=np.int64)) for r in self.model.rows) <= AHEAD_ENTRIES:
            sliders += [lambda value=value: self._clipping_picture(max_norm, value)
                        for value in _neighbours(self.clip_value)]
        sliders.append(lambda: self._timeline_png("none" if mode == "norm" else "norm", max_norm))
        step = []
        if self._can_rehearse():
            step = [lambda: self._render_step_ahead("image"),
                    lambda: self._render_step_ahead("timeline")]
        step.append(self.timeline_panel.render_next_steps_axis)
        self.ahead.schedule(step + sliders if self.stepped else sliders + step)

    # -- the next step, rehearsed ----------------------------------------------------------
    def _can_rehearse(self):
        """Whether the next step is rehearsed: a small model that ``can_rehearse()``, unless a
        rehearsal failed before."""
        return (self.rehearsing and self.parameter_count <= REHEARSE_PARAMETERS
                and self.model.can_rehearse())

    def _shown(self, model):
        """Everything the pictures, caption and table of ``model``'s gradients are drawn from,
        as one exact text (floats by ``repr``): every statistic and histogram, the timeline's
        records, both clipping previews at the sliders' values, "when training", and the
        panels' axis ranges before these gradients set theirs (a range only grows, so the
        one drawn depends on the ranges before). Equal texts give equal pictures."""
        max_norm, clip_value = self.max_norm.value, self.clip_value.value
        rows = [(r.name, r.shape, r.stats, r.log_counts.tobytes(), r.sampled) for r in model.rows]
        return repr((rows, model.history, model.clip_norm(max_norm), model.clip_value(clip_value),
                     self._picture_key(), self._timeline_key(), self.clip_mode.value,
                     [panel.state() for panel in self._panels()]))

    def _panels(self):
        return (self.norms_panel, self.hist_panel, self.timeline_panel)

    def _rehearsal(self):
        """The model after the next step, rehearsed on copies (``GradientInspectorModel.
        rehearsal``) with the controls' values; taken once per state of the controls (a
        slider moved back and forth finds its rehearsal) until the next gradients."""
        basis = (self.clip_mode.value, self._picture_key())
        if basis not in self.rehearsed:
            try:
                model = self.model.rehearsal(self.clip_mode.value, max_norm=self.max_norm.value,
                                             clip_value=self.clip_value.value)
            except Exception:  # e.g. a module deepcopy refuses: the click will draw (and the
                self.rehearsing = False  # real step raise, if the step itself failed)
                return None
            _keep(self.rehearsed, basis, model, KEEP_REHEARSED)
        return self.rehearsed[basis]

    def _render_step_ahead(self, picture):
        """Render ``picture`` ("image": bars, histograms, caption and table; "timeline") of the
        rehearsed next step and keep it under ``_shown()`` of that step. The panels draw the
        rehearsed model and are then put back (ranges, artists) to the current one; the kept
        pictures of slider positions are left as they were."""
        rehearsed = self._rehearsal()
        if rehearsed is None:
            return
        key = self._shown(rehearsed)  # before its frames: with the current axis ranges
        entry = self.steps_ahead.get(key, {})
        if picture in entry:  # rendered before (the slider moved back)
            return
        _keep(self.steps_ahead, key, entry)
        real = (self.model, self.pictures, self.timelines)
        states = [panel.state() for panel in self._panels()]
        layers = [canvas.kept_layer() for canvas in (self.canvas, self.timeline_canvas)]
        self.model, self.pictures, self.timelines = rehearsed, {}, {}
        try:
            self._set_frames()
            if picture == "image":
                entry["image"] = self._clipping_picture(self.max_norm.value, self.clip_value.value)
            else:
                entry["timeline"] = self._timeline_png(self.clip_mode.value, self.max_norm.value)
        finally:
            self.model, self.pictures, self.timelines = real
            for panel, state in zip(self._panels(), states):
                panel.restore(state)
            self._set_frames()  # the artists show the current gradients again: their layers
            for canvas, layer in zip((self.canvas, self.timeline_canvas), layers):
                canvas.restore_layer(layer)

    def _table_html(self, by_norm, by_value):
        # 11 px and narrow padding: all ten columns, "clamped" included, fit the widget's
        # width at text scale 1; a larger text scale scrolls sideways instead of clipping
        cells = "padding: 0 4px; text-align: right; white-space: nowrap"
        head = ["parameter", "shape", "norm", "mean", "std", "|max|", "zeros",
                "norm after<br>clip_grad_norm_", "norm after<br>clip_grad_value_", "clamped"]
        rows = ["<tr>" + "".join(f"<th style='{cells}'>{h}</th>" for h in head) + "</tr>"]
        for r in self.model.rows:
            s = r.stats
            values = [html.escape(r.name), str(r.shape), f"{s.norm:.3g}", f"{s.mean:.2g}",
                      f"{s.std:.3g}", f"{r.abs_max:.3g}", f"{s.zeros:.0%}",
                      f"{by_norm.after[r.name]:.3g}", f"{by_value.after[r.name]:.3g}",
                      f"{by_value.clamped[r.name]:.0%}"]
            rows.append("<tr>" + "".join(f"<td style='{cells}'>{v}</td>" for v in values)
                        + "</tr>")
        size = round(11 * text_scale())
        return (f"<div style='overflow-x: auto'><table style='{self.style}; font-size: {size}px'>"
                f"{''.join(rows)}</table></div>")


def _position(value):
    """A slider value as a key of kept pictures: 12 significant digits, so that the value
    the browser's slider computes (its own ``base ** exponent``) finds the picture rendered
    ahead for Python's (they may differ in the last bit; no text or pixel shows it)."""
    return float(f"{float(value):.12g}")


def _neighbours(slider):
    """The values one step above and below a ``FloatLogSlider``'s value, within its range
    (the exponent taken to the slider's grid, as its arrow keys move it)."""
    exponent = round(math.log(slider.value, slider.base) / slider.step) * slider.step
    others = (round(exponent + slider.step, 10), round(exponent - slider.step, 10))
    return [slider.base ** e for e in others if slider.min <= e <= slider.max]


def _keep(cache, key, value, keep=KEEP):
    """``cache[key] = value``, forgetting the oldest entry beyond ``keep``."""
    if key not in cache and len(cache) >= keep:
        del cache[next(iter(cache))]
    cache[key] = value


def _caption_html(by_norm, by_value, style, note=""):
    if not by_norm.finite:
        effect = (f"<b style='color:#c0392b'>the gradients hold NaN or inf, so total_norm is "
                  f"{by_norm.total_norm}: clip_grad_norm_ would multiply every .grad by "
                  f"{by_norm.clip_coef_clamped:.4g} (every gradient becomes nan); with "
                  f"error_if_nonfinite=True it raises a RuntimeError instead</b>")
    elif by_norm.clip_coef_clamped < 1.0:
        effect = f"every .grad × {by_norm.clip_coef_clamped:.4g}"
    else:
        effect = "≥ 1: nothing clipped"
    lines = [
        (f"<span style='color:{NORM_COLOUR}'>■</span> <b>clip_grad_norm_</b>(parameters, "
         f"max_norm={by_norm.threshold:.3g}) returned total_norm = <b>{by_norm.total_norm:.6g}</b>;"
         f" clip_coef = max_norm / (total_norm + 1e-6) = {by_norm.clip_coef:.4g} → {effect};"
         f" norm after = {by_norm.total_after:.4g}"),
        (f"<span style='color:{VALUE_COLOUR}'>■</span> <b>clip_grad_value_</b>(parameters, "
         f"clip_value={by_value.threshold:.3g}) clamps every entry into ±{by_value.threshold:.3g}:"
         f" {by_value.changed:.1%} of the entries change; norm after = "
         f"{by_value.total_after:.4g}"),
    ]
    if note:
        lines.append(html.escape(note))
    return f"<div style='{style}'>{'<br>'.join(lines)}</div>"


def _sample_note(rows):
    """What the histograms count, when some gradient is larger than ``SAMPLE_SIZE``."""
    sampled = [r.name for r in rows if r.sampled < np.prod(r.shape, dtype=np.int64)]
    if not sampled:
        return ""
    return (f"histograms of {', '.join(sampled)}: a random sample of {SAMPLE_SIZE:,} entries "
            f"each (numpy default_rng(0)); the statistics use every entry")


def _edge_label(label, value, low, high, name, vertical=False):
    """Say that ``value`` lies outside ``[low, high]`` with ``label`` (a Text in axes
    coordinates) at that edge, an arrow pointing beyond it; hide it when inside.
    Returns whether the value is inside (so its line is drawn)."""
    inside = low <= value <= high
    label.set_visible(not inside)
    if inside:
        return True
    beyond = value > high
    if vertical:
        label.set(text=f"{name} = {value:.3g} {'↑' if beyond else '↓'}", x=0.99,
                  y=0.97 if beyond else 0.03, ha="right", va="top" if beyond else "bottom")
    else:  # two short lines in a corner: the axes' last decade holds no bar
        label.set(text=f"{name} =\n{value:.3g} →" if beyond else f"{name} =\n← {value:.3g}",
                  x=0.99 if beyond else 0.01, y=0.99, ha="right" if beyond else "left", va="top")
    return False


def _edge_text(ax, colour):
    """A label for ``_edge_label``: bold, on white, in axes coordinates."""
    return ax.text(0, 0, "", transform=ax.transAxes, fontsize=font_size("tick"), color=colour,
                   fontweight="bold", visible=False, zorder=5,
                   bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0, "alpha": 0.75})


#: log-axis tick labels "1e-3" as on the histogram's axis: plain text (matplotlib's default
#: "10⁻³" goes through its math-text parser, about a second the first time it is drawn)
DECADES = FuncFormatter(lambda value, _: f"1e{round(np.log10(value))}" if value > 0 else "0")


def _keep_label_in_place(axis):
    """Keep an x axis' label where matplotlib placed it (below its tick labels), so that
    drawing the axis for a new range does not measure every tick label again to place it
    (~3 ms of the axis' 14-24). The same place: single-line tick labels such as "1e-3"
    are as tall as any other (matplotlib gives every line the height of "lp")."""
    if any(label.get_text() for label in axis.get_ticklabels()):  # placed below them
        axis.set_label_coords(*axis.label.get_position(), transform=axis.label.get_transform())


def _raised(box, figure, inches):
    """``box`` (figure coordinates) with its bottom raised by ``inches``."""
    from matplotlib.transforms import Bbox

    lift = inches / figure.get_figheight()
    return Bbox.from_extents(box.x0, box.y0 + lift, box.x1, box.y1)


def _decades(values, pad=0.3):
    """An x-range in log10 units that holds every positive value, padded."""
    logs = np.log10([v for v in values if v > 0 and np.isfinite(v)] or [1.0])
    return np.floor(logs.min() - pad), np.ceil(logs.max() + pad)


def _bars(rows, left, right, low, high):
    """Rectangles ``[left, right] x [row+low, row+high]`` for a PolyCollection."""
    return [[(a, y + low), (b, y + low), (b, y + high), (a, y + high)]
            for y, a, b in zip(rows, left, right)]


class NormsPanel:
    """Horizontal bars, log x: each gradient's norm before (grey) and after each clipping.

    Row 0 is the total norm, with ``max_norm`` marked; the grey bars change only
    with new gradients (background), the coloured ones with the sliders.
    """

    def __init__(self, canvas, index, names):
        self.canvas = canvas
        self.ax = ax = canvas.figure.add_axes(canvas.slots[index])
        labels = ["total"] + list(names)
        self.y = np.arange(len(labels))
        ax.set_xscale("log")
        ax.set_yticks(self.y, labels=labels)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        set_title(ax, "gradient norm (log scale)")
        small_fonts(ax, "‖grad‖ (2-norm)")
        self.before = ax.add_collection(PolyCollection([], facecolor=GREY, label="before"))
        self.after_norm = ax.add_collection(
            PolyCollection([], facecolor=NORM_COLOUR, label="after clip_grad_norm_"))
        self.after_value = ax.add_collection(
            PolyCollection([], facecolor=VALUE_COLOUR, label="after clip_grad_value_"))
        self.limit, = ax.plot([], [], color="#c0392b", linestyle="--", linewidth=1.2,
                              label="max_norm")
        ax.xaxis.set_minor_locator(NullLocator())  # minor log ticks: slow to draw, little use
        ax.xaxis.set_major_formatter(DECADES)
        # proxies: the bars themselves are animated, and animated artists draw no legend swatch
        handles = [Patch(facecolor=GREY, label="before"),
                   Patch(facecolor=NORM_COLOUR, label="after clip_grad_norm_"),
                   Patch(facecolor=VALUE_COLOUR, label="after clip_grad_value_"),
                   Line2D([], [], color="#c0392b", linestyle="--", linewidth=1.2, label="max_norm")]
        canvas.figure.legend(handles=handles,
                             fontsize=font_size("tick"), loc="lower left", ncols=2,
                             frameon=False, handlelength=1.2, columnspacing=1.0,
                             bbox_to_anchor=(0.01, 0.0))  # from the left edge: never cut off
        self.edge = _edge_text(ax, "#c0392b")  # max_norm off the scale
        self.nan_note = ax.text(0.5, 0.5, "", transform=ax.transAxes, ha="center", va="center",
                                fontsize=font_size("tick"), color="#c0392b", visible=False,
                                bbox={"facecolor": "white", "edgecolor": "#c0392b"})
        canvas.frame_part([ax.xaxis], key=ax.get_xlim)  # its range follows the gradients
        canvas.animate(self.before, self.nan_note, slow=True)  # new gradients only
        canvas.animate(self.after_norm, self.after_value, self.limit, self.edge)  # the sliders
        canvas.panels.append(self)
        self.range = Range()

    def layout(self):
        return "norms"

    def state(self):
        """What ``set_rows`` starts from: the range (it only grows) and the axis limits."""
        return (self.range.low, self.range.high, self.ax.get_xlim())

    def restore(self, state):
        self.range.low, self.range.high, limits = state
        self.ax.set_xlim(limits)

    def set_rows(self, rows, total):
        norms = [total] + [r.stats.norm for r in rows]
        broken = [name for name, v in zip(["total"] + [r.name for r in rows], norms)
                  if not np.isfinite(v)]
        self.nan_note.set_visible(bool(broken))
        self.nan_note.set_text(f"no bar: the norm is nan or inf for\n{', '.join(broken[:4])}"
                               f"{' …' if len(broken) > 4 else ''}\n(see the text above)")
        placed = any(v > 0 and np.isfinite(v) for v in norms)  # a bar to place on the axis
        if (placed or self.range.low is None) and self.range.cover(*_decades(norms)):
            self.ax.set_xlim(10.0 ** self.range.low, 10.0 ** self.range.high)
        self.left = 10.0 ** self.range.low
        ends = _floor(norms, self.left)
        self.before.set_verts(_bars(self.y, [self.left] * len(norms), ends, -0.4, 0.4))
        self.canvas.new_data(self, (self.left, np.array(ends).tobytes(),
                                    self.nan_note.get_text(), self.nan_note.get_visible()))

    def show_clipping(self, by_norm, by_value):
        names = list(by_norm.after)
        after_norm = [by_norm.total_after] + [by_norm.after[n] for n in names]
        after_value = [by_value.total_after] + [by_value.after[n] for n in names]
        lefts = [self.left] * len(after_norm)
        self.after_norm.set_verts(_bars(self.y, lefts, _floor(after_norm, self.left), -0.3, 0.0))
        self.after_value.set_verts(_bars(self.y, lefts, _floor(after_value, self.left), 0.0, 0.3))
        low, high = self.ax.get_xlim()
        inside = _edge_label(self.edge, by_norm.threshold, low, high, "max_norm")
        x = by_norm.threshold if inside else np.nan  # off the scale: only the edge label
        self.limit.set_data([x, x], [-0.48, 0.48])


class Range:
    """An axis range in whole decades that only grows (so its axis is rarely redrawn).

    ``cover(low, high)`` widens it to hold ``[low, high]`` plus a margin and says
    whether it changed; it also shrinks when the data now spans far less.
    """

    def __init__(self, margin=1.0, slack=4.0):
        self.low = self.high = None
        self.margin, self.slack = margin, slack

    def cover(self, low, high):
        inside = self.low is not None and self.low <= low and high <= self.high
        if inside and (self.high - self.low) - (high - low) <= self.slack:
            return False
        self.low, self.high = low - self.margin, high + self.margin
        return True


def _floor(values, left):
    """Bar ends on a log axis: a zero norm gets a bar of zero length at the left edge (and a
    NaN norm no bar: NaN ends are not drawn)."""
    return [v if np.isnan(v) else max(v, left) for v in values]


class HistogramPanel:
    """One row per parameter: how its gradient's entries spread over decades of |g|.

    Colour = entries in the bin relative to the row's fullest bin (a one-sided
    scale, with its legend); the orange line is ``clip_value`` (entries right of
    it are clamped by ``clip_grad_value_``).
    """

    def __init__(self, canvas, index, names):
        self.canvas = canvas
        self.figure = canvas.figure
        self.ax = ax = self.figure.add_axes(canvas.slots[index])
        n = max(len(names), 1)
        # one cell per (parameter, bin): a mesh of quads (5x cheaper to draw than imshow,
        # which colours the picture at screen resolution), crisp edges like "nearest"
        self.image = ax.pcolormesh(LOG_EDGES, np.arange(n + 1) - 0.5,
                                   np.zeros((n, len(LOG_EDGES) - 1)), cmap=HIST_CMAP,
                                   vmin=0.0, vmax=1.0, antialiased=False)
        ax.set_ylim(n - 0.5, -0.5)  # the first parameter at the top
        ax.set_yticks(np.arange(len(names)), labels=names)
        set_title(ax, "histogram of |grad| (log)")
        small_fonts(ax, "|grad| (exact zeros not shown)")
        inch = 1 / self.figure.get_figwidth()  # the colorbar and its labels: the slot's right end
        box = ax.get_position()
        ax.set_position([box.x0, box.y0, box.width - COLORBAR_ROOM * inch, box.height])
        cax = self.figure.add_axes([box.x1 - (COLORBAR_ROOM - 0.06) * inch, box.y0,
                                    0.12 * inch, box.height])
        bar = self.figure.colorbar(self.image, cax=cax)
        bar.set_ticks([0, 1], labels=["0", "peak"])
        cax.tick_params(labelsize=font_size("tick"))
        self.line, = ax.plot([], [], color=VALUE_COLOUR, linewidth=1.5)
        self.edge = _edge_text(ax, VALUE_COLOUR)  # clip_value off the scale
        self.note = ax.text(0.5, 0.5, "", transform=ax.transAxes, ha="center", va="center",
                            fontsize=font_size("tick"), color="#c0392b")
        canvas.frame_part([ax.xaxis], key=ax.get_xlim)  # its range follows the gradients
        canvas.animate(self.image, self.note, slow=True)  # new gradients only
        canvas.animate(self.line, self.edge)  # the clip_value slider
        canvas.panels.append(self)
        self.range = Range(margin=0.5)

    def layout(self):
        return "histogram"

    def state(self):
        """What ``set_rows`` starts from: the range (it only grows; the axis follows it)."""
        return (self.range.low, self.range.high)

    def restore(self, state):
        self.range.low, self.range.high = state
        self._show_range()

    def set_rows(self, rows):
        counts = np.array([r.log_counts for r in rows], dtype=np.float64).reshape(
            len(rows), len(LOG_EDGES) - 1)
        peaks = counts.max(axis=1, keepdims=True)
        shades = np.divide(counts, peaks, out=np.zeros_like(counts), where=peaks > 0)
        self.image.set_array(shades)
        empty = [r.name for r, peak in zip(rows, peaks[:, 0]) if peak == 0 and r.stats.zeros < 1]
        self.note.set_text(f"no finite |grad| to count in\n{', '.join(empty[:4])}"
                           f"{' …' if len(empty) > 4 else ''}\n(NaN or inf)" if empty else "")
        self.canvas.new_data(self, (shades.tobytes(), self.note.get_text()))
        filled = np.nonzero(counts.sum(axis=0))[0]
        if filled.size:
            low, high = np.floor(LOG_EDGES[filled[0]]), np.ceil(LOG_EDGES[filled[-1] + 1])
        else:
            low, high = -8.0, 0.0
        if self.range.cover(low, high):
            self._show_range()

    def _show_range(self):
        """The x axis from the range: its limits and a tick per decade (or fewer)."""
        low, high = self.range.low, self.range.high
        self.ax.set_xlim(low, high)
        ticks = np.arange(np.ceil(low), np.floor(high) + 1, _tick_step(high - low))
        self.ax.set_xticks(ticks, labels=[f"1e{int(t)}" for t in ticks])

    def show_clip_value(self, clip_value):
        low, high = self.ax.get_xlim()
        x = np.log10(clip_value)
        if not _edge_label(self.edge, clip_value, 10.0 ** low, 10.0 ** high, "clip_value"):
            x = np.nan
        self.line.set_data([x, x], list(self.ax.get_ylim()))


def _tick_step(span):
    """One tick per decade, or every 2nd/4th decade when the range is wide (or the text large)."""
    span *= text_scale()  # larger labels need more room each
    return 1 if span <= 6 else (2 if span <= 12 else 4)


class TimelinePanel:
    """The gradient norm of every weight (and the total) across the training steps."""

    def __init__(self, canvas, names):
        self.canvas = canvas
        self.names = [n for n in names if n.endswith("weight")] or list(names)
        self.ax = canvas.figure.add_axes(canvas.slots[0])
        colours = mpl.colormaps["viridis"](np.linspace(0.0, 0.9, max(len(self.names), 1)))
        self.lines = [self.ax.plot([], [], "-", color=c, linewidth=1.2, markersize=3,
                                   label=n)[0] for n, c in zip(self.names, colours)]
        self.total, = self.ax.plot([], [], "-", color="black", linewidth=1.8, markersize=3,
                                   label="total")
        self.limit = self.ax.axhline(1.0, color="#c0392b", linestyle="--", linewidth=1,
                                     label="max_norm")
        self.edge = _edge_text(self.ax, "#c0392b")  # max_norm off the scale
        self.ax.set_yscale("log")
        self.ax.yaxis.set_minor_locator(NullLocator())
        self.ax.yaxis.set_major_formatter(DECADES)
        box = canvas.slots[0]  # room on the right for the legend
        room = TIMELINE_LEGEND_INCHES * text_scale() / canvas.figure.get_figwidth()
        self.ax.set_position([box.x0, box.y0, box.width - room, box.height])
        set_title(self.ax, "gradient norms over training (log; first layer darkest)")
        small_fonts(self.ax, "optimizer steps taken", "‖grad‖")
        self.ax.legend(fontsize=font_size("tick"), loc="upper left", bbox_to_anchor=(1.02, 1.0),
                       ncols=1 + len(self.names) // 8, borderaxespad=0)
        self.axes_part = canvas.frame_part([self.ax.xaxis, self.ax.yaxis],  # both follow
                                           key=lambda: (self.ax.get_xlim(), self.ax.get_ylim()))
        canvas.animate(*self.lines, self.total, slow=True)  # new steps only
        canvas.animate(self.limit, self.edge)  # the max_norm slider
        canvas.panels.append(self)
        self.range = Range(margin=0.5)
        self.last_step = 0  # the x axis shows steps 0 .. last_step

    def layout(self):
        return "timeline"

    def state(self):
        """What ``set_history`` starts from: the norms' range and the last step shown (it
        sets both axes from them)."""
        return (self.range.low, self.range.high, self.last_step)

    def restore(self, state):
        self.range.low, self.range.high, self.last_step = state

    def set_history(self, model):
        steps, total = model.timeline()
        marker = "o" if len(steps) < 30 else ""
        values = [total]
        for line, name in zip(self.lines, self.names):
            norms = model.timeline(name)[1]
            line.set_data(steps, norms)
            line.set_marker(marker)
            values.append(norms)
        self.total.set_data(steps, total)
        self.total.set_marker(marker)
        self.canvas.new_data()
        self.range.cover(*_decades(np.concatenate(values), pad=0.1))
        self.ax.set_ylim(10.0 ** self.range.low, 10.0 ** self.range.high)
        if steps[-1] > self.last_step or self.last_step == 0:  # room for twice as many steps
            self.last_step = max(10, 2 * steps[-1])
        self.ax.set_xlim(*self._steps_range(self.last_step))

    @staticmethod
    def _steps_range(last_step):
        return -0.5, last_step + 0.5

    def render_next_steps_axis(self):
        """Render the axes (a frame part) for the steps range the step after the last one
        shown brings (room for twice as many): known in advance, unlike the norms'."""
        shown = self.ax.get_xlim()
        self.ax.set_xlim(*self._steps_range(max(10, 2 * (self.last_step + 1))))
        try:
            self.canvas.render_part_ahead(self.axes_part)
        finally:
            self.ax.set_xlim(shown)

    def show_limit(self, clip_mode, max_norm):
        """The ``max_norm`` line, shown when training clips by norm (kept inside the axes)."""
        low, high = self.ax.get_ylim()
        inside = _edge_label(self.edge, max_norm, low, high, "max_norm", vertical=True)
        self.edge.set_visible(clip_mode == "norm" and not inside)
        self.limit.set_visible(clip_mode == "norm" and inside)
        self.limit.set_ydata([max_norm, max_norm])
