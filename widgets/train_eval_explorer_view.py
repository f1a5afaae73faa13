"""The ipywidgets view of ``TrainEvalExplorerModel``.

Layout::

    title: the modal modules found
    [run again ↻]  "call 3: train output changed by …, eval output identical"
    [ model output in train() | model output in eval() ]        (same input x)
    [module ▾]  [next batch ▶] [step ──●──]
    [ the chosen module: Dropout → zeroed units + output vs input (slope 1/(1-p));
      BatchNorm → batch vs running mean and var at a step + running_mean over steps;
      any other modal module → its output in train() | in eval() ]
    [ the numbers behind the picture                                  ]
"""
from __future__ import annotations

import contextlib
import html

import ipywidgets as W
import numpy as np
from matplotlib.ticker import NullLocator

from ._render import (CSS_DPI, MASK_CMAP, Canvas, PictureFallback, RenderAhead, TensorPanel,
                      as_matrix, font_size, html_style, joined_png, small_fonts, subsample,
                      text_scale)
from .train_eval_explorer import TrainEvalExplorerModel

WIDTH_PX = 760  # CSS pixels: fits a notebook at its default width
TRAIN_COLOUR, EVAL_COLOUR, BATCH_COLOUR = "#c0392b", "#219ebc", "#f77f00"
MAX_CHANNELS = 32  # channels drawn in the BatchNorm pictures
TIMELINE_CHANNELS = 4  # channels whose running_mean is drawn across steps
LEGEND_ROOM = 0.75  # of the timeline's half-height, left free below its values for the legend
#: the next run and batch are prepared ahead only when a comparison takes at most this long (a big
#: model's would make a click arriving meanwhile wait for it)
AHEAD_MAX_SECONDS = 0.1
#: pictures kept per image: the one shown, the next run's and batch's, the step slider's
#: neighbours (BatchNorm), the other kinds'
KEEP = 8


