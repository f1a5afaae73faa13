"""The ipywidgets view of ``PruneExplorerModel``.

Layout::

    title
    [layer ▾] [method ▾] [n ▾] [dim ▾]
    [amount ────●──────]  [apply] [undo] [make permanent]
    [ mask preview (heatmap) | accuracy vs sparsity (curve + marker) ]
    [ table: sparsity now / preview per weight, loss/accuracy, _orig/_mask names ]

Moving the slider only *previews* (on a copy of the model); ``apply`` prunes
the real model. While the controls rest, the view renders ahead what the next
input shows, the control just used first: the slider's two neighbours, the
other options of the weights and method dropdowns (their curves computed one
point at a time), the picture after ``apply`` (its curve computed on the
preview's copy, ``PruneExplorerModel.applied_tasks``) and after ``undo``. An
input that finds its picture kept sends it, then the text: no pruning of a
copy, no drawing. ``apply`` and ``undo`` still change the real model.
"""
from __future__ import annotations

import html

import ipywidgets as W
import numpy as np
from matplotlib.transforms import ScaledTranslation

from ._render import (MAX_PIXELS, Canvas, PictureFallback, RenderAhead, TensorPanel, as_matrix,
                      font_size, html_style, set_title, small_fonts)
from .prune_explorer import GLOBAL, METHOD_LABELS, PruneExplorerModel, Settings

#: short descriptions take only their own width (the default reserves ~90 px and clips the value)
TIGHT = {"description_width": "initial"}
ROWS_PER_LAYER = 60  # height of each layer's strip in the global mask overview
KEEP = 32  # pictures the view keeps (shown or rendered ahead; ~160 KB of PNG each)


