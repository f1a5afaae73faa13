"""Matplotlib → PNG bytes, shared by every view.

Why PNG bytes and not ``plt.show()``: a plot drawn inside an ``Output`` widget
is stored differently by nbclient and by nbval, which breaks strict notebook
validation. A PNG put in ``widgets.Image(value=png)`` looks the
same everywhere: the browser, nbval and a headless pytest.

Speed: a view redraws while a slider moves (budget: 100 ms). Laying out text
(tick labels, titles) is most of matplotlib's drawing time, so we use the
*blitting* trick of matplotlib animations, pushed one step further:

- each ``Canvas`` keeps ONE ``Figure`` for its whole life (no pyplot, no
  global state) with fixed margins;
- every picture has a *static frame* (axes, ticks, labels, title, colorbar)
  and one *dynamic* artist (the image, the histogram, a note). Frames never
  depend on the data: colours and axes are scaled to the tensor's largest
  |value|, which the view writes in HTML next to the figure (text changing on
  every update would cost more to draw than the picture itself);
- a ``TensorPanel`` owns one axes per kind of picture (heatmap, mask,
  histogram, bars, ...) stacked in the same place; only one is visible;
- the canvas renders the frames once per combination of visible kinds and
  keeps that *background*; an update pastes it back and draws only the
  dynamic artists on top;
- dynamic artists that change only with new data, not with a slider (a
  histogram image under a clipping line), can be marked ``slow``: they are
  drawn once over the background into a second kept layer (until
  ``new_data()``, or until a panel's ``new_data(panel, key)`` gives a key other
  than its last: new data that looks the same keeps the layer), so a slider pays
  only for the artists it moves;
- parts of the frame that follow the data's range (an axis whose limits move
  with the gradients: its ticks, tick labels and label) can be kept apart with
  ``frame_part``: each is rendered into its own kept rectangle, again only when
  its key (the axis limits) changes, so a new range costs that axis (~20 ms)
  instead of the whole frame (100-200 ms: text is most of matplotlib's drawing);
- a big matrix is subsampled to about the axes' pixel size before drawing,
  which is what nearest-neighbour display would do anyway (and before any
  conversion: a 4096x4096 mask costs what a 240x240 one does).

Projectors and HiDPI screens: a figure of ``w`` inches is shown ``w * CSS_DPI``
CSS pixels wide (``Canvas.css_width``), so one point of text is what the
browser calls a point, and rendered with ``PIXEL_RATIO`` (2) pixels per CSS
pixel, so it stays sharp when the browser or the projector scales it up.
Text sizes come from ``font_size(role)``; ``set_text_scale(1.5)`` (exported
as ``widgets.set_text_scale``) makes the text of every widget created
afterwards 1.5 times larger, figures and HTML captions alike.
"""
from __future__ import annotations

import asyncio
import base64
import html
import io
import re
import struct
import textwrap
import zlib

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox
from matplotlib import font_manager
from PIL import Image, ImageDraw, ImageFont

from ._common import max_abs  # noqa: F401 (the views import it from here)

try:  # ISA-L's deflate (the ``isal`` package, which `./dev lab` installs): a widget's picture
    from isal.isal_zlib import compress as deflate  # in 2 ms instead of zlib's 15-20, and smaller
except ImportError:  # pragma: no cover - without it, zlib's: the same PNG format
    from zlib import compress as deflate

#: two-colour map for pruning masks: 0 = pruned (dark), 1 = kept (light)
MASK_CMAP = ListedColormap(["#2b2d42", "#8ecae6"])
VALUE_CMAP = "RdBu_r"  # diverging: negative blue, zero white, positive red
MAX_PIXELS = 240  # a heatmap never shows more rows/columns than this
BLUE = "#219ebc"
#: room around the slots, in inches (so it fits the text whatever the figure's size):
#: left of each slot for the y label and ticks, right of the last one, below for the
#: x label, above for the title; a heatmap keeps COLORBAR_ROOM of its slot for its colorbar
MARGIN_INCHES = dict(left=0.8, right=0.12, bottom=0.55, top=0.42)
COLORBAR_ROOM = 0.75
CSS_DPI = 96  # CSS pixels per inch: a figure of w inches is shown w * 96 px wide
PIXEL_RATIO = 2  # PNG pixels per CSS pixel (sharp on HiDPI screens and projectors)
MAX_BACKGROUNDS = 16  # rendered frames a Canvas keeps (each is the figure's pixels, ~4 MB)
#: text sizes in points at text scale 1 (10 pt is 13 CSS px: readable from a classroom's back row)
FONT_SIZES = {"tick": 10, "label": 11, "title": 12, "note": 12, "big": 16, "html": 13}
_text_scale = 1.0