class TrainEvalExplorer(PictureFallback, W.VBox):
    """Run one input in train() and eval() side by side; feed batches to BatchNorm.

    >>> explorer = TrainEvalExplorer(model, x, batches=loader)
    >>> explorer.again_button.click()          # train output changes, eval output does not
    >>> explorer.module.value = "3"            # a Dropout, BatchNorm or your own modal module
    >>> explorer.next_button.click()           # one batch in train mode: running stats move
    """

    def __init__(self, module, x, batches=None):
        self.model = TrainEvalExplorerModel(module, x, batches)
        self.modal = {m.name: m for m in self.model.modal_modules()}
        self.style = html_style()  # the text scale when the widget was built
        self.output_canvas = Canvas(ncols=2, width=WIDTH_PX / CSS_DPI, height=2.7)
        self.train_panel = SharedScalePanel(self.output_canvas, 0, title="model(x) in train()")
        self.eval_panel = SharedScalePanel(self.output_canvas, 1, title="model(x) in eval()")
        self.details = {"dropout": DropoutDetails(), "batchnorm": BatchNormDetails(),
                        "module": ModuleDetails()}
        self.ahead = RenderAhead(delay_s=0.3)  # the next run and batch, the other kinds' frames
        self.kept_outputs = []  # (comparison, PNG, colour scale): see _rendered_outputs
        self.kept_details = []  # (comparison, module, step, PNG, text): _rendered_details
        self.last_click = None  # "run again" or "next batch": prepared first while resting

        self.title = W.HTML()
        self.again_button = W.Button(description="run again ↻", tooltip="the same x through "
                                     "the model once more, in both modes",
                                     layout=W.Layout(width="110px"))
        self.change = W.HTML()
        width = self.output_canvas.css_width
        self.image = W.Image(format="png", layout=W.Layout(width=width))
        names = list(self.modal)
        self.module = W.Dropdown(options=[(_label(m), m.name) for m in self.modal.values()],
                                 value=names[0] if names else None, description="module",
                                 layout=W.Layout(width="300px"))
        self.next_button = W.Button(description="next batch ▶", tooltip="one batch in train "
                                    "mode: BatchNorm's running statistics move",
                                    layout=W.Layout(width="120px"))
        self.step = W.IntSlider(value=0, min=0, max=0, description="step",
                                continuous_update=True, layout=W.Layout(width="300px"))
        self.detail_image = W.Image(format="png", layout=W.Layout(width=width))
        self.text = W.HTML(layout=W.Layout(width=width))

        self.again_button.on_click(lambda _: self.run_again())
        self.next_button.on_click(lambda _: self.next_batch())
        self.module.observe(lambda change: self._draw_details(new_frame=True), names="value")
        self.step.observe(self._on_step, names="value")
        super().__init__([
            self.title, W.HBox([self.again_button, self.change]), self.image,
            W.HBox([self.module, self.next_button, self.step]), self.detail_image, self.text,
        ])
        self.run_again()

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        return (f"TrainEvalExplorer({type(self.model.module).__name__}, "
                f"{len(self.modal)} modal modules)")

    def fallback_text(self):
        """Title, what changed between the modes (with the colour scale), the module's text."""
        return [self.title.value, self.change.value, self.text.value]

    def fallback_png(self):
        """The notebook file's picture: both outputs above the chosen module's details."""
        return joined_png([[self.image.value], [self.detail_image.value]])

    # -- reactions ------------------------------------------------------------------
    def run_again(self):
        """``x`` through the model in both modes once more; redraw everything."""
        self.comparison = self.model.compare()
        self.last_click = "run again"
        with self._pictures_first():
            self._draw_outputs()
            self._draw_details(new_frame=True)

    def next_batch(self, count=1):
        """Feed ``count`` batches in train mode, show the newest step."""
        self.model.next_batch(count)
        with self._pictures_first():
            self.step.unobserve(self._on_step, names="value")  # one redraw, below
            self.step.max = self.model.steps
            self.step.value = self.model.steps
            self.step.observe(self._on_step, names="value")
            self.comparison = self.model.compare()  # eval() now uses the new running stats
            self.last_click = "next batch"
            self._draw_outputs()
            self._draw_details(new_frame=True)

    @contextlib.contextmanager
    def _pictures_first(self):
        """Hold the messages of the texts and of the step slider until the block ends (ipywidgets'
        ``hold_sync``): the pictures, which a person waits for, leave the kernel first, and the
        slider's new range and value go in one message."""
        with self.step.hold_sync(), self.title.hold_sync(), self.change.hold_sync(), \
                self.text.hold_sync():
            yield

    def _on_step(self, change):
        self._draw_details(new_frame=False)

    # -- drawing ------------------------------------------------------------------------
    def _draw_outputs(self):
        c = self.comparison
        self.image.value, scale = self._rendered_outputs(c)
        modal = ", ".join(f"{html.escape(m.name)} ({html.escape(m.class_name)})"
                          for m in self.modal.values()) or "none"
        self.title.value = (
            f"<b>TrainEvalExplorer</b> — {html.escape(type(self.model.module).__name__)} on "
            f"x of shape {tuple(self.model.x.shape)}; modules that behave differently in "
            f"train() and eval(): {modal}")
        self.change.value = (f"<div style='{self.style}'>{_change_html(c)}; colours: ±{scale:.3g}"
                             f" (both pictures)</div>")

    def _draw_details(self, new_frame):
        name = self.module.value
        if name is None:
            self.detail_image.value = self.details["module"].empty()
            self.text.value = (f"<div style='{self.style}'>no module of this model behaves "
                               f"differently in train() and eval()</div>")
            return
        modal = self.modal[name]
        self.detail_image.value, text = self._rendered_details(self.comparison, name,
                                                               self.step.value, new_frame)
        self.text.value = f"<div style='{self.style}'>{text}</div>"
        others = {m.kind: m for m in self.modal.values() if m.kind != modal.kind}
        prepare = self.model.compare_seconds <= AHEAD_MAX_SECONDS
        clicks = ([self._prepare_again] if prepare else []) + (
            [self._prepare_next_batch] if prepare and self.model.can_prepare_batches else [])
        if self.last_click == "next batch":  # the likelier next click first: the same again
            clicks.reverse()
        steps = [s for s in (self.step.value + 1, self.step.value - 1) if 0 <= s <= self.step.max]
        slider = [lambda s=s: self._rendered_details(self.comparison, name, s)
                  for s in (steps if modal.kind == "batchnorm" else [])]
        self.ahead.schedule(clicks + [lambda m=m: self._render_ahead(m) for m in others.values()]
                            + slider)

    def _rendered_outputs(self, comparison):
        """``(PNG, colour scale)`` of both outputs of ``comparison``; the last ``KEEP`` are
        kept, so a run or a batch prepared ahead (``_prepare_again``, ``_prepare_next_batch``)
        is shown without drawing."""
        for kept in self.kept_outputs:
            if kept[0] is comparison:
                return kept[1:]
        scale = show_pair(self.train_panel, self.eval_panel, comparison.train_output,
                          comparison.eval_output)
        return _keep(self.kept_outputs, (comparison, self.output_canvas.png(), scale))[1:]

    def _rendered_details(self, comparison, name, step, new_frame=True):
        """``(PNG, text)`` of module ``name``'s details in ``comparison`` at ``step``; kept,
        like ``_rendered_outputs``."""
        for kept in self.kept_details:
            if kept[0] is comparison and kept[1:3] == (name, step):
                return kept[3:]
        modal = self.modal[name]
        png, text = self.details[modal.kind].draw(self.model, comparison, modal, step, new_frame)
        return _keep(self.kept_details, (comparison, name, step, png, text))[3:]

    def _prepare_again(self):
        """The next "run again", computed (``compare_ahead``) and drawn now, while the
        controls rest: a click then only shows it."""
        comparison = self.model.compare_ahead()
        self._rendered_outputs(comparison)
        if self.module.value is not None:
            self._rendered_details(comparison, self.module.value, self.step.value)

    def _prepare_next_batch(self):
        """The next "next batch" (one batch fed, then both modes run), computed
        (``prepare_next_batch``) and drawn in the state it leaves, which is then put back.
        The BatchNorm pictures' axis ranges only grow: they are put back too, so a picture
        drawn later for the state before the batch is the one it would have been."""
        frame = self.details["batchnorm"].frame()
        self.model.prepare_next_batch()
        with self.model.after_next_batch() as comparison:
            self._rendered_outputs(comparison)
            if self.module.value is not None:
                self._rendered_details(comparison, self.module.value, self.model.steps)
        self.details["batchnorm"].set_frame(frame)

    def _render_ahead(self, modal):
        """The details of ``modal`` (a module of another kind than the one shown) drawn and
        kept, not shown: the dropdown then shows them without drawing (its frame too is
        ready for later draws)."""
        self._rendered_details(self.comparison, modal.name, self.step.value)


