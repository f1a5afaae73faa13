"""The ipywidgets view of ``BackwardTrace``: step through ``backward`` node by node.

Layout::

    title, colour legend
    [◀ prev] [slider: step] [next ▶] [expand group ▾]   "step 3 / 11"
    [ the grad_fn graph, this step coloured ]  [ gradient arriving ]
                                               [ sent on / .grad   ]
    [ what happened at this step (text)                                            ]

The graph's boxes, arrows and labels are drawn once per choice of expanded
group (the *background*, with Pillow: see ``GraphPicture``); a step only
tints each box by its state and draws the arrows the current node sends
gradients along. A tall graph is cropped to a window that follows the
current node. The gradient pictures use ``_render``'s panels (colours
symmetric around zero, with a colour bar).
"""
from __future__ import annotations

import html

import ipywidgets as W
import numpy as np
from matplotlib import font_manager
from PIL import Image, ImageColor, ImageDraw, ImageFont

from ._render import (CSS_DPI, PIXEL_RATIO, Canvas, PictureFallback, RenderAhead, TensorPanel,
                      html_style, joined_png, pixels_png, text_scale)
from .backward_stepper import BackwardTrace, ModuleScopes, box_states, layout

STATE_COLOURS = {"pending": (0, 0, 0, 0), "receiving": (1.0, 0.85, 0.2, 0.45),
                 "done": (0.3, 0.7, 0.35, 0.35), "current": (0.95, 0.45, 0.1, 0.6)}
FILL = {"node": "#caf0f8", "leaf": "#ffd6a5", "group": "#e9ecef"}
SENT = "#d62828"
ALL = "(all)"
COLLAPSED = "(none)"
EDGE = "#8a8a8a"
#: sizes in CSS pixels at text scale 1; the picture has PIXEL_RATIO pixels per CSS pixel,
#: and the font, boxes and levels grow with the text scale (the width does not)
FONT_PX = 13
WIDTH_PX = 420
DETAIL_PX = 340  # the two gradient pictures on the right: the view is 760 px wide
LEVEL_PX = 46  # one level of the graph
BOX_PX = 28  # a box's height
MARGIN_PX = 8
WINDOW_PX = 560  # a taller graph is cropped to this many pixels around the current node
KEEP = 16  # steps whose pictures a stepper keeps (~150 KB each)


def colour_chip(rgba, text, border="#888"):
    """A small square of colour ``rgba`` (0..1) and its meaning, for a legend."""
    r, g, b, a = rgba
    return (f"<span style='display:inline-block;width:12px;height:12px;border:1px solid "
            f"{border};background:rgba({int(255*r)},{int(255*g)},{int(255*b)},{a})'></span> "
            f"{text}")


def legend_html(style):
    """The colour key, as HTML under the title (cheaper than drawing it in the figure)."""
    boxes = [f"<span style='background:{FILL['node']};padding:0 4px'>node</span>",
             (f"<span style='background:{FILL['leaf']};padding:0 4px'>"
             "AccumulateGrad (leaf .grad)</span>"),
             f"<span style='background:{FILL['group']};padding:0 4px'>[+] module group</span>",
             "<b>bold</b> border: shared (2+ uses), dashed: retain_grad"]
    states = [colour_chip(STATE_COLOURS["receiving"], "got a gradient, waiting"),
              colour_chip(STATE_COLOURS["current"], "running now"),
              colour_chip(STATE_COLOURS["done"], "done"),
              f"<span style='color:{SENT}'>━</span> gradients it sends"]
    return f"<div style='{style}'>{' · '.join(boxes)}<br>{' · '.join(states)}</div>"


