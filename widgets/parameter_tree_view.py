"""The ipywidgets view of ``ParameterTreeModel``.

Layout::

    title + totals
    [ module tree (HTML table) ]  [ tensor dropdown ] [refresh]
                                  [ values | .grad  (PNG)   ]
                                  [ summary text            ]

A derived tensor (a parametrized ``weight``, or one a forward pre-hook
computes) is drawn next to the stored original it is computed from, in the
slot that otherwise shows ``.grad`` (derived tensors are not leaves: no ``.grad``).

*show* switches the picture between the selected tensor and **every weight's
distribution** (``ParameterTreeModel.distributions``): one histogram per layer
on a shared x-axis with nn.Linear's default bound ``±1/sqrt(fan_in)`` dashed,
and each one's standard deviation listed below: an initialisation seen layer
by layer.
"""
from __future__ import annotations

import html

import ipywidgets as W
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ._render import (BLUE, CSS_DPI, PIXEL_RATIO, Canvas, PictureFallback, RenderAhead,
                      TensorPanel, css_width, font_size, html_style, png_bytes, small_fonts,
                      text_scale)
from .parameter_tree import SAMPLE_SIZE, ParameterTreeModel

DERIVED_COLOR = "#1a7f37"  # derived (computed) tensors in the tree
ORIGINAL_COLOR = "#8250df"  # the stored tensors they are computed from
MAX_DISTRIBUTIONS = 12  # weights drawn in the distributions picture (the first ones)
KEEP = 8  # tensors whose (picture, caption) the view keeps, rendered ahead or shown
#: weights (elements, all together) up to which the distributions are rendered ahead: more
#: take hundreds of ms (33M: ~300 ms), which a click arriving meanwhile would wait for
AHEAD_MAX_ELEMENTS = 1 << 22


class _RetitledPanel(TensorPanel):
    """A ``TensorPanel`` whose title can change (".grad" or "original ...")."""

    def retitle(self, title):
        if title != self.title:
            self.title = title
            for ax in self.axes.values():
                ax.set_title(title, fontsize=font_size("title"))

    def layout(self):  # the title is part of the cached background
        return (self.kind, self.title)