def _keep(kept, entry):
    """Add ``entry`` to the list ``kept``, dropping the oldest beyond ``KEEP``; return it."""
    kept.append(entry)
    del kept[:-KEEP]
    return entry


def _label(modal):
    inside = f", contains {', '.join(modal.inside)}" if modal.inside else ""
    return f"{modal.name}: {modal.class_name}{inside}"


def _change_html(c):
    if c.train_change is None:
        why = " with the running statistics of the last batch" if c.steps else ""
        return (f"call {c.index + 1}{why}: max |train − eval| = {c.difference:.4g} "
                f"(run again: does either output change?)")
    train = ("<b>changed</b> by max |Δ| = " + f"{c.train_change:.4g}" if c.train_change
             else "identical")
    evaluated = ("<b>changed</b> by max |Δ| = " + f"{c.eval_change:.4g}" if c.eval_change
                 else "identical")
    return (f"call {c.index + 1} vs call {c.index}: train output {train}; eval output "
            f"{evaluated}. max |train − eval| = {c.difference:.4g}")


def _axes(canvas, index, top_inches=0.0):
    """A plot axes in slot ``index`` (``top_inches`` lower, for a title of two lines)."""
    box = canvas.slots[index]
    lower = top_inches / canvas.figure.get_figheight()
    return canvas.figure.add_axes([box.x0, box.y0, box.width, box.height - lower])


class SharedScalePanel(TensorPanel):
    """A ``TensorPanel`` whose heatmap colours are relative to a given scale, so that two
    panels (train and eval) use the same colours for the same values."""

    def show_scaled(self, array, scale):
        array = np.asarray(array, dtype=np.float64)
        if array.ndim < 2 or array.size == 1:
            return self.show(array)
        matrix = subsample(as_matrix(array))
        self._use("values").set_data(matrix / scale if scale > 0 else matrix)
        return scale


def show_pair(train_panel, eval_panel, train, evaluated):
    """Both outputs on one colour scale (the larger |max|); returns that scale."""
    scale = float(max(np.max(np.abs(train), initial=0.0), np.max(np.abs(evaluated), initial=0.0)))
    train_panel.show_scaled(train, scale)
    eval_panel.show_scaled(evaluated, scale)
    return scale


class ZeroedPanel(TensorPanel):
    """A ``TensorPanel`` whose two-colour mask says "zeroed" / "kept" (dropout)."""

    def _build_mask(self, ax):
        return self._heatmap_frame(ax, MASK_CMAP, 0.0, [0.25, 0.75], ["zeroed", "kept"])