class GraphPicture:
    """The graph picture: a static image per layout, the step's state painted on a copy.

    Drawn with Pillow rather than matplotlib: a graph of a few hundred nodes
    has a label per box, and matplotlib lays out and renders each text in
    milliseconds (seconds for the whole graph) where Pillow takes microseconds.
    Labels are written the first time their box comes into the window shown.
    Every step copies that window out of the picture's pixels (a NumPy array
    kept beside the image), tints the boxes by state and paints the arrows of
    the gradients sent: a few milliseconds.
    """

    def __init__(self):
        scale = text_scale()
        self.px = PIXEL_RATIO  # picture pixels per CSS pixel
        self.width = WIDTH_PX * self.px
        self.level = round(LEVEL_PX * scale * self.px)
        self.box = round(BOX_PX * scale * self.px)
        self.window = round(WINDOW_PX * self.px)
        self.font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"),
                                       round(FONT_PX * scale * self.px))

    def draw_layout(self, lay):
        """Boxes, labels and arrows of ``lay`` (a ``backward_stepper.Layout``)."""
        px, margin = self.px, MARGIN_PX * self.px
        height = max(160 * px, self.level * lay.levels + 2 * margin)
        image = Image.new("RGB", (self.width, height), "white")
        draw = ImageDraw.Draw(image)
        self.rects = []
        for box in lay.boxes:
            half = min(0.45 / box.width, 0.3) * self.width
            centre = (box.column + 0.5) / box.width * self.width
            top = margin + box.level * self.level
            self.rects.append((int(centre - half), top, int(centre + half), top + self.box))
        for a, b, count in lay.edges:  # lines first: the boxes hide what passes under them
            start, end = self._bottom(a), self._top(b)
            draw.line([start, end], fill=EDGE, width=px)
            _arrowhead(draw, start, end, EDGE, size=5 * px)
            if count > 1:
                draw.text(((start[0] + end[0]) / 2 + 4 * px, (start[1] + end[1]) / 2),
                          f"×{count}", fill=EDGE, font=self.font, anchor="lm")
        for box, rect in zip(lay.boxes, self.rects):
            kind = "group" if box.key[0] == "group" else ("leaf" if box.is_leaf else "node")
            draw.rectangle(rect, fill=FILL[kind], outline="#555555",
                           width=(3 if box.shared else 1) * px)
            if box.retained:
                _dashed_outline(draw, rect, dash=4 * px, width=px)
        self.image, self.draw = image, draw
        self.pixels = np.array(image)  # the same picture as a NumPy array, kept up to date
        self.labels = [box.label for box in lay.boxes]
        self.labelled = set()  # boxes whose label is drawn: each the first time it is seen

    def _label(self, top, bottom):
        """Write the labels of the boxes between rows ``top`` and ``bottom`` (once each),
        in the picture and in its array (the rows of the boxes labelled, copied over)."""
        rows = []
        for b, rect in enumerate(self.rects):
            if b not in self.labelled and rect[3] >= top and rect[1] <= bottom:
                self.labelled.add(b)
                label = self._fit(self.labels[b], rect[2] - rect[0] - 6 * self.px)
                self.draw.text(((rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2), label,
                               fill="black", font=self.font, anchor="mm")
                rows += [rect[1], rect[3] + 1]
        if rows:
            first, last = min(rows), min(max(rows), self.image.height)
            self.pixels[first:last] = np.asarray(self.image.crop((0, first, self.width, last)))

    def _top(self, b):
        x0, y0, x1, _ = self.rects[b]
        return ((x0 + x1) // 2, y0)

    def _bottom(self, b):
        x0, _, x1, y1 = self.rects[b]
        return ((x0 + x1) // 2, y1)

    def _fit(self, label, width):
        """``label``, cut with "…" to fit ``width`` pixels."""
        if self.font.getlength(label) <= width:
            return label
        while len(label) > 2 and self.font.getlength(label + "…") > width:
            label = label[:-1]
        return label + "…"

    def png(self, states, sent_to, current_box):
        """Tint each box by its state, draw the arrows ``current_box → sent_to``; return
        PNG bytes of a window around the current box when the graph is tall."""
        width, height = self.image.size
        top = 0
        if height > self.window:
            centre = 0 if current_box is None else self.rects[current_box][1]
            top = min(max(centre - self.window // 2, 0), height - self.window)
        bottom = min(top + self.window, height)
        self._label(top, bottom)
        pixels = self.pixels[top:bottom].copy()  # the window, uint8 RGB
        for (x0, y0, x1, y1), state in zip(self.rects, states):
            r, g, b, alpha = STATE_COLOURS[state]
            y0, y1 = max(y0 - top, 0), min(y1 - top, pixels.shape[0] - 1)
            if alpha and y0 < y1:  # blend only the box's pixels (a window has 4x as many at 2x)
                region = pixels[y0:y1 + 1, x0:x1 + 1]
                tint = alpha * 255 * np.array([r, g, b], dtype=np.float32)
                region[...] = region * np.float32(1 - alpha) + tint
        if current_box is not None and sent_to:
            self._paint_arrows(pixels, top, current_box, sent_to)
        return pixels_png(pixels)

    def _paint_arrows(self, pixels, top, current_box, sent_to):
        """The arrows ``current_box → sent_to`` in ``SENT`` red, into the window ``pixels``
        (which starts at row ``top``). Pillow draws them on a one-byte mask, painted into
        the array: the same pixels as drawing on an image of the window (Pillow's lines
        have no antialiasing), without converting the window to an image and back."""
        mask = Image.new("L", (pixels.shape[1], pixels.shape[0]), 0)
        draw = ImageDraw.Draw(mask)
        for b in sent_to:
            start, end = self._bottom(current_box), self._top(b)
            start, end = (start[0], start[1] - top), (end[0], end[1] - top)
            draw.line([start, end], fill=255, width=3 * self.px)
            _arrowhead(draw, start, end, 255, size=8 * self.px)
        pixels[np.asarray(mask) > 0] = ImageColor.getrgb(SENT)


def _arrowhead(draw, start, end, colour, size=5):
    """A filled triangle at ``end`` pointing along ``start → end``."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    length = max(float(np.hypot(dx, dy)), 1e-9)
    ux, uy = dx / length, dy / length
    bx, by = end[0] - size * ux, end[1] - size * uy
    draw.polygon([end, (bx - size * 0.5 * uy, by + size * 0.5 * ux),
                  (bx + size * 0.5 * uy, by - size * 0.5 * ux)], fill=colour)


def _dashed_outline(draw, rect, dash=4, width=1):
    """White gaps every ``dash`` pixels along a box's outline (``width`` thick): dashed."""
    x0, y0, x1, y1 = rect
    x0, y0, x1, y1 = x0 + width // 2, y0 + width // 2, x1 - width // 2, y1 - width // 2
    for x in range(x0 + dash, x1, 2 * dash):
        draw.line([(x, y0), (min(x + dash - 1, x1), y0)], fill="white", width=width)
        draw.line([(x, y1), (min(x + dash - 1, x1), y1)], fill="white", width=width)
    for y in range(y0 + dash, y1, 2 * dash):
        draw.line([(x0, y), (x0, min(y + dash - 1, y1))], fill="white", width=width)
        draw.line([(x1, y), (x1, min(y + dash - 1, y1))], fill="white", width=width)


class StepperView(PictureFallback, W.VBox):
    """What BackwardStepper and TangentStepper share: a graph picture beside two tensor
    pictures, stepped with ◀ prev / a slider / next ▶, the step's text below.

    The pictures of a step are rendered once and kept (the last ``KEEP`` steps shown),
    and while the controls rest the next and the previous step are rendered ahead
    (``RenderAhead``), so "next ▶", "◀ prev" and a slider's arrow key show pictures that
    are ready. A subclass makes ``self.canvas`` and ``self.style``, calls ``_build``, and
    gives ``self.trace`` (with ``describe(step)``: the step's text), ``_render_step(step)``
    (the pictures), ``_picture_key()`` (what else they depend on) and ``_title()``.
    """

    def _build(self, steps, legend, extra_controls=()):
        self.rendered = {}  # (_picture_key(), step) -> its pictures and caption, KEEP at most
        self.ahead = RenderAhead(delay_s=0.3)  # the neighbour steps, while nobody waits
        self.title = W.HTML()
        self.legend = W.HTML(legend)
        self.prev_button = W.Button(description="◀ prev", layout=W.Layout(width="80px"),
                                    tooltip="previous step")
        self.next_button = W.Button(description="next ▶", layout=W.Layout(width="80px"),
                                    tooltip="run the next node")
        self.slider = W.IntSlider(min=0, max=steps, value=0, description="step",
                                  continuous_update=True, layout=W.Layout(width="330px"))
        self.position = W.Label()
        self.image = W.Image(format="png", layout=W.Layout(width=f"{WIDTH_PX}px"))
        self.caption = W.HTML(layout=W.Layout(width=self.canvas.css_width))
        self.detail = W.Image(format="png", layout=W.Layout(width=self.canvas.css_width))
        self.description = W.HTML(layout=W.Layout(width=f"{WIDTH_PX + DETAIL_PX}px",
                                                  max_height="300px", overflow="auto"))
        self.prev_button.on_click(lambda _: self.step(-1))
        self.next_button.on_click(lambda _: self.step(+1))
        self.slider.observe(lambda change: self._draw(), names="value")
        controls = W.HBox([self.prev_button, self.slider, self.next_button, *extra_controls,
                           self.position])
        right = W.VBox([self.caption, self.detail])
        super().__init__([self.title, self.legend, controls, W.HBox([self.image, right]),
                          self.description])
        self._draw()

    def fallback_text(self):
        """Title, the step shown, and the colour scale of the two tensor pictures."""
        return [self.title.value, self.position.value, self.caption.value]

    def fallback_png(self):
        """The notebook file's picture: the graph beside the two tensor pictures."""
        return joined_png([[self.image.value, self.detail.value]])

    def step(self, delta):
        """Move ``delta`` steps forward (or back), staying in range."""
        self.slider.value = min(max(self.slider.value + delta, 0), self.slider.max)

    def _draw(self):
        """Show the slider's step: its pictures first (kept, or rendered now), then its
        text; a button with nowhere to go is disabled; then the neighbour steps are
        rendered ahead once the controls rest."""
        step, last = self.slider.value, self.slider.max
        graph, caption, detail = self._rendered(step)
        self.image.value, self.detail.value = graph, detail
        self.caption.value = caption
        self.title.value = self._title()
        self.position.value = f"step {step} / {last}"
        self._describe(self._lines(step))
        self.prev_button.disabled, self.next_button.disabled = step == 0, step == last
        neighbours = [s for s in (step + 1, step - 1) if 0 <= s <= last]
        self.ahead.schedule(lambda s=s: self._rendered(s) for s in neighbours)

    def _rendered(self, step):
        """``(graph PNG, caption HTML, tensors PNG)`` of ``step``: rendered once and kept
        (the last ``KEEP``, with what else they depend on: ``_picture_key()``), so a step
        rendered ahead while the controls rested is shown at once."""
        key = (self._picture_key(), step)
        if key not in self.rendered:
            if len(self.rendered) >= KEEP:
                del self.rendered[next(iter(self.rendered))]  # the oldest
            self.rendered[key] = self._render_step(step)
        return self.rendered[key]

    def _picture_key(self):
        """What a step's pictures depend on besides the step (none here)."""
        return None

    def _lines(self, step):
        """What happened at ``step``, as text lines (the trace says it)."""
        return self.trace.describe(step)

    def _describe(self, lines):
        """The step's text lines as the HTML under the pictures."""
        self.description.value = (f"<pre style='{self.style}; margin:0; white-space:pre-wrap'>"
                                  f"{html.escape(chr(10).join(lines))}</pre>")


class BackwardStepper(StepperView):
    """Step through one ``output.backward()``: which node runs, what it receives and sends.

    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> h = x * x; y = (h + h.exp()).sum()
    >>> stepper = BackwardStepper(y, tensors={"x": x, "h": h})   # runs backward once
    >>> stepper.next_button.click()                              # or the slider

    ``BackwardStepper.for_model(model, x, y, loss_fn)`` groups the nodes by module.
    """

    def __init__(self, output, tensors=None, scopes=None, depth=1):
        self.trace = BackwardTrace(output, tensors, scopes, depth)
        self.picture = GraphPicture()
        self.style = html_style()  # the text scale when the widget was built
        self.canvas = Canvas(ncols=1, width=DETAIL_PX / CSS_DPI, height=4.6)
        self.canvas.slots.append(_split(self.canvas))  # two slots, one above the other
        self.left_panel = TensorPanel(self.canvas, 0, title="gradient arriving")
        self.right_panel = TensorPanel(self.canvas, 1, title="sent on / leaf .grad")
        self._layout_key = None

        groups = self.trace.groups
        named = [(f"{g or '(root)'}: {self.trace.group_classes.get(g, 'module')}", g)
                 for g in groups]
        choices = [(COLLAPSED, COLLAPSED)] + named + ([(ALL, ALL)] if groups else [])
        self.expand = W.Dropdown(options=choices,
                                 value=COLLAPSED, description="expand", disabled=not groups,
                                 layout=W.Layout(width="200px"))
        self.expand.observe(lambda change: self._draw(), names="value")
        self._build(len(self.trace.events), legend_html(self.style), extra_controls=[self.expand])

    @classmethod
    def for_model(cls, model, x, y=None, loss_fn=None, depth=1):
        """Forward ``x`` through ``model`` watching its modules, take the loss
        (``loss_fn(output, y)``, or ``output.sum()``) and step through its backward."""
        with ModuleScopes(model) as scopes:
            output = model(x)
        loss = output.sum() if loss_fn is None else loss_fn(output, y)
        return cls(loss, tensors={"output": output}, scopes=scopes, depth=depth)

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        return (f"BackwardStepper({len(self.trace.nodes)} nodes, "
                f"{len(self.trace.events)} steps)")

    @property
    def expanded(self):
        value = self.expand.value
        return ("*",) if value == ALL else (() if value == COLLAPSED else (value,))

    # -- drawing ------------------------------------------------------------------------
    def _draw(self):
        if self._layout_key != self.expanded:
            self.graph_layout = layout(self.trace, self.expanded)
            self.picture.draw_layout(self.graph_layout)
            self._layout_key = self.expanded
        super()._draw()

    def _picture_key(self):
        return self.expanded

    def _title(self):
        trace = self.trace
        return (f"<b>BackwardStepper</b> — {len(trace.nodes)} graph nodes, "
                f"{len(trace.node_events())} run by backward; "
                f"{len(self.graph_layout.boxes)} boxes drawn")

    def _render_step(self, step):
        """``(graph PNG, caption HTML, gradients PNG)`` of ``step``, drawn now."""
        states, event = self.trace.state(step)
        return (self._graph_png(states, event), *self._render_detail(event))

    def _graph_png(self, states, event):
        """The graph with the boxes tinted by ``states`` and the arrows ``event`` sends."""
        current_box = sent_to = None
        if event is not None:
            current_box = self.graph_layout.box_of[event.node]
            sent_to = {self.graph_layout.box_of[c] for c, g in event.sent
                       if c is not None and g is not None} - {current_box}
        return self.picture.png(box_states(self.graph_layout, states), sent_to or (),
                                current_box)

    def _render_detail(self, event):
        """``(caption HTML, PNG)``: the gradient arriving (left/top) and the one sent on, or
        the leaf's .grad after (right/bottom), both on ONE colour scale: the larger |max| of
        the two, so a gradient three times larger than the other looks three times stronger."""
        if event is None:
            self.left_panel.message("backward starts at the top:\nd output / d output = 1")
            self.right_panel.message("")
            return (f"<div style='{self.style}'>step 0: nothing has run yet</div>",
                    self.canvas.png())
        node = self.trace.nodes[event.node]
        left = event.arriving[0]
        right, right_text, empty = None, "", "sends no gradient"
        if node.is_leaf:
            right, empty = event.grad_after, "None"
            right_text = f"{node.tensor}.grad after"
        else:
            sent = [(k, c, g) for k, (c, g) in enumerate(event.sent) if g is not None]
            if sent:
                k, child, right = sent[0]
                target = "nothing" if child is None else self.trace.nodes[child].label
                right_text = f"grad_input[{k}] → {target}"
        largest = [abs(r.stats.min) for r in (left, right) if r is not None]
        largest += [abs(r.stats.max) for r in (left, right) if r is not None]
        scale = max([v for v in largest if np.isfinite(v)], default=0.0)
        self._show(self.left_panel, left, "no gradient", scale)
        self._show(self.right_panel, right, empty, scale)
        text = (f"both pictures on one scale: ±{scale:.3g} = the larger |max| (white = 0); "
                f"left: arriving, |max| {_largest(left):.3g}")
        if right is not None:
            text += f"; right: {html.escape(right_text)}, |max| {_largest(right):.3g}"
        sampled = [r for r in (left, right) if r is not None and r.sampled]
        if sampled:
            text += "; big gradients: every k-th row and column shown"
        return f"<div style='{self.style}'>{text}</div>", self.canvas.png()

    @staticmethod
    def _show(panel, record, empty, scale):
        if record is None:
            panel.message(empty)
            return
        panel.show(record.values, scale=scale if scale > 0 else None)


def _largest(record):
    return 0.0 if record is None else max(abs(record.stats.min), abs(record.stats.max))


def _split(canvas):
    """Cut the canvas's one slot into two, one above the other, with room between them for
    the lower one's title and the upper one's x label; the upper one stays ``slots[0]``."""
    from matplotlib.transforms import Bbox

    box = canvas.slots[0]
    gap = (canvas.figure.subplotpars.bottom + 1 - canvas.figure.subplotpars.top)
    half = (box.height - gap) / 2
    canvas.slots[0] = Bbox.from_extents(box.x0, box.y1 - half, box.x1, box.y1)
    return Bbox.from_extents(box.x0, box.y0, box.x1, box.y0 + half)