class PruneExplorer(PictureFallback, W.VBox):
    """Pick weights, a pruning method and an amount; preview, apply, undo, make permanent.

    >>> explorer = PruneExplorer(model, data=(x_val, y_val))
    >>> explorer.method.value = "l1_unstructured"; explorer.amount.value = 0.6
    >>> explorer.apply_button.click()
    """

    def __init__(self, module, data=None):
        self.model = PruneExplorerModel(module, data)
        self.style = html_style()  # the text scale when the widget was built
        self.canvas = Canvas(ncols=2, width=8.0, height=3.4)
        self.mask_panel = TensorPanel(self.canvas, 0, title="mask preview (what apply does)")
        self.curve_panel = CurvePanel(self.canvas, 1)
        self.action_error = None  # why the last button click failed, shown in red
        # a curve point (~2 ms on lesson 04's model) or a picture (~15 ms) per step
        self.ahead = RenderAhead(delay_s=0.15, gap_s=0.005)
        self.pictures = {}  # key (see _key) -> (PNG, caption HTML, table HTML), the last KEEP
        self.last_control = "amount"  # rendered ahead first: the likeliest to be used again

        layers = self.model.layers()
        self.title = W.HTML()
        self.layer = W.Dropdown(options=self.model.choices(), value=layers[0] if layers else GLOBAL,
                                description="weights", layout=W.Layout(width="260px"))
        self.method = W.Dropdown(options=[(METHOD_LABELS[m], m) for m in METHOD_LABELS],
                                 value="l1_unstructured", description="method",
                                 layout=W.Layout(width="260px"))
        self.n = W.Dropdown(options=[("L1", 1), ("L2", 2), ("L∞", float("inf"))], value=1,
                            description="n", style=TIGHT, layout=W.Layout(width="110px"))
        self.dim = W.Dropdown(options=[0], value=0, description="dim", style=TIGHT,
                              layout=W.Layout(width="110px"))
        self.amount = W.FloatSlider(value=0.5, min=0.0, max=0.95, step=0.05,
                                    description="amount", readout_format=".2f",
                                    continuous_update=True, layout=W.Layout(width="400px"))
        self.apply_button = W.Button(description="apply", icon="cut", button_style="warning",
                                     tooltip="prune the real model (iteratively)")
        self.undo_button = W.Button(description="undo", icon="undo")
        self.permanent_button = W.Button(description="make permanent", icon="lock",
                                         tooltip="prune.remove: weight = weight_orig * weight_mask")
        self.caption = W.HTML(layout=W.Layout(width=self.canvas.css_width))
        self.image = W.Image(format="png", layout=W.Layout(width=self.canvas.css_width))
        self.table = W.HTML(layout=W.Layout(width=self.canvas.css_width))

        for name in ("layer", "method", "n", "dim"):
            getattr(self, name).observe(lambda change, name=name: self._settings_changed(name),
                                        names="value")
        self.amount.observe(lambda change: self._amount_changed(), names="value")
        self.apply_button.on_click(lambda _: self._act(self.model.apply, "apply"))
        self.undo_button.on_click(lambda _: self._act(self.model.undo, "undo"))
        self.permanent_button.on_click(lambda _: self._act(self.model.make_permanent, "permanent"))
        super().__init__([
            self.title,
            W.HBox([self.layer, self.method, self.n, self.dim]),
            W.HBox([self.amount, self.apply_button, self.undo_button, self.permanent_button]),
            self.caption, self.image, self.table,
        ])
        self._settings_changed()

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        return (f"PruneExplorer({type(self.model.module).__name__}, "
                f"{len(self.model.layers())} weights)")

    def refresh(self):
        """Redraw after the model was changed outside the explorer (training, manual pruning)."""
        self.model.refresh()
        self.forget_pictures()
        self._settings_changed()

    def forget_pictures(self):
        """Forget the kept pictures: each is drawn again when shown."""
        self.pictures.clear()

    # -- reactions ------------------------------------------------------------------
    def _settings_changed(self, control="layer"):
        """Layer / method / n / dim changed: new settings, new curve, new preview."""
        self.last_control = control
        self.action_error = None
        self._sync_dim_options()
        self.n.disabled = self.method.value != "ln_structured"
        self.dim.disabled = self.method.value not in ("ln_structured", "random_structured")
        self.model.set(layer=self.layer.value, method=self.method.value, n=self.n.value,
                       dim=self.dim.value, amount=self.amount.value)
        self._draw()

    def _amount_changed(self):
        """The slider moved: only the preview changes (the curve is cached)."""
        self.last_control = "amount"
        self.action_error = None
        self.model.set(amount=self.amount.value)
        self._draw()

    def _act(self, action, control):
        """apply / undo / make permanent on the real model, then redraw everything.

        The picture then shows the real model's mask now, not a preview of pruning
        it once more (on a big model that preview costs as much as the action): the
        next move of a control previews again. The picture after an apply was
        rendered ahead (when the controls rested long enough) under ``apply_key()``;
        without it, the caption says first that the model is changing.
        """
        self.last_control = control
        ready = self.pictures.get(("applied", self.model.apply_key())) if control == "apply" else None
        if ready is None:
            self.caption.value = f"<div style='{self.style}'>changing the model…</div>"  # sent now
        try:
            action()
            self.action_error = None
        except (ValueError, RuntimeError, IndexError) as error:
            self.action_error = f"{type(error).__name__}: {error}"
        if ready is not None and self.action_error is None:
            self._keep(self._key(preview=False), ready)
        self._draw(preview=False)

    def _sync_dim_options(self):
        if self.layer.value == GLOBAL:
            return
        ndim = len(self.model.current().masks[self.layer.value].shape)
        options = list(range(ndim))
        if list(self.dim.options) != options:
            self.dim.options = options  # resets value to options[0]

    # -- drawing ------------------------------------------------------------------------
    def _key(self, preview=True, settings=None, version=None):
        """The key of a kept picture: a preview at ``settings`` (default: the controls') or
        the model ``now``, on the model's ``version`` (default: the current one)."""
        return ("preview" if preview else "now", settings or self.model.settings,
                self.model.version if version is None else version)

    def _keep(self, key, picture):
        """Keep ``picture`` under ``key``, forgetting the least recently used beyond ``KEEP``."""
        self.pictures.pop(key, None)
        if len(self.pictures) >= KEEP:
            del self.pictures[next(iter(self.pictures))]
        self.pictures[key] = picture

    def _kept(self, key):
        """The kept picture under ``key`` (now the most recently used), or None."""
        picture = self.pictures.pop(key, None)
        if picture is not None:
            self.pictures[key] = picture
        return picture

    def _ahead(self, key, render):
        """Keep ``render()`` under ``key`` unless it is kept (then it is the most recently
        used: the pictures rendered after it do not push it out)."""
        if self._kept(key) is None:
            self._keep(key, render())

    def _draw(self, preview=True):
        """Show the preview at the controls' settings, or (``preview=False``) the real
        model's masks: the kept picture if there is one, else drawn now. The picture is
        sent first: the browser decodes it while the text arrives."""
        settings, now = self.model.settings, self.model.current()
        picture = self._kept(self._key(preview))
        if picture is None:
            if preview and not self.model.is_cached():  # said at once: the kernel sends it now
                self.caption.value = (f"<div style='{self.style}'>computing the preview "
                                      f"({html.escape(METHOD_LABELS[settings.method])} at "
                                      f"{settings.amount:.2f})…</div>")
            picture = self._render(settings, now, preview)
            self._keep(self._key(preview), picture)
        self.image.value, self.caption.value, table = picture
        self.title.value = self._title_html(now)
        if self.action_error:  # after a failed apply / undo / make permanent (preview=False)
            table = self._table_html(now, None, [self.action_error])
        self.table.value = table
        self._plan_ahead()

    def _render(self, settings, now, preview=True, curve=None):
        """``(PNG, caption, table)`` of a preview at ``settings`` or of the model ``now``
        (with its ``curve``, when that is not the model's current one); settings that
        cannot prune get a message, and the error in the table."""
        error = shown = None
        try:
            if self.model.data is not None and curve is None:
                curve = self.model.curve(settings)
            shown = self.model.preview(settings=settings) if preview else now
        except (ValueError, RuntimeError, IndexError) as failure:  # e.g. dim out of range
            error = f"{type(failure).__name__}: {failure}"
        if shown is None:
            caption = ""
            self.mask_panel.message("cannot preview these settings:\nsee the message below")
            self.curve_panel.message("no curve")
        elif preview:
            caption = self._show_masks(shown, settings, f"<b>preview</b> at amount "
                                       f"{settings.amount:.2f}", METHOD_LABELS[settings.method])
            self._draw_curve(shown, settings, curve)
        else:
            caption = self._show_masks(now, settings, "<b>the model now</b>", "",
                                       "; move a control to preview the next pruning")
            self._draw_curve(now, settings, curve)
        return self.canvas.png(), caption, self._table_html(now, shown if preview else None, [error])

    def _draw_curve(self, outcome, settings, curve):
        if self.model.data is None:
            self.curve_panel.message("pass data=(x, y) to see\naccuracy vs sparsity")
            return
        self.curve_panel.set_curve(curve, settings.layer)
        self.curve_panel.mark(_target_sparsity(outcome, settings.layer), _score(outcome))

    def _show_masks(self, outcome, settings, heading, method, tail=""):
        """The chosen weight's mask (global: every mask, in strips); returns its caption."""
        if settings.layer == GLOBAL:
            self.mask_panel.show(mask_overview(list(outcome.masks.values())), mask=True)
            what = f"masks of {', '.join(outcome.masks)} (top to bottom)"
            what = f"global {method}: {what}" if method else what
        else:
            self.mask_panel.show(outcome.masks[settings.layer], mask=True)
            what = f"{settings.layer}_mask" + (f", {method}" if method else "")
        return (f"<div style='{self.style}'>{heading}: {html.escape(what)}"
                f"{_downsampled(outcome, settings)}{tail}</div>")

    # -- rendering ahead ------------------------------------------------------------------
    def _plan_ahead(self):
        """Render ahead, while the controls rest, what each control shows next: the one just
        used first, then the others, then the curves of ``curve_tasks``. Only with data and
        while previews are ``quick()``: on a big model nothing is."""
        if self.model.data is None or not self.model.quick():
            self.ahead.schedule([])
            return
        plans = {"amount": self._amount_ahead, "layer": self._option_ahead("layer"),
                 "method": self._option_ahead("method"), "apply": self._apply_ahead,
                 "undo": self._undo_ahead}
        first = self.last_control if self.last_control in plans else "amount"
        order = [first] + [name for name in plans if name != first]
        self.ahead.schedule([task for name in order for task in plans[name]()]
                            + self.model.curve_tasks())

    def _amount_ahead(self):
        """The slider's two neighbours (an arrow key's step either way)."""
        settings, step = self.model.settings, self.amount.step
        amounts = [round(settings.amount + side * step, 10) for side in (1, -1)]
        return [lambda a=a: self._preview_ahead(Settings(**{**settings.__dict__, "amount": a}))
                for a in amounts if self.amount.min <= a <= self.amount.max]

    def _option_ahead(self, name):
        """A function giving the tasks that render each other option of dropdown ``name``
        (the next one first): its curve, one point per task, then its picture."""
        def tasks():
            values = [o[1] if isinstance(o, tuple) else o for o in getattr(self, name).options]
            at = values.index(getattr(self, name).value)
            planned = []
            for value in values[at + 1:] + values[:at]:
                settings = Settings(**{**self.model.settings.__dict__, name: value})
                planned += self.model.curve_tasks([settings]) + [
                    lambda settings=settings: self._preview_ahead(settings)]
            return planned
        return tasks

    def _preview_ahead(self, settings):
        """Keep the picture of a preview at ``settings``."""
        self._ahead(self._key(settings=settings),
                    lambda: self._render(settings, self.model.current()))

    def _apply_ahead(self):
        """The curve after ``apply`` (one point per task), then its picture."""
        key = ("applied", self.model.apply_key())
        return self.model.applied_tasks() + [lambda: self._applied_picture(key)]

    def _applied_picture(self, key):
        """The model after ``apply`` as ``_act`` shows it, kept under ``key`` (the
        ``apply_key()`` it was computed for), once the model computed it all."""
        applied = self.model.applied()
        if applied is not None and key == ("applied", self.model.apply_key()):
            outcome, curve = applied
            self._ahead(key, lambda: self._render(self.model.settings, outcome, False, curve))

    def _undo_ahead(self):
        """The picture after ``undo``: the state it goes back to, as it was computed then."""
        return [self._undone_picture] if self.model.undo_stack else []

    def _undone_picture(self):
        undone = self.model.undone()
        if undone is not None:
            version, outcome, curve = undone
            self._ahead(self._key(False, version=version),
                        lambda: self._render(self.model.settings, outcome, False, curve))

    def _title_html(self, now):
        module = self.model.module
        loss = "" if now.loss is None else f", loss {now.loss:.4f}"
        accuracy = "" if now.accuracy is None else f", accuracy {now.accuracy:.1%}"
        return (f"<b>PruneExplorer</b> — {html.escape(type(module).__name__)}: global sparsity "
                f"{now.global_sparsity:.1%}{loss}{accuracy}; undo steps: "
                f"{len(self.model.undo_stack)}")

    def _table_html(self, now, preview, errors=()):
        cells = "padding: 0 10px; text-align: right"
        rows = [f"<tr><th style='text-align:left'>weight</th><th style='{cells}'>shape</th>"
                f"<th style='{cells}'>sparsity now</th><th style='{cells}'>preview</th></tr>"]
        for name, mask in now.masks.items():
            after = "—" if preview is None else f"{preview.sparsity[name]:.1%}"
            rows.append(f"<tr><td>{html.escape(name)}</td><td style='{cells}'>{mask.shape}</td>"
                        f"<td style='{cells}'>{now.sparsity[name]:.1%}</td>"
                        f"<td style='{cells}'>{after}</td></tr>")
        after = "—" if preview is None else f"{preview.global_sparsity:.1%}"
        rows.append(f"<tr><td><b>global</b></td><td></td><td style='{cells}'>"
                    f"<b>{now.global_sparsity:.1%}</b></td><td style='{cells}'><b>{after}</b>"
                    f"</td></tr>")
        lines = [f"<table style='{self.style}'>{''.join(rows)}</table>"]
        if now.loss is not None and preview is not None:
            lines.append(f"loss {now.loss:.4f} → {preview.loss:.4f}"
                         + ("" if now.accuracy is None else
                            f", accuracy {now.accuracy:.1%} → {preview.accuracy:.1%}")
                         + " (now → preview)")
        names = ", ".join(now.pruned_names) or "none (nothing pruned yet)"
        lines.append(f"pruning re-parametrisation: {html.escape(names)}")
        for error in errors:
            if error:
                lines.append(f"<span style='color:#c0392b'>{html.escape(error)}</span>")
        return f"<div style='{self.style}'>{'<br>'.join(lines)}</div>"