class DropoutDetails:
    """Which units were dropped, and the output against the input: slope 1/(1-p) or 0."""

    def __init__(self):
        self.canvas = Canvas(ncols=2, width=WIDTH_PX / CSS_DPI, height=3.2)
        self.mask = ZeroedPanel(self.canvas, 0, title="units zeroed in train()")
        ax = self.ax = _axes(self.canvas, 1)
        ax.set_title("output vs input (same x)", fontsize=font_size("title"))
        small_fonts(ax, "input ÷ |max input|", "output ÷ |max input|")
        ax.axhline(0, color="black", linewidth=0.5)
        ax.axvline(0, color="black", linewidth=0.5)
        self.eval_line, = ax.plot([-1, 1], [-1, 1], color=EVAL_COLOUR, linewidth=1.5,
                                  label="eval(): output = input")
        self.train_line, = ax.plot([], [], color=TRAIN_COLOUR, linestyle="--", linewidth=1,
                                   label="train() kept: input / (1 − p)")
        self.kept = ax.scatter([], [], s=9, color=TRAIN_COLOUR, label="train(), kept")
        self.dropped = ax.scatter([], [], s=9, color="#2b2d42", marker="x",
                                  label="train(), zeroed")
        ax.set_xlim(-1.05, 1.05)
        self.legend = ax.legend(fontsize=font_size("tick") * 0.9, loc="upper left", framealpha=0.9,
                                handlelength=1.2, borderaxespad=0.2)
        self.canvas.animate(self.kept, self.dropped)
        self.canvas.panels.append(self)
        self.p = None

    def layout(self):
        return ("dropout", self.p)

    def draw(self, model, comparison, modal, step, new_frame):
        call = model.dropout_call(modal.name, comparison)
        values = comparison.train_calls[modal.name]
        self.mask.show(np.where(call.visible, (~call.zeroed).astype(float), np.nan), mask=True)
        if call.p != self.p:  # the frame depends on p only
            self.p = call.p
            top = 1.1 * call.scale if np.isfinite(call.scale) else 1.1
            self.ax.set_ylim(-top, top)
            self.train_line.set_data([-1, 1], [-call.scale, call.scale])
            self.canvas.invalidate()
        scale = float(np.max(np.abs(values.input), initial=0.0)) or 1.0
        x, y = values.input.ravel() / scale, values.output.ravel() / scale
        zeroed = call.zeroed.ravel()
        self.kept.set_offsets(np.column_stack([x[~zeroed], y[~zeroed]]))
        self.dropped.set_offsets(np.column_stack([x[zeroed], y[zeroed]]))
        seen = int(call.visible.sum())
        text = (f"<b>{html.escape(modal.name)}</b>: {html.escape(modal.class_name)}(p={call.p:g})"
                f" in train() zeroed "
                f"{int(call.zeroed.sum())} of {seen} units ({call.fraction:.1%}; each unit is "
                f"dropped with probability p) and multiplied the others by 1/(1 − p) = "
                f"{call.scale:.4g} (measured: {call.observed_scale:.4g}), so the expected output "
                f"equals the input. eval() passes the input through unchanged.")
        hidden = call.visible.size - seen
        if hidden:
            text += (f"<br>{hidden} inputs were already 0 (blank in the mask): whether they were "
                     f"dropped cannot be seen.")
        return self.canvas.png(), text