class ParameterTree(PictureFallback, W.VBox):
    """Browse a module's tree, parameters and buffers; pick one to see its values and grad.

    >>> tree = ParameterTree(model)   # display(tree) in a notebook
    >>> tree.select.value = "0.weight"
    >>> tree.refresh()                # after training steps or pruning
    >>> tree.show.value = "distributions"   # every weight's histogram, layer by layer
    """

    def __init__(self, module):
        self.model = ParameterTreeModel(module)
        self.style = html_style()  # the text scale when the widget was built
        self.canvas = Canvas(ncols=2, width=6.0, height=2.9)
        self.values_panel = _RetitledPanel(self.canvas, 0, title="values")
        self.grad_panel = _RetitledPanel(self.canvas, 1, title=".grad")
        self.distributions_picture = DistributionsPicture()
        self.rendered = {}  # tensor name -> (the tensors drawn, (row, versions), PNG, caption)
        self.distributions_kept = None  # (the weights, their versions, what the picture shows)
        self.ahead = RenderAhead(delay_s=0.3)  # the dropdown's neighbours, while nobody waits

        self.title = W.HTML()
        self.tree_html = W.HTML(layout=W.Layout(width="420px", max_height="440px",
                                                overflow="auto"))
        self.select = W.Dropdown(description="tensor", layout=W.Layout(width="330px"))
        self.refresh_button = W.Button(description="refresh", icon="refresh",
                                       tooltip="re-read the module (after training or pruning)",
                                       layout=W.Layout(width="100px"))
        self.caption = W.HTML(layout=W.Layout(width=self.canvas.css_width))
        self.image = W.Image(format="png", layout=W.Layout(width=self.canvas.css_width))
        self.summary = W.HTML(layout=W.Layout(width=self.canvas.css_width))

        self.show = W.ToggleButtons(options=[("selected tensor", "tensor"),
                                             ("weight distributions", "distributions")],
                                    value="tensor", description="show",
                                    style={"button_width": "150px"})

        self.select.observe(self._on_select, names="value")
        self.show.observe(self._on_select, names="value")
        self.refresh_button.on_click(lambda _: self.refresh())
        right = W.VBox([W.HBox([self.select, self.refresh_button]), self.show, self.caption,
                        self.image, self.summary])
        super().__init__([self.title, W.HBox([self.tree_html, right])])
        self.refresh()

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        module = type(self.model.module).__name__
        return f"ParameterTree({module}, {len(self.model.rows())} modules)"

    # -- reactions ------------------------------------------------------------------
    def refresh(self):
        """Re-read the module and redraw everything (keeps the selection when it still exists)."""
        self.model.refresh()
        names = self.model.tensor_names()
        previous = self.select.value
        self.select.unobserve(self._on_select, names="value")
        self.select.options = names
        self.select.value = previous if previous in names else (names[0] if names else None)
        self.select.observe(self._on_select, names="value")
        self._draw_title()
        self._draw_selection()

    def _on_select(self, change):
        self._draw_selection()

    # -- drawing ------------------------------------------------------------------------
    def _draw_title(self):
        totals = self.model.totals()
        module = self.model.module
        self.title.value = (
            f"<b>ParameterTree</b> — {html.escape(type(module).__name__)} "
            f"({'train' if module.training else 'eval'} mode): "
            f"{totals['parameters']:,} parameters ({totals['trainable']:,} trainable, "
            f"{totals['frozen']:,} frozen), {totals['buffers']:,} buffer elements"
        )

    def _draw_selection(self):
        name = self.select.value
        self.tree_html.value = self._tree_table(name)
        if self.show.value == "distributions":
            self._draw_distributions()
            return
        self.image.layout.width = self.canvas.css_width
        if name is None:
            self.values_panel.message("this module has no\nparameters or buffers")
            self.grad_panel.message("")
            self.caption.value = self.summary.value = ""
            self.image.value = self.canvas.png()
            return
        self.image.value, caption = self._rendered(name)
        self.caption.value = f"<div style='{self.style}'>{caption}</div>"
        self.summary.value = self._summary_html(name)
        names = list(self.select.options)
        at = names.index(name)
        neighbours = names[at + 1:at + 2] + names[max(at - 1, 0):at]
        weights = sum(self.model.tensor_row(w).numel for w in self.model.weight_names())
        self.ahead.schedule([lambda other=other: self._rendered(other) for other in neighbours]
                            + ([self._distributions_rendered]
                               if weights <= AHEAD_MAX_ELEMENTS else []))

    def _rendered(self, name):
        """``(PNG, caption HTML)`` of tensor ``name``: rendered once and kept (the last
        ``KEEP``), so a tensor rendered ahead while the controls rested (the dropdown's next
        and previous one) is shown at once. Kept with the tensors drawn and their
        ``_version`` (bumped by every in-place change, as in PyTorch: an optimizer step,
        a gradient accumulated), and with its row of the tree (frozen since? a .grad
        now?): a tensor changed since is drawn anew."""
        drawn = self._drawn_tensors(name)
        state = (self.model.tensor_row(name),
                 tuple(None if t is None else t._version for t in drawn))
        kept = self.rendered.get(name)
        if (kept is None or kept[1] != state
                or any(a is not b for a, b in zip(kept[0], drawn))):
            if len(self.rendered) >= KEEP:
                del self.rendered[next(iter(self.rendered))]  # the oldest
            self.rendered[name] = kept = (drawn, state, *self._render(name))
        return kept[2:]

    def _drawn_tensors(self, name):
        """The tensors the picture of ``name`` depends on: it, its .grad or stored original."""
        tensor, kind = self.model.tensor(name), self.model.tensor_row(name).kind
        if kind == "derived":
            return (tensor, self.model.tensor(self._shown_original(name)))
        return (tensor, tensor.grad if kind == "parameter" else None)

    def _render(self, name):
        """The values (left) and .grad or stored original (right) of ``name``, and the
        caption with their colour scales."""
        scale = self.values_panel.show(self.model.values_view(name))
        caption = f"<b>{html.escape(name)}</b> values: |max| = {scale:.3g}"
        grad = self.model.grad_view(name)
        row = self.model.tensor_row(name)
        self.values_panel.retitle("values")
        self.grad_panel.retitle(".grad")
        if row.kind == "derived":
            original = self._shown_original(name)
            self.values_panel.retitle(f"{name.rsplit('.', 1)[-1]} (derived)")
            self.grad_panel.retitle(f"{original.rsplit('.', 1)[-1]} (stored)")
            scale = self.grad_panel.show(self.model.values_view(original))
            caption += (f" (derived); stored <b>{html.escape(original)}</b>: "
                        f"|max| = {scale:.3g}")
        elif row.kind == "buffer":
            self.grad_panel.message("buffers never get a .grad")
        elif grad is None and not row.requires_grad:
            self.grad_panel.message("frozen\n(requires_grad=False):\n"
                                    "backward never\nfills its .grad")
        elif grad is None:
            self.grad_panel.message("no .grad yet\n(run backward first)")
        else:
            caption += f"; .grad: |max| = {self.grad_panel.show(grad):.3g}"
        return self.canvas.png(), caption

    def _shown_original(self, name):
        """The source drawn next to a derived tensor: the first one of the same shape."""
        sources = self.model.sources(name)
        shape = self.model.tensor_row(name).shape
        same = [s for s in sources if self.model.tensor_row(s).shape == shape]
        return (same or list(sources))[0]

    def _draw_distributions(self):
        png, width, self.caption.value, self.summary.value = self._distributions_rendered()
        self.image.layout.width = width
        self.image.value = png
        name = self.select.value
        self.ahead.schedule([lambda: self._rendered(name)] if name is not None else [])

    def _distributions_rendered(self):
        """``(PNG, CSS width, caption, summary)`` of every weight's distribution: rendered
        once and kept with the weights and their ``_version`` (as ``_rendered``), so a
        picture rendered ahead while the controls rested is shown at once."""
        weights = tuple(self.model.tensor(name) for name in self.model.weight_names())
        versions = tuple(w._version for w in weights)
        kept = self.distributions_kept
        if (kept is None or kept[1] != versions or len(kept[0]) != len(weights)
                or any(a is not b for a, b in zip(kept[0], weights))):
            self.distributions_kept = kept = (weights, versions, *self._render_distributions())
        return kept[2:]

    def _render_distributions(self):
        """The distributions picture, its CSS width, its caption and its summary (HTML)."""
        distributions = self.model.distributions()
        shown = distributions[:MAX_DISTRIBUTIONS]
        more = len(distributions) - len(shown)
        reach = distributions[0].edges[-1] if distributions else 0.0
        sampled = [d.name for d in shown if d.sampled < np.prod(d.shape, dtype=np.int64)]
        caption = (
            f"<div style='{self.style}'><b>every weight's values</b>, one histogram per layer on one "
            f"x-axis, max = {reach:.3g}; dashed: ±1/√fan_in (nn.Linear's default bound)"
            + (f"; {more} more not shown" if more else "")
            + (f"; {html.escape(', '.join(sampled))}: a random sample of {SAMPLE_SIZE:,} entries "
               f"each (numpy default_rng(0))" if sampled else "") + "</div>")
        summary = f"<div style='{self.style}'>" + "<br>".join(
            html.escape(f"{d.name} {d.shape}: std {d.std:.3g}, fan_in {d.fan_in}, "
                        f"1/√fan_in {d.bound:.3g}") for d in distributions) + "</div>"
        return (*self.distributions_picture.png(shown), caption, summary)

    def _tree_table(self, selected):
        rows = []
        for row in self.model.rows():
            pad = "&nbsp;" * (2 * row.depth)
            mode = "train" if row.training else "<span style='color:#b5179e'>eval</span>"
            own = (f" <span style='color:gray'>{row.parameter_count:,} parameters</span>"
                   if row.parameter_count else "")
            rows.append(f"<tr><td>{pad}<b>{html.escape(row.label)}</b>: "
                        f"{html.escape(row.class_name)} [{mode}]{own}</td></tr>")
            for t in row.tensors:
                own = html.escape(t.name.rsplit(".", 1)[-1])
                mark = "background:#ffe8a3;" if t.name == selected else ""
                if t.role == "derived":
                    how = "property" if t.how == "parametrize" else "pre-hook"
                    rows.append(
                        f"<tr><td style='{mark}'>{pad}&nbsp;&nbsp;<span style='color:"
                        f"{DERIVED_COLOR}'>= <i>{own}</i> {t.shape} {t.dtype} (derived, "
                        f"{how}; not in state_dict)</span></td></tr>")
                    continue
                flags = "param" if t.kind == "parameter" else (
                    "buffer" if t.persistent else "buffer, non-persistent")
                if t.kind == "parameter" and not t.requires_grad:
                    flags += ", frozen"
                if t.has_grad:
                    flags += ", grad"
                if t.role == "original":
                    flags += (f", <span style='color:{ORIGINAL_COLOR}'>original of "
                              f"{html.escape(t.related[0])}</span>")
                rows.append(
                    f"<tr><td style='{mark}'>{pad}&nbsp;&nbsp;· {own} "
                    f"{t.shape} {t.dtype} <span style='color:gray'>({flags}; {t.numel:,})</span>"
                    f"</td></tr>")
        return f"<table style='{self.style}'>{''.join(rows)}</table>"

    def _summary_html(self, name):
        s = self.model.tensor_summary(name)
        row = self.model.tensor_row(name)
        header = (f"{s['kind']}, shape {s['shape']}, {s['dtype']}, {s['device']}, "
                  f"requires_grad={s['requires_grad']}, "
                  f"{'in state_dict' if s['persistent'] else 'not in state_dict'}")
        if row.role == "derived":
            how = ("a property, recomputed on every read" if row.how == "parametrize"
                   else "a plain attribute: a forward pre-hook recomputes it before each forward")
            header += f"; derived from {', '.join(row.related)} ({how})"
        elif row.role == "original":
            header += f"; stored original of {row.related[0]}"
        lines = [f"<b>{html.escape(name)}</b> — {html.escape(header)}",
                 html.escape(f"values: {s['stats']}, zeros {s['stats'].zeros:.1%}")]
        if s["grad_stats"] is not None:
            lines.append(html.escape(f"grad: {s['grad_stats']}"))
        return f"<div style='{self.style}'>{'<br>'.join(lines)}</div>"