def mask_overview(masks, width=MAX_PIXELS, rows=ROWS_PER_LAYER):
    """All masks as strips of equal size stacked top to bottom, with a blank row between.

    Each mask is sampled at ``rows x width`` evenly spaced positions (nearest
    neighbour), so a 10x128 layer is as visible as a 256x784 one. NaN rows are
    drawn transparent: they separate the layers.
    """
    strips = []
    for mask in masks:
        matrix = as_matrix(mask)
        r = np.linspace(0, matrix.shape[0] - 1, min(rows, matrix.shape[0] * 8)).round().astype(int)
        c = np.linspace(0, matrix.shape[1] - 1, width).round().astype(int)
        strips.append(matrix[np.ix_(r, c)].astype(np.float64))
        strips.append(np.full((2, width), np.nan))
    return np.vstack(strips[:-1]) if strips else np.ones((1, 1))


def _downsampled(outcome, settings):
    """``"; every 8th row and column shown"`` when the mask picture is a subsample."""
    if settings.layer == GLOBAL:
        return "; each strip: evenly spaced rows and columns of its mask"
    rows, columns = as_matrix(outcome.masks[settings.layer]).shape
    step_r, step_c = -(-rows // MAX_PIXELS), -(-columns // MAX_PIXELS)
    if step_r == step_c == 1:
        return ""
    return (f" ({rows}×{columns}: every {step_r}th row and {step_c}th column shown, "
            f"{-(-rows // step_r)}×{-(-columns // step_c)})")


def _target_sparsity(outcome, layer):
    return outcome.global_sparsity if layer == GLOBAL else outcome.sparsity[layer]


def _score(outcome):
    """Accuracy when the task has one, otherwise the loss."""
    return outcome.accuracy if outcome.accuracy is not None else outcome.loss


class CurvePanel:
    """Accuracy (or loss) vs sparsity: the curve, its x label and the preview's marker.

    All three change with the controls, so they are dynamic artists drawn over a
    frame that stays: accuracy is drawn from 0 to 1 whatever the curve (the
    frame is rendered once); a loss, which has no fixed range, gets a frame per
    range it needs. A new curve then costs what a slider step costs.
    """

    def __init__(self, canvas, index):
        self.canvas = canvas
        self.ax = canvas.figure.add_axes(canvas.slots[index])
        self.line, = self.ax.plot([], [], "o-", color="#219ebc", markersize=5, linewidth=2)
        self.marker, = self.ax.plot([], [], "o", color="#c0392b", markersize=11)
        self.note = self.ax.text(0.5, 0.5, "", ha="center", va="center", fontsize=font_size("note"),
                                 color="gray", transform=self.ax.transAxes)
        # the x label, below the tick labels (where matplotlib puts it), as a dynamic text
        below_ticks = ScaledTranslation(0, -2.2 * font_size("tick") / 72, canvas.figure.dpi_scale_trans)
        self.xlabel = self.ax.text(0.5, 0, "", ha="center", va="top", fontsize=font_size("label"),
                                   transform=self.ax.transAxes + below_ticks)
        self.ax.set_xlim(-0.02, 1.02)
        small_fonts(self.ax, "", "accuracy")
        set_title(self.ax, "what the pruning costs (red: preview)")
        canvas.animate(self.line, self.marker, self.xlabel)
        canvas.panels.append(self)
        self.kind = "curve"

    def layout(self):
        return self.kind

    def set_curve(self, points, layer):
        """A new curve (settings or model changed)."""
        sparsity = [p[1] for p in points]
        accuracy = [p[3] for p in points]
        if all(a is not None for a in accuracy):
            scores, ylabel, limits = accuracy, "accuracy", (-0.03, 1.03)
        else:
            scores, ylabel = [p[2] for p in points], "loss"
            low, high = min(scores), max(scores)
            pad = 0.05 * (high - low) or 0.05
            limits = (low - pad, high + pad)
        self.line.set_data(sparsity, scores)
        self.ax.set_ylim(*limits)
        self.ax.set_ylabel(ylabel, fontsize=font_size("label"))
        self.xlabel.set_text(f"sparsity of {'all weights' if layer == GLOBAL else layer}")
        self.note.set_text("")
        self.ax.set_axis_on()
        self.kind = ("curve", ylabel, limits)  # the frame to paste (rendered once for each)

    def mark(self, sparsity, score):
        self.marker.set_data([sparsity], [score])

    def message(self, text):
        self.note.set_text(text)
        self.line.set_data([], [])
        self.marker.set_data([], [])
        self.xlabel.set_text("")
        self.ax.set_axis_off()
        self.kind = "message: " + text
