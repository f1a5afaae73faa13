"""Matplotlib → PNG bytes, shared by every view.

Why PNG bytes and not ``plt.show()``: a plot drawn inside an ``Output`` widget
is stored differently by nbclient and by nbval, which breaks strict notebook
validation (see FACTS.md). A PNG put in ``widgets.Image(value=png)`` looks the
same everywhere: the browser, nbval and a headless pytest.

Speed: a view redraws while a slider moves (budget: 100 ms). Laying out text
(tick labels, titles) is most of matplotlib's drawing time, so we use the
classic *blitting* trick of matplotlib animations:

- each ``Canvas`` keeps ONE ``Figure`` for its whole life (no pyplot, no
  global state) with fixed margins;
- artists that change on every update (an image, a title, a marker) are
  registered as *dynamic*: the figure is fully drawn once without them, that
  picture is kept as the *background*, and an update only pastes the
  background back and draws the dynamic artists on top of it;
- heatmaps have no ticks (their shape is written in the title) and colours
  are scaled to a fixed range, so the background never changes when only the
  values or the shape of the tensor change;
- a big matrix is subsampled to about the axes' pixel size before drawing,
  which is what nearest-neighbour display would do anyway.
"""
from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from PIL import Image

#: two-colour map for pruning masks: 0 = pruned (dark), 1 = kept (light)
MASK_CMAP = ListedColormap(["#2b2d42", "#8ecae6"])
VALUE_CMAP = "RdBu_r"  # diverging: negative blue, zero white, positive red
MAX_PIXELS = 240  # a heatmap never shows more rows/columns than this
BLUE = "#219ebc"


class Canvas:
    """A reusable Agg figure with ``ncols`` axes side by side; ``png()`` renders it."""

    def __init__(self, ncols=1, width=4.0, height=2.8, dpi=72):
        self.figure = Figure(figsize=(width, height), dpi=dpi)
        FigureCanvasAgg(self.figure)  # attaches itself as figure.canvas
        self.figure.subplots_adjust(left=0.09, right=0.88, bottom=0.13, top=0.82, wspace=0.5)
        self.axes = list(self.figure.subplots(1, ncols, squeeze=False)[0])
        self.dynamic = []  # artists redrawn on every update
        self.background = None  # the rendered static part, or None when it must be redrawn

    def animate(self, *artists):
        """Mark artists as dynamic: left out of the background, drawn on each update."""
        for artist in artists:
            artist.set_animated(True)
            self.dynamic.append(artist)

    def forget(self, artists):
        """Stop drawing these dynamic artists and redraw the background next time."""
        self.dynamic = [a for a in self.dynamic if all(a is not b for b in artists)]
        self.background = None

    def png(self):
        """Render the figure (background + dynamic artists) and return PNG bytes."""
        canvas = self.figure.canvas
        if self.background is None:
            canvas.draw()  # a full draw skips animated (dynamic) artists
            self.background = canvas.copy_from_bbox(self.figure.bbox)
        else:
            canvas.restore_region(self.background)
        for artist in self.dynamic:
            self.figure.draw_artist(artist)
        rgba = np.asarray(canvas.buffer_rgba())
        buffer = io.BytesIO()
        Image.fromarray(rgba).save(buffer, format="png", compress_level=1)
        return buffer.getvalue()


def as_matrix(array):
    """View any tensor as a 2-D matrix for a heatmap: rows = first dim, the rest flattened.

    A conv weight ``(out, in, kh, kw)`` becomes ``(out, in*kh*kw)``: one row per
    output channel, which is also how structured pruning along dim 0 looks.
    """
    array = np.asarray(array)
    if array.ndim == 0:
        return array.reshape(1, 1)
    if array.ndim == 1:
        return array.reshape(1, -1)
    return array.reshape(array.shape[0], -1)