class DistributionsPicture:
    """Histograms of several weights, one row each, on one x-axis that ends at the largest
    |value| among them (``-max`` .. ``+max``; the view prints ``max``), with dashed lines at each
    weight's ``±1/sqrt(fan_in)``.

    As for every picture of the widgets (see ``_render``), the frame (axes, names, ticks) is
    drawn once per list of weight names and kept as a background; an update pastes it back and
    draws only the histograms and the dashed lines.
    """

    def __init__(self):
        self.names = None

    def png(self, distributions):
        """``(png_bytes, css_width)`` of ``distributions`` (all with the same ``edges``)."""
        names = tuple(d.name for d in distributions)
        if names != self.names:
            self._build(names)
        canvas = self.figure.canvas
        canvas.restore_region(self.background)
        for d, steps, (left, right) in zip(distributions, self.steps, self.lines):
            reach = d.edges[-1]
            steps.set_data(d.counts / (d.counts.max() or 1), d.edges / reach)
            bound = min(d.bound / reach, 2.0)  # beyond the axis (hidden) when larger than max
            left.set_xdata([-bound, -bound])
            right.set_xdata([bound, bound])
            for artist in (steps, left, right):
                self.figure.draw_artist(artist)
        return png_bytes(canvas), css_width(self.figure)

    def _build(self, names):
        self.names = names
        width, row = 6.0, 0.55 * text_scale()
        height = 0.75 * text_scale() + row * max(len(names), 1)
        self.figure = Figure(figsize=(width, height), dpi=CSS_DPI * PIXEL_RATIO)
        FigureCanvasAgg(self.figure)
        self.figure.subplots_adjust(left=1.2 * text_scale() / width, right=0.98, hspace=0.15,
                                    bottom=0.5 * text_scale() / height, top=1 - 0.1 / height)
        self.steps, self.lines = [], []
        if not names:
            self.figure.text(0.5, 0.5, "no parameter with 2 or more dimensions", ha="center",
                             va="center", fontsize=font_size("note"), color="gray")
        axes = self.figure.subplots(len(names), 1, squeeze=False)[:, 0] if names else []
        for ax, name in zip(axes, names):
            edges = np.linspace(-1, 1, 2)
            self.steps.append(ax.stairs(np.zeros(1), edges, fill=True, color=BLUE, animated=True))
            self.lines.append([ax.axvline(x, color="#b5179e", linestyle="--", linewidth=1,
                                          animated=True) for x in (-1, 1)])
            ax.set_xlim(-1.05, 1.05)
            ax.set_ylim(0, 1.1)
            ax.set_yticks([])
            ax.set_xticks([-1, -0.5, 0, 0.5, 1], labels=[])
            ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=font_size("tick"))
        if names:
            axes[-1].set_xticks([-1, -0.5, 0, 0.5, 1], labels=["-max", "", "0", "", "+max"])
            small_fonts(axes[-1], "value (max: the largest |value| of them all)")
            axes[-1].set_ylabel(names[-1], rotation=0, ha="right", va="center",
                                fontsize=font_size("tick"))
        self.figure.canvas.draw()  # the frame, without the animated artists
        self.background = self.figure.canvas.copy_from_bbox(self.figure.bbox)