class BatchNormDetails:
    """Batch vs running statistics at one step, and the running mean across steps."""

    def __init__(self):
        self.canvas = Canvas(ncols=3, width=WIDTH_PX / CSS_DPI, height=3.4)
        titles = ("mean\nper channel", "variance\nper channel (log)", "running_mean\nover steps")
        self.axes = [_axes(self.canvas, i, top_inches=0.25 * text_scale()) for i in range(3)]
        for ax, title in zip(self.axes, titles):
            ax.set_title(title, fontsize=font_size("title"))
        small_fonts(self.axes[0], "channel", "value")
        small_fonts(self.axes[1], "channel")
        small_fonts(self.axes[2], "batches fed (step)")
        self.running, self.batch = [], []
        self.axes[1].set_yscale("log")  # variances are positive and span decades
        self.axes[1].yaxis.set_minor_locator(NullLocator())
        for ax, fill in zip(self.axes[:2], (True, False)):
            bars = ax.stairs(np.ones(1), np.arange(2) - 0.5, fill=fill, color=EVAL_COLOUR,
                             alpha=0.6 if fill else 1.0, linewidth=1.5,
                             baseline=0.0 if fill else None, label="running (eval)")
            dots, = ax.plot([], [], "o", color=BATCH_COLOUR, markersize=3,
                            label="batch (train)")
            self.running.append(bars)
            self.batch.append(dots)
        self.axes[0].legend(fontsize=font_size("tick") * 0.9, loc="upper left", framealpha=0.9,
                            handlelength=1.0, borderaxespad=0.2)
        self.axes[0].axhline(0, color="black", linewidth=0.5)
        self.lines = [self.axes[2].plot([], [], "-", linewidth=1.2)[0]
                      for _ in range(TIMELINE_CHANNELS)]
        self.batch_dots = [self.axes[2].plot([], [], ".", color=line.get_color(),
                                             markersize=4)[0] for line in self.lines]
        self.marker = self.axes[2].axvline(0, color="black", linestyle=":", linewidth=1)
        self.canvas.animate(*self.running, *self.batch, *self.lines, *self.batch_dots,
                            self.marker)
        self.canvas.panels.append(self)
        self.key = None  # the module shown
        self.limits = {}  # axis ranges so far

    def layout(self):
        """The frame depends on the axis ranges: one background per ranges (few: they grow)."""
        return "batchnorm", tuple(sorted(self.limits.items()))

    def frame(self):
        """The module whose ranges these are and the ranges (``set_frame`` puts them back)."""
        return self.key, dict(self.limits)

    def set_frame(self, frame):
        key, limits = frame
        if (key, limits) != (self.key, self.limits):
            self.key, self.limits = key, limits
            if limits:
                self._apply_limits(limits)

    def draw(self, model, comparison, modal, step, new_frame):
        history = model.history[modal.name]
        state = history[min(step, len(history) - 1)]
        if modal.name != self.key:  # another module: start the axis ranges afresh
            self.key = modal.name
            self.limits = {}
        self._fit_axes(history)
        channels = min(len(state.running_mean), MAX_CHANNELS)
        edges = np.arange(channels + 1) - 0.5
        for i, (running, batch) in enumerate(((state.running_mean, state.batch_mean),
                                              (state.running_var, state.batch_var))):
            self.running[i].set_data(running[:channels], edges)
            self.batch[i].set_data(*((np.arange(channels), batch[:channels])
                                     if batch is not None else ([], [])))
        self._draw_timeline(history)
        self.marker.set_xdata([state.step, state.step])
        return self.canvas.png(), self._text(model, comparison, modal, history, state)

    def _fit_axes(self, history):
        """Axis ranges that hold every step so far; they only grow (a new frame is slow)."""
        channels = min(len(history[0].running_mean), MAX_CHANNELS)
        shown = min(TIMELINE_CHANNELS, channels)
        fed = [s for s in history if s.batch_mean is not None]
        means = np.abs([s.running_mean[:channels] for s in history]
                       + [s.batch_mean[:channels] for s in fed]).max()
        variances = np.array([s.running_var[:channels] for s in history]
                             + [s.batch_var[:channels] for s in fed])
        positive = variances[variances > 0]
        var_low = np.floor(np.log10(positive.min()) - 0.3) if positive.size else -1.0
        var_high = np.ceil(np.log10(positive.max()) + 0.3) if positive.size else 1.0
        timeline = np.abs([s.running_mean[:shown] for s in history]
                          + [s.batch_mean[:shown] for s in fed]).max()
        wanted = {"mean": _nice(means), "var_high": var_high, "var_low": -var_low,
                  "timeline": _nice(timeline),
                  "steps": max(10, 2 ** int(np.ceil(np.log2(max(history[-1].step, 1))))),
                  "channels": channels}
        grown = {k: max(v, self.limits.get(k, 0)) for k, v in wanted.items()}
        if grown != self.limits:
            self.limits = grown
            self._apply_limits(grown)

    def _apply_limits(self, grown):
        """The axes' ranges and the timeline's legend (which lists the channels shown)."""
        channels = grown["channels"]
        shown = min(TIMELINE_CHANNELS, channels)
        self.axes[0].set_ylim(-grown["mean"], grown["mean"])  # means: symmetric around zero
        self.axes[1].set_ylim(10.0 ** -grown["var_low"], 10.0 ** grown["var_high"])
        for ax in self.axes[:2]:
            ax.set_xlim(-0.5, channels - 0.5)
        # room below the values for the legend (lower right), so that it hides no line or dot
        self.axes[2].set_ylim(-grown["timeline"] * (1 + LEGEND_ROOM), grown["timeline"])
        self.axes[2].set_xlim(-0.5, grown["steps"] + 0.5)
        for c, line in enumerate(self.lines):
            line.set_label(f"ch {c}")
        self.axes[2].legend(handles=self.lines[:shown], fontsize=font_size("tick") * 0.9,
                            loc="lower right", borderaxespad=0.2, framealpha=0.9,
                            handlelength=1.0, labelspacing=0.2, ncols=2, columnspacing=0.8,
                            title="line: running · dots: batch",
                            title_fontsize=font_size("tick") * 0.9)

    def _draw_timeline(self, history):
        steps = [s.step for s in history]
        fed = [s for s in history if s.batch_mean is not None]
        shown = min(TIMELINE_CHANNELS, len(history[0].running_mean))
        for c, (line, dots) in enumerate(zip(self.lines, self.batch_dots)):
            if c < shown:
                line.set_data(steps, [s.running_mean[c] for s in history])
                dots.set_data([s.step for s in fed], [s.batch_mean[c] for s in fed])
            else:
                line.set_data([], [])
                dots.set_data([], [])

    def _text(self, model, comparison, modal, history, state):
        module = dict(model.module.named_modules())[modal.name]
        now = model.batch_norm_call(modal.name, comparison)
        momentum = ("None (cumulative average: factor = 1 / num_batches_tracked)"
                    if state.momentum is None else f"{state.momentum:g}")
        lines = [
            (f"<b>{html.escape(modal.name)}</b>: {html.escape(type(module).__name__)}, "
             f"momentum = {momentum}. train() normalises with the batch's own mean and "
             f"(biased) variance; eval() with running_mean and running_var."),
            (f"for x, channel 0: batch mean {now.batch_mean[0]:.4g} vs running_mean "
             f"{now.running_mean[0]:.4g}; batch var {now.batch_var[0]:.4g} vs running_var "
             f"{now.running_var[0]:.4g}"),
            (f"step {state.step} of {len(history) - 1}: num_batches_tracked = "
             f"{state.num_batches_tracked}"),
        ]
        if state.batch_mean is not None:
            previous = history[state.step - 1]
            f = state.factor
            lines.append(
                f"running_mean[0] = (1 − {f:.4g}) · {previous.running_mean[0]:.4g} + {f:.4g} · "
                f"{state.batch_mean[0]:.4g} (batch mean) = {state.running_mean[0]:.4g}; "
                f"running_var[0] = (1 − {f:.4g}) · {previous.running_var[0]:.4g} + {f:.4g} · "
                f"{state.batch_var[0]:.4g} (unbiased batch var) = {state.running_var[0]:.4g}")
        else:
            lines.append("press “next batch” to feed a batch in train mode and watch the "
                         "running statistics move")
        return "<br>".join(lines)