def subsample(matrix, limit=MAX_PIXELS):
    """Every k-th row/column so that at most ``limit`` remain (nearest-neighbour display)."""
    row_step = -(-matrix.shape[0] // limit)  # ceil division
    col_step = -(-matrix.shape[1] // limit)
    return matrix[::row_step, ::col_step]


def max_abs(array):
    """Largest finite |value| (the colour scale of a value heatmap), 0.0 when none."""
    finite = np.abs(array[np.isfinite(array)])
    return float(finite.max()) if finite.size else 0.0


def style_axes(ax, xlabel, ylabel):
    """Small fonts and at most 4 ticks per axis: tick labels are most of the drawing time."""
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.yaxis.set_major_locator(MaxNLocator(4))


class TensorPanel:
    """One axes (plus a colorbar slot) that shows a tensor or a pruning mask.

    ``show`` draws a heatmap for a 2-D+ tensor (or any mask), a bar chart
    (≤ 64 values) or a histogram for a 1-D one, and the number for a scalar.
    Consecutive heatmaps of the same kind only swap pixels and title (fast).
    """

    def __init__(self, canvas, index=0):
        self.canvas = canvas
        self.figure = canvas.figure
        self.ax = canvas.axes[index]
        box = self.ax.get_position()  # colorbar slot: a thin axes just right of ours
        self.cax = self.figure.add_axes([box.x1 + 0.012, box.y0, 0.014, box.height])
        self.cax.set_visible(False)
        self.image = None
        self.mode = None  # "values", "mask", or None (1-D / message: redrawn each time)

    def show(self, array, title, mask=False):
        """Draw ``array`` (a NumPy array) under ``title``."""
        array = np.asarray(array, dtype=np.float64)
        if mask:
            self._heatmap(as_matrix(array), title, "mask")
        elif array.ndim >= 2:
            self._heatmap(as_matrix(array), title, "values")
        else:
            self._one_dimensional(array.reshape(-1), title)

    def message(self, text, title=""):
        """An empty panel with a centred message (e.g. 'no .grad yet')."""
        self._reset()
        self.ax.set_axis_off()
        self.ax.set_title(title, fontsize=9)
        self.ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=9, color="gray",
                     transform=self.ax.transAxes)

    def _reset(self):
        self.canvas.forget([self.image, self.ax.title])
        self.ax.clear()
        self.ax.set_axis_on()
        self.cax.clear()
        self.cax.set_visible(False)
        self.image = None
        self.mode = None

    def _heatmap(self, matrix, title, mode):
        if mode != self.mode:
            self._new_heatmap(mode)
        shown = subsample(matrix)
        if mode == "values":
            scale = max_abs(matrix)
            shown = shown / scale if scale > 0 else shown  # colours always span [-1, 1]
            title = f"{title}\n|max| = {scale:.3g}"
        self.image.set_data(shown)
        self.ax.set_title(title, fontsize=9)

    def _new_heatmap(self, mode):
        """Build the static frame of a heatmap: no ticks, a fixed-range colorbar."""
        self._reset()
        mask = mode == "mask"
        self.image = self.ax.imshow(
            np.zeros((2, 2)), aspect="auto", interpolation="nearest", extent=(0, 1, 1, 0),
            cmap=MASK_CMAP if mask else VALUE_CMAP, vmin=0.0 if mask else -1.0, vmax=1.0,
        )
        self.ax.set_xticks([])
        self.ax.set_yticks([])
        self.ax.set_xlabel("columns (dims 1.. flattened)", fontsize=8)
        self.ax.set_ylabel("rows (dim 0)", fontsize=8)
        self.cax.set_visible(True)
        bar = self.figure.colorbar(self.image, cax=self.cax)
        if mask:
            bar.set_ticks([0.25, 0.75], labels=["pruned", "kept"])
        else:
            bar.set_ticks([-1, 0, 1], labels=["-max", "0", "+max"])
        bar.ax.tick_params(labelsize=7)
        self.canvas.animate(self.image, self.ax.title)
        self.mode = mode

    def _one_dimensional(self, values, title):
        self._reset()
        self.ax.set_title(title, fontsize=9)
        if values.size == 1:
            self.ax.set_axis_off()
            self.ax.text(0.5, 0.5, f"{values[0]:.6g}", ha="center", va="center", fontsize=14,
                         transform=self.ax.transAxes)
        elif values.size <= 64:
            self.ax.bar(np.arange(values.size), values, color=BLUE, width=0.8)
            self.ax.axhline(0.0, color="black", linewidth=0.5)
            style_axes(self.ax, "index", "value")
        else:
            counts, edges = np.histogram(values[np.isfinite(values)], bins=40)
            self.ax.stairs(counts, edges, fill=True, color=BLUE)
            style_axes(self.ax, "value", "count")
