"""The ipywidgets view of ``BackwardTrace``: step through ``backward`` node by node.

Layout::

    title, colour legend
    [◀ prev] [slider: step] [next ▶] [expand group ▾]   "step 3 / 11"
    [ the grad_fn graph, this step coloured ]  [ gradient arriving | sent on / .grad ]
                                               [ what happened at this step (text)   ]

The graph's boxes, arrows and labels are drawn once per choice of expanded
group (the *background*); a step only paints the state of each box and the
arrows the current node sends gradients along (see ``_render.py``). A tall
graph is cropped to a window that follows the current node.
"""
from __future__ import annotations

import html
import io

import ipywidgets as W
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from PIL import Image

from ._render import Canvas, TensorPanel
from .backward_stepper import BackwardTrace, ModuleScopes, box_states, layout

STYLE = "font-family: monospace; font-size: 12px; line-height: 1.3"
STATE_COLOURS = {"pending": (0, 0, 0, 0), "receiving": (1.0, 0.85, 0.2, 0.45),
                 "done": (0.3, 0.7, 0.35, 0.35), "current": (0.95, 0.45, 0.1, 0.6)}
FILL = {"node": "#caf0f8", "leaf": "#ffd6a5", "group": "#e9ecef"}
SENT = "#d62828"
ALL = "(all)"
COLLAPSED = "(none)"
DPI = 80
WIDTH_PX = 470
LEVEL_PX = 42
WINDOW_PX = 520  # a taller graph is cropped to this many pixels around the current node


def legend_html():
    """The colour key, as HTML under the title (cheaper than drawing it in the figure)."""
    def chip(rgba, text, border="#888"):
        r, g, b, a = rgba
        return (f"<span style='display:inline-block;width:12px;height:12px;border:1px solid "
                f"{border};background:rgba({int(255*r)},{int(255*g)},{int(255*b)},{a})'></span> "
                f"{text}")
    boxes = [f"<span style='background:{FILL['node']};padding:0 4px'>node</span>",
             f"<span style='background:{FILL['leaf']};padding:0 4px'>AccumulateGrad (leaf .grad)</span>",
             f"<span style='background:{FILL['group']};padding:0 4px'>[+] module group</span>",
             "<b>bold</b> border: shared (2+ uses), dashed: retain_grad"]
    states = [chip(STATE_COLOURS["receiving"], "got a gradient, waiting"),
              chip(STATE_COLOURS["current"], "running now"),
              chip(STATE_COLOURS["done"], "done"),
              f"<span style='color:{SENT}'>━</span> gradients it sends"]
    return f"<div style='{STYLE}'>{' · '.join(boxes)}<br>{' · '.join(states)}</div>"