def set_text_scale(scale=1.0):
    """Make the text of every widget created from now on ``scale`` times larger.

    ``widgets.set_text_scale(1.5)`` before building the widgets of a lesson
    shown on a projector; ``set_text_scale()`` goes back to the default.
    Figures and HTML captions both follow it.
    """
    global _text_scale
    scale = float(scale)
    if not 0.5 <= scale <= 4:
        raise ValueError(f"text scale must be between 0.5 and 4, got {scale}")
    _text_scale = scale


def text_scale():
    """The current text scale (1.0 unless ``set_text_scale`` changed it)."""
    return _text_scale


def font_size(role):
    """Points for a kind of text: ``"tick"``, ``"label"``, ``"title"``, ``"note"``, ``"big"``."""
    return FONT_SIZES[role] * _text_scale


def html_style(extra=""):
    """The inline CSS of the widgets' HTML text (monospace, scaled like the figures)."""
    size = round(FONT_SIZES["html"] * _text_scale)
    return f"font-family: monospace; font-size: {size}px; line-height: 1.35{extra}"


class Canvas:
    """A reusable Agg figure with ``ncols`` slots side by side; ``png()`` renders it.

    Panels register their dynamic artists with ``animate`` and the axes whose
    range follows the data with ``frame_part``; everything else is background,
    cached per ``layout`` (a tuple the panels report, e.g. which kind of
    picture each slot shows). A picture is the background, the frame parts,
    the slow artists, then the dynamic ones.
    """

    def __init__(self, ncols=1, width=4.0, height=2.8, dpi=None):
        """``width`` x ``height`` inches, shown ``css_width`` wide; ``dpi`` defaults
        to ``CSS_DPI * PIXEL_RATIO`` pixels per inch."""
        self.figure = Figure(figsize=(width, height), dpi=dpi or CSS_DPI * PIXEL_RATIO)
        self.css_width = css_width(self.figure)
        FigureCanvasAgg(self.figure)  # attaches itself as figure.canvas
        self.figure.subplots_adjust(**margins(width, height, ncols))
        grid = self.figure.add_gridspec(1, ncols)
        self.slots = [grid[0, i].get_position(self.figure) for i in range(ncols)]
        self.panels = []  # objects with a .layout() method, for the background key
        self.dynamic = []  # artists drawn on every update
        self.slow = []  # dynamic artists that change only with new data
        self.backgrounds = {}  # layout -> rendered static picture
        self.parts = []  # FramePart: pieces of the frame that follow the data's range
        self.data_layer = None  # (key, the background with the parts and slow artists drawn)
        self.data_keys = {}  # owner -> what its slow artists show (new_data)

    def animate(self, *artists, slow=False):
        """Mark artists as dynamic: left out of the background, drawn on each update;
        ``slow=True``: drawn once after each ``new_data()`` and kept under the others."""
        for artist in artists:
            artist.set_animated(True)
            (self.slow if slow else self.dynamic).append(artist)

    def frame_part(self, artists, key):
        """Keep ``artists`` (an axis, or both axes of one plot) out of the background: they
        change with the data's range, which ``key()`` describes (the axis limits). They are
        drawn into their own rectangle (``FramePart``), kept until ``key()`` changes. The
        rectangles of two parts must not overlap (the x axes of two plots side by side,
        at least 0.6 inch apart, do not)."""
        for artist in artists:
            artist.set_animated(True)
        part = FramePart(self.figure, artists, key)
        self.parts.append(part)
        return part

    def render_part_ahead(self, part):
        """Render ``part`` for the range its axes show now, over this layout's background,
        and keep it: a caller that knows the next range (a timeline's next steps) sets
        it, calls this while nobody waits, and sets the range back; the ``png()`` that
        shows that range pastes the part instead of drawing it."""
        layout = tuple(panel.layout() for panel in self.panels)
        if (layout, part.key()) not in part.kept:
            self._paste_background(layout)  # the next png() pastes over all of this
            part.draw(layout)

    def new_data(self, owner=None, key=None):
        """The slow artists changed: draw them again at the next ``png()``.

        ``owner`` and ``key``: what one panel's slow artists now show (a panel and, e.g.,
        the bytes of its bars' ends and its note's text). When ``key`` equals the one that
        panel gave last, its artists show what is already drawn, and the kept layer stays
        (an exploded network's gradients are NaN step after step: the same picture).
        """
        if owner is not None:
            if owner in self.data_keys and self.data_keys[owner] == key:
                return
            self.data_keys[owner] = key
        self.data_layer = None

    def kept_layer(self):
        """The kept layer of slow artists and what each panel said it shows (``new_data``),
        for ``restore_layer``: a view that draws other data for a while (the pictures of a
        step rendered ahead) and then gives its panels their own data again keeps the layer
        it had instead of drawing it again."""
        return self.data_layer, dict(self.data_keys)

    def restore_layer(self, kept):
        """Put back what ``kept_layer`` returned; only once the slow artists show again
        exactly what they showed then."""
        self.data_layer, keys = kept
        self.data_keys = dict(keys)

    def invalidate(self):
        """Forget cached backgrounds (call after changing a static frame)."""
        self.backgrounds.clear()
        self.data_layer = None
        for part in self.parts:
            part.kept.clear()

    def png(self):
        """Render the figure (background, frame parts, slow and then dynamic artists) as
        PNG bytes."""
        canvas = self.figure.canvas
        layout = tuple(panel.layout() for panel in self.panels)
        key = (layout, tuple(part.key() for part in self.parts))
        if self.data_layer is not None and self.data_layer[0] == key:
            canvas.restore_region(self.data_layer[1])
        else:
            self._paste_background(layout)
            for part in self.parts:
                part.paste(layout)
            if self.slow or self.parts:
                self._draw_visible(self.slow)
                self.data_layer = (key, canvas.copy_from_bbox(self.figure.bbox))
        self._draw_visible(self.dynamic)
        return png_bytes(canvas)

    def prepare(self):
        """Render the static frame of the panels' current layout now if it is not kept yet
        (rendering ahead: the next ``png()`` in this layout only pastes it). Draws nothing
        else and encodes no PNG."""
        layout = tuple(panel.layout() for panel in self.panels)
        if layout not in self.backgrounds:
            self._paste_background(layout)

    def _paste_background(self, layout):
        """The static frame of ``layout``, rendered the first time it is asked for."""
        canvas = self.figure.canvas
        if layout in self.backgrounds:
            canvas.restore_region(self.backgrounds[layout])
            return
        canvas.draw()  # a full draw skips animated (dynamic) artists
        if len(self.backgrounds) >= MAX_BACKGROUNDS:
            del self.backgrounds[next(iter(self.backgrounds))]  # the oldest
        self.backgrounds[layout] = canvas.copy_from_bbox(self.figure.bbox)

    def _draw_visible(self, artists):
        for artist in artists:
            if artist.axes is None or artist.axes.get_visible():
                self.figure.draw_artist(artist)