def _nice(value):
    """A round axis limit a little above ``value`` (1, 1.5, 2, 3, 5 or 7 times a power of 10)."""
    value = max(float(value), 1e-3) * 1.05
    power = 10.0 ** np.floor(np.log10(value))
    return power * next(m for m in (1, 1.5, 2, 3, 5, 7, 10) if m * power >= value)


class ModuleDetails:
    """Any other modal module: its output for the same input in train() and in eval()."""

    def __init__(self):
        self.canvas = Canvas(ncols=2, width=WIDTH_PX / CSS_DPI, height=2.7)
        self.train_panel = SharedScalePanel(self.canvas, 0, title="its output in train()")
        self.eval_panel = SharedScalePanel(self.canvas, 1, title="its output in eval()")

    def empty(self):
        self.train_panel.message("no modal module")
        self.eval_panel.message("")
        return self.canvas.png()

    def draw(self, model, comparison, modal, step, new_frame):
        scale = show_pair(self.train_panel, self.eval_panel, modal.train_output,
                          modal.eval_output)
        change = float(np.max(np.abs(modal.train_output - modal.eval_output), initial=0.0)) \
            if modal.train_output.shape == modal.eval_output.shape else float("inf")
        inside = (f" It contains the modal module(s) {', '.join(modal.inside)}, which may be why."
                  if modal.inside else " It checks self.training itself.")
        text = (f"<b>{html.escape(modal.name)}</b>: {html.escape(modal.class_name)} fed the "
                f"same input {modal.input.shape} in both modes: max |train − eval| = "
                f"{change:.4g} (colours: ±{scale:.3g} in both pictures).{inside}")
        return self.canvas.png(), text