class GraphPicture:
    """The graph figure: a static background per layout, the step's state painted on top."""

    def __init__(self):
        self.figure = Figure(figsize=(WIDTH_PX / DPI, 3), dpi=DPI)
        FigureCanvasAgg(self.figure)
        self.key = None

    def draw_layout(self, lay):
        """Boxes, labels and arrows of ``lay`` (a ``backward_stepper.Layout``)."""
        levels = lay.levels
        height_px = max(160, LEVEL_PX * levels + 20)
        self.figure.clear()
        self.figure.set_size_inches(WIDTH_PX / DPI, height_px / DPI)
        ax = self.figure.add_axes([0, 0, 1, 1])
        ax.set_xlim(0, 1)
        ax.set_ylim(-levels + 0.45, 0.55)
        ax.set_axis_off()
        self.rects = []
        for box in lay.boxes:
            half = min(0.45 / box.width, 0.3)
            x = (box.column + 0.5) / box.width
            self.rects.append((x - half, -box.level - 0.28, 2 * half, 0.56))
        for a, b, count in lay.edges:
            (x0, y0, w0, _), (x1, y1, w1, h1) = self.rects[a], self.rects[b]
            start, end = (x0 + w0 / 2, y0), (x1 + w1 / 2, y1 + h1)
            bend = 0.25 if lay.boxes[b].level - lay.boxes[a].level > 1 else 0.0
            ax.annotate("", xy=end, xytext=start, arrowprops=dict(
                arrowstyle="->", color="gray", lw=0.8, connectionstyle=f"arc3,rad={bend}"))
            if count > 1:
                ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, f"×{count}",
                        fontsize=7, color="gray", ha="left", va="center")
        for box, (x, y, w, h) in zip(lay.boxes, self.rects):
            kind = "group" if box.key[0] == "group" else ("leaf" if box.is_leaf else "node")
            ax.add_patch(Rectangle((x, y), w, h, facecolor=FILL[kind], edgecolor="#555",
                                   linewidth=2.2 if box.shared else 0.8,
                                   linestyle="--" if box.retained else "-"))
            ax.text(x + w / 2, y + h / 2, _fit(box.label, w * WIDTH_PX), ha="center",
                    va="center", fontsize=7.5)
        polygons = [[(x, y), (x + w, y), (x + w, y + h), (x, y + h)] for x, y, w, h in self.rects]
        self.states = PolyCollection(polygons, facecolors=[(0, 0, 0, 0)] * len(polygons),
                                     edgecolors="none", animated=True)
        ax.add_collection(self.states)
        self.sent = LineCollection([], colors=SENT, linewidths=2.5, animated=True)
        ax.add_collection(self.sent)
        self.ax = ax
        self.figure.canvas.draw()
        self.background = self.figure.canvas.copy_from_bbox(self.figure.bbox)

    def png(self, states, sent_to, current_box):
        """Paint each box's state and the arrows ``current_box → sent_to``; return PNG bytes
        (a window around the current box when the graph is tall)."""
        self.states.set_facecolors([STATE_COLOURS[s] for s in states])
        segments = []
        if current_box is not None:
            x, y, w, _ = self.rects[current_box]
            for b in sent_to:
                cx, cy, cw, ch = self.rects[b]
                segments.append([(x + w / 2, y), (cx + cw / 2, cy + ch)])
        self.sent.set_segments(segments)
        canvas = self.figure.canvas
        canvas.restore_region(self.background)
        self.figure.draw_artist(self.states)
        self.figure.draw_artist(self.sent)
        pixels = np.asarray(canvas.buffer_rgba())
        if pixels.shape[0] > WINDOW_PX:
            centre = 0 if current_box is None else int(self.ax.transData.transform(
                (0, self.rects[current_box][1]))[1])
            centre = pixels.shape[0] - centre  # display y grows upwards, rows downwards
            top = min(max(centre - WINDOW_PX // 2, 0), pixels.shape[0] - WINDOW_PX)
            pixels = pixels[top:top + WINDOW_PX]
        return _png(pixels)


def _png(pixels):
    """RGBA rows as PNG bytes (``_render.png_bytes`` for a cropped buffer)."""
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


def _fit(label, width_px):
    """Shorten a label to what fits in a box ``width_px`` wide (about 5 px per character)."""
    limit = max(4, int(width_px / 5.2))
    return label if len(label) <= limit else label[:limit - 1] + "…"


class BackwardStepper(W.VBox):
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
        self.canvas = Canvas(ncols=2, width=4.6, height=2.3)
        self.left_panel = TensorPanel(self.canvas, 0, title="gradient arriving")
        self.right_panel = TensorPanel(self.canvas, 1, title="sent on / leaf .grad")
        self._layout_key = None

        groups = self.trace.groups
        self.title = W.HTML()
        self.legend = W.HTML(legend_html())
        self.prev_button = W.Button(description="◀ prev", layout=W.Layout(width="80px"),
                                    tooltip="previous step")
        self.next_button = W.Button(description="next ▶", layout=W.Layout(width="80px"),
                                    tooltip="run the next node")
        self.slider = W.IntSlider(min=0, max=len(self.trace.events), value=0, description="step",
                                  continuous_update=True, layout=W.Layout(width="330px"))
        self.expand = W.Dropdown(options=[COLLAPSED] + groups + ([ALL] if groups else []),
                                 value=COLLAPSED, description="expand", disabled=not groups,
                                 layout=W.Layout(width="200px"))
        self.position = W.Label()
        self.image = W.Image(format="png", layout=W.Layout(width=f"{WIDTH_PX}px"))
        self.caption = W.HTML(layout=W.Layout(width="340px"))
        self.detail = W.Image(format="png", layout=W.Layout(width="340px"))
        self.description = W.HTML(layout=W.Layout(width="340px", max_height="300px",
                                                  overflow="auto"))
        self.prev_button.on_click(lambda _: self.step(-1))
        self.next_button.on_click(lambda _: self.step(+1))
        self.slider.observe(lambda change: self._draw(), names="value")
        self.expand.observe(lambda change: self._draw(), names="value")
        controls = W.HBox([self.prev_button, self.slider, self.next_button, self.expand,
                           self.position])
        right = W.VBox([self.caption, self.detail, self.description])
        super().__init__([self.title, self.legend, controls, W.HBox([self.image, right])])
        self._draw()

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

    def step(self, delta):
        """Move ``delta`` steps forward (or back), staying in range."""
        self.slider.value = min(max(self.slider.value + delta, 0), self.slider.max)

    @property
    def expanded(self):
        value = self.expand.value
        return ("*",) if value == ALL else (() if value == COLLAPSED else (value,))

    # -- drawing ------------------------------------------------------------------------
    def _draw(self):
        trace = self.trace
        if self._layout_key != self.expanded:
            self.graph_layout = layout(trace, self.expanded)
            self.picture.draw_layout(self.graph_layout)
            self._layout_key = self.expanded
        step = self.slider.value
        states, event = trace.state(step)
        current_box = sent_to = None
        if event is not None:
            current_box = self.graph_layout.box_of[event.node]
            sent_to = {self.graph_layout.box_of[c] for c, g in event.sent
                       if c is not None and g is not None} - {current_box}
        self.image.value = self.picture.png(box_states(self.graph_layout, states), sent_to or (),
                                            current_box)
        self.title.value = (f"<b>BackwardStepper</b> — {len(trace.nodes)} graph nodes, "
                            f"{len(trace.node_events())} run by backward; "
                            f"{len(self.graph_layout.boxes)} boxes drawn")
        self.position.value = f"step {step} / {len(trace.events)}"
        self._draw_detail(event)
        self.description.value = (f"<pre style='{STYLE}; margin:0; white-space:pre-wrap'>"
                                  f"{html.escape(chr(10).join(trace.describe(step)))}</pre>")

    def _draw_detail(self, event):
        if event is None:
            self.left_panel.message("backward starts at the top:\nd output / d output = 1")
            self.right_panel.message("")
            self.caption.value = f"<div style='{STYLE}'>step 0: nothing has run yet</div>"
        else:
            node = self.trace.nodes[event.node]
            left = event.arriving[0]
            scale = self._show(self.left_panel, left, "no gradient")
            text = f"left: {'hook gets' if event.kind == 'tensor_hook' else 'arriving'} |max| {scale:.3g}"
            if event.kind == "tensor_hook":
                self.right_panel.message("the hook only watches:\nthe gradient goes on unchanged")
            elif node.is_leaf:
                text += f"; right: {node.tensor}.grad after, |max| " \
                        f"{self._show(self.right_panel, event.grad_after, 'None'):.3g}"
            else:
                sent = [(k, c, g) for k, (c, g) in enumerate(event.sent) if g is not None]
                if sent:
                    k, child, record = sent[0]
                    scale = self._show(self.right_panel, record, "")
                    target = "nothing" if child is None else self.trace.nodes[child].label
                    text += f"; right: grad_input[{k}] → {html.escape(target)}, |max| {scale:.3g}"
                else:
                    self.right_panel.message("sends no gradient")
            self.caption.value = f"<div style='{STYLE}'>{text}</div>"
        self.detail.value = self.canvas.png()

    @staticmethod
    def _show(panel, record, empty):
        if record is None:
            panel.message(empty)
            return 0.0
        return panel.show(record.values)