class FramePart:
    """Artists of a frame that follow the data's range (``Canvas.frame_part``), rendered
    into a rectangle of their own: the pixels are kept with the key they were drawn for
    (the last ``KEEP`` keys: a range rendered ahead, a range shown again) and pasted back
    when ``key()`` returns one of them.

    The rectangle of an x axis is its plot's columns (widened by ``SIDE_INCHES`` times
    the text scale, for tick labels past the ends) from the figure's bottom to the plot's
    top; of a y axis, its rows from the figure's left; and the axis label wherever it
    reaches. It may hold pieces of the static frame as well (the plot's inside, a
    legend below): those are the background's pixels.
    """

    SIDE_INCHES = 0.3
    KEEP = 4  # renderings kept: the range shown, and ranges rendered ahead or shown before

    def __init__(self, figure, artists, key):
        self.figure, self.artists, self.key = figure, list(artists), key
        self.margin = self.SIDE_INCHES * text_scale() * figure.dpi  # pixels
        self.kept = {}  # (layout, key) -> the rectangle's pixels, the last KEEP

    def paste(self, layout):
        """Over a freshly pasted background: the kept pixels, or the artists drawn anew."""
        pixels = self.kept.get((layout, self.key()))
        if pixels is not None:
            self.figure.canvas.restore_region(pixels)
        else:
            self.draw(layout)

    def draw(self, layout):
        """Draw the artists over the background there now and keep the rectangle."""
        for artist in self.artists:
            if artist.axes.get_visible():  # a plot hidden in this layout shows no axis
                self.figure.draw_artist(artist)
        if len(self.kept) >= self.KEEP:
            del self.kept[next(iter(self.kept))]  # the oldest
        self.kept[(layout, self.key())] = self.figure.canvas.copy_from_bbox(self.box())

    def box(self):
        """The rectangle (display pixels) the artists are drawn in: see the class doc."""
        m, boxes = self.margin, []
        renderer = self.figure.canvas.get_renderer()
        for axis in self.artists:
            ax = axis.axes.bbox
            if axis.axis_name == "x":
                boxes.append(Bbox([[ax.x0 - m, 0], [ax.x1 + m, ax.y1]]))
            else:
                boxes.append(Bbox([[0, ax.y0 - m], [ax.x1, ax.y1 + m]]))
            if axis.label.get_text():  # a label wider than its plot (large text)
                boxes.append(axis.label.get_window_extent(renderer).padded(4))
        return Bbox.intersection(Bbox.union(boxes), self.figure.bbox)


class RenderAhead:
    """Pictures a control is likely to ask for next, rendered before it does.

    ``schedule(tasks)`` (functions without arguments that render into a cache)
    replaces whatever was still waiting. In a kernel (a running asyncio event
    loop) the tasks run one at a time once the widget has been left alone for
    ``delay_s`` seconds, so someone clicking or dragging never waits for them
    (at most for one that had already started), ``gap_s`` apart (the event loop
    reads incoming messages in between). Without an event loop (a script, a
    test) nobody is waiting on a screen: they do not run.
    """

    def __init__(self, delay_s=1.0, gap_s=0.02):
        self.delay_s = delay_s
        self.gap_s = gap_s
        self.pending = []
        self.timer = None  # the event loop's handle of the next task

    def schedule(self, tasks):
        """Forget the tasks still waiting; run ``tasks`` after ``delay_s`` of quiet."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.pending = []
            return
        self.pending = list(tasks)
        self.timer = loop.call_later(self.delay_s, self._run_next)

    def _run_next(self):
        self.timer = None
        if self.pending:
            self.pending.pop(0)()
            self.timer = asyncio.get_running_loop().call_later(self.gap_s, self._run_next)


def margins(width, height, ncols):
    """``subplots_adjust`` arguments for ``ncols`` slots in a ``width`` x ``height`` inch
    figure, leaving ``MARGIN_INCHES`` around and between them: room for tick labels and
    titles, so it grows with ``set_text_scale``."""
    m = {side: inches * text_scale() for side, inches in MARGIN_INCHES.items()}
    slot = (width - m["right"] - m["left"] * ncols) / ncols
    return dict(left=m["left"] / width, right=1 - m["right"] / width,
                bottom=m["bottom"] / height, top=1 - m["top"] / height,
                wspace=m["left"] / max(slot, 0.1))


def css_width(figure):
    """The width (``"730px"``) at which to show ``figure``: its inches times ``CSS_DPI``."""
    return f"{round(figure.get_figwidth() * CSS_DPI)}px"


def png_bytes(canvas):
    """The pixels an Agg canvas holds now, as PNG bytes (``pixels_png``)."""
    return pixels_png(np.asarray(canvas.buffer_rgba()))


def pixels_png(pixels):
    """An RGB or RGBA image (``height x width x 3 or 4`` bytes) as PNG bytes: fast, lightly
    compressed.

    Written by hand, it is short: a PNG is a signature and three chunks, ``IHDR``
    (width, height, 8 bits per channel, RGB or RGBA), ``IDAT`` (the rows deflated,
    each after one byte naming its filter: 0, none) and ``IEND``, each chunk with
    its length and CRC. An Agg canvas's RGBA bytes are copied whole behind their
    filter bytes: dropping the alpha channel would cost a strided copy of every
    pixel (10 ms for a widget's 1520 x 1000 pixels) and saves the compressor less
    than that. Pillow's encoder tries five filters on every row to compress a
    little better; on flat plot colours a fast deflate (level 1) of the plain rows
    gives about as few bytes: 2 ms with ISA-L, 15-20 ms with zlib, 40-50 ms for
    Pillow. Every control's redraw ends here.
    """
    height, width, channels = pixels.shape
    rows = np.empty((height, 1 + channels * width), np.uint8)
    rows[:, 0] = 0  # filter type 0 (none) in front of every row
    rows[:, 1:] = pixels.reshape(height, channels * width)
    colour_type = {3: 2, 4: 6}[channels]  # RGB, RGBA
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", deflate(rows, 1)) + _png_chunk(b"IEND", b""))


def _png_chunk(kind, body):
    """One PNG chunk: the length of ``body``, its 4-letter ``kind``, ``body``, a CRC-32."""
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body)))


def compact_png(png):
    """The same picture in 256 colours, compressed hard: about a third of the bytes
    (for what is stored in a notebook file, not for live updates)."""
    with Image.open(io.BytesIO(png)) as image:
        palette = image.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                                dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    palette.save(buffer, format="png", compress_level=9)
    return buffer.getvalue()


class PictureFallback:
    """Mixin for a view (an ipywidgets box): its notebook output also carries its picture.

    A cell's output holds the widget's *view* (drawn by the kernel's live
    widget, or by the widget state saved in the notebook) and its text form.
    JupyterLab draws the view only for trusted output: a notebook a student
    has just downloaded or opened is not trusted, and JupyterLab falls back to
    the safe formats of the output. With ``image/png`` among them the student
    sees the picture (rather than ``PruneExplorer(Sequential, 3 weights)``)
    before running anything. The picture is ``fallback_png()``: by default the
    view's ``image`` widget.
    """

    def fallback_png(self):
        """``(png_bytes, css_width)`` of the picture to store: the ``image`` widget's."""
        return bytes(self.image.value), self.image.layout.width

    def fallback_text(self):
        """The HTML texts that carry the title and the scales (``|max|``, ``±scale``) of the
        picture: drawn above it in the stored picture, which has no HTML around it."""
        return [getattr(self, name).value for name in ("title", "caption") if hasattr(self, name)]

    def stored_png(self):
        """``(png_bytes, css_width)``: ``fallback_png()`` under its title and caption text."""
        picture, width = self.fallback_png()
        lines = [line for markup in self.fallback_text() for line in plain_lines(markup)]
        if not picture or not lines:
            return picture, width
        with Image.open(io.BytesIO(picture)) as image:
            pixels = image.width
        header = text_png(lines, pixels)
        joined, _ = joined_png([[header], [picture]])
        return joined, width

    def _repr_mimebundle_(self, **kwargs):
        """The widget's own bundle plus ``image/png`` (shown at its CSS width, like the view)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        picture, width = self.stored_png()
        if bundle is None or not picture:
            return bundle
        bundle["image/png"] = base64.b64encode(compact_png(picture)).decode("ascii")
        metadata = {}
        if width and str(width).endswith("px"):
            metadata["image/png"] = {"width": int(float(str(width)[:-2]))}
        return bundle, metadata


def plain_lines(markup):
    """The text of a widget's HTML as lines: ``<br>`` and block ends break lines, tags go."""
    text = re.sub(r"<br\s*/?>|</(div|p|tr|pre)>", "\n", markup or "")
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return [line.strip() for line in text.splitlines() if line.strip()]


def text_png(lines, width_px):
    """``lines`` of text, wrapped to ``width_px`` pixels, as a PNG on white (for stored
    pictures: at ``PIXEL_RATIO`` pixels per CSS pixel, like the figures)."""
    size = round(FONT_SIZES["html"] * _text_scale * PIXEL_RATIO)
    font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"), size)
    columns = max(20, int(width_px / (0.55 * size)))  # DejaVu Sans: ~0.55 em per character
    wrapped = [part for line in lines for part in textwrap.wrap(line, columns)]
    height = round(1.35 * size)
    image = Image.new("RGB", (width_px, height * len(wrapped) + size // 2), "white")
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(wrapped):
        draw.text((size // 2, size // 4 + row * height), line, fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, format="png", compress_level=1)
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


def set_title(ax, text):
    """``ax``'s title at the widgets' title size, placed at the top of the plot (``y=1``).

    Placed, not measured: with no ``y``, matplotlib measures every tick label of
    the plot at each full draw to see whether one reaches above it (none of ours
    does: their x labels are at the bottom), which costs more than the title itself.
    """
    ax.set_title(text, fontsize=font_size("title"), y=1.0)


def small_fonts(ax, xlabel="", ylabel=""):
    """Axis labels and tick labels at the widgets' text sizes."""
    ax.set_xlabel(xlabel, fontsize=font_size("label"))
    ax.set_ylabel(ylabel, fontsize=font_size("label"))
    ax.tick_params(labelsize=font_size("tick"))


class TensorPanel:
    """One slot of a ``Canvas`` that shows a tensor (or a pruning mask) under a fixed title.

    - 2-D and more: a heatmap (rows = dim 0), colours relative to |max|;
    - 1-D with ≤ 64 values: bars; longer: a histogram (both relative to |max|);
    - one value: the number; ``message(text)``: a note such as "no .grad yet".

    ``show`` returns the scale (|max|) so the view can print it.
    """

    def __init__(self, canvas, index=0, title=""):
        self.canvas = canvas
        self.figure = canvas.figure
        self.box = canvas.slots[index]
        self.title = title
        self.axes = {}  # kind -> axes, created the first time that kind is shown
        self.artists = {}  # kind -> the dynamic artist that holds the data
        self.kind = None
        canvas.panels.append(self)

    def layout(self):
        return self.kind

    # -- public -------------------------------------------------------------------
    def show(self, array, mask=False, scale=None):
        """Draw ``array`` (anything NumPy can read); return its largest |value|.

        ``scale``: draw relative to this |max| instead of the array's own (two
        panels on one shared scale; it must be at least the array's |max|).
        A matrix is subsampled before it is converted, so the cost does not
        grow with the tensor beyond one pass for its largest |value|.
        """
        array = np.asarray(array)
        if mask:
            self._use("mask").set_data(subsample(as_matrix(array)).astype(np.float64))
            return 1.0 if array.any() else 0.0
        scale = max_abs(array) if scale is None else scale
        if array.size == 1:
            self.message(f"{float(array.reshape(-1)[0]):.6g}", fontsize=font_size("big"),
                         color="black")
        elif array.ndim >= 2:
            matrix = subsample(as_matrix(array)).astype(np.float64)
            self._use("values").set_data(matrix / scale if scale > 0 else matrix)
        else:
            self._one_dimensional(array.reshape(-1).astype(np.float64), scale)
        return scale

    def message(self, text, fontsize=None, color="gray"):
        """An empty slot with a centred text (``fontsize`` default: the note size)."""
        note = self._use("text")
        note.set_text(text)
        note.set_fontsize(font_size("note") if fontsize is None else fontsize)
        note.set_color(color)

    # -- kinds of picture ---------------------------------------------------------------
    def _use(self, kind):
        """Show the axes for ``kind`` (building it on first use) and return its data artist."""
        if kind not in self.axes:
            ax = self.figure.add_axes(self.box)
            set_title(ax, self.title)
            self.axes[kind] = ax
            self.artists[kind] = getattr(self, "_build_" + kind)(ax)
            self.canvas.animate(self.artists[kind])
        for name, ax in self.axes.items():
            ax.set_visible(name == kind)
            for extra in getattr(ax, "companions", ()):
                extra.set_visible(name == kind)
        self.kind = kind
        return self.artists[kind]

    def _heatmap_frame(self, ax, cmap, vmin, ticks, labels):
        image = ax.imshow(np.zeros((2, 2)), aspect="auto", interpolation="nearest",
                          extent=(0, 1, 1, 0), cmap=cmap, vmin=vmin, vmax=1.0)
        ax.set_xticks([])
        ax.set_yticks([])
        small_fonts(ax, "columns\n(dims 1.. flattened)", "rows (dim 0)")
        inch = 1 / self.figure.get_figwidth()  # one inch in figure coordinates
        box = ax.get_position()  # the colorbar and its labels take the slot's right end
        ax.set_position([box.x0, box.y0, box.width - COLORBAR_ROOM * inch, box.height])
        cax = self.figure.add_axes([box.x1 - (COLORBAR_ROOM - 0.06) * inch, box.y0,
                                    0.12 * inch, box.height])
        bar = self.figure.colorbar(image, cax=cax)
        bar.set_ticks(ticks, labels=labels)
        cax.tick_params(labelsize=font_size("tick"))
        ax.companions = (cax,)
        return image

    def _build_values(self, ax):
        return self._heatmap_frame(ax, VALUE_CMAP, -1.0, [-1, 0, 1], ["-max", "0", "+max"])

    def _build_mask(self, ax):
        return self._heatmap_frame(ax, MASK_CMAP, 0.0, [0.25, 0.75], ["pruned", "kept"])

    def _build_hist(self, ax):
        steps = ax.stairs(np.zeros(40), np.linspace(-1, 1, 41), fill=True, color=BLUE)
        ax.set_xlim(-1.05, 1.05)
        ax.set_ylim(0, 1.05)
        ax.set_xticks([-1, 0, 1], labels=["-max", "0", "+max"])
        ax.set_yticks([0, 1], labels=["0", "peak"])
        small_fonts(ax, "value", "count")
        return steps

    def _build_bars(self, ax):
        steps = ax.stairs(np.zeros(1), np.array([0.0, 1.0]), baseline=0.0, fill=True, color=BLUE)
        ax.axhline(0.0, color="black", linewidth=0.5)
        ax.set_xlim(0, 1)
        ax.set_ylim(-1.05, 1.05)
        ax.set_xticks([])
        ax.set_yticks([-1, 0, 1], labels=["-max", "0", "+max"])
        small_fonts(ax, "index (left to right)", "value")
        return steps

    def _build_text(self, ax):
        ax.set_axis_off()
        return ax.text(0.5, 0.5, "", ha="center", va="center", transform=ax.transAxes)

    def _one_dimensional(self, values, scale):
        relative = values / scale if scale > 0 else values
        if values.size <= 64:
            # one step per value, drawn as touching bars
            self._use("bars").set_data(relative, np.linspace(0, 1, values.size + 1))
            return
        counts, _ = np.histogram(relative[np.isfinite(relative)], bins=40, range=(-1, 1))
        self._use("hist").set_data(counts / (counts.max() or 1), np.linspace(-1, 1, 41))


def joined_png(rows):
    """One PNG of several pictures: ``rows`` is a list of rows, each a list of PNG bytes put
    side by side (top-aligned), the rows stacked top to bottom on white.

    For a view with more than one picture (its ``fallback_png``): every picture is rendered
    at ``PIXEL_RATIO``, so the result is shown at its pixel width / ``PIXEL_RATIO``. Returns
    ``(png_bytes, css_width)``.
    """
    images = [[Image.open(io.BytesIO(png)).convert("RGB") for png in row if png] for row in rows]
    images = [row for row in images if row]
    if not images:
        return b"", None
    width = max(sum(image.width for image in row) for row in images)
    height = sum(max(image.height for image in row) for row in images)
    joined = Image.new("RGB", (width, height), "white")
    top = 0
    for row in images:
        left = 0
        for image in row:
            joined.paste(image, (left, top))
            left += image.width
        top += max(image.height for image in row)
    buffer = io.BytesIO()
    joined.save(buffer, format="png", compress_level=1)
    return buffer.getvalue(), f"{round(width / PIXEL_RATIO)}px"
