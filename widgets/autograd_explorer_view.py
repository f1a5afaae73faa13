"""View of the autograd-graph widget: ``AutogradExplorer``.

Pick a function of one variable and move ``x``: for each ``x`` the widget
builds ``y = f(x)``, calls ``y.backward()`` and draws, on the left, the curve
with its tangent (whose slope is ``x.grad``) and, on the right, the backward
graph that ``backward`` walked (``autograd_graph.backward_graph``).

Changing the function redraws everything; moving ``x`` only runs backward and
redraws the tangent on top of a cached background (matplotlib "blitting"),
so the slider stays live.  The figure is shown as PNG bytes in a
``widgets.Image`` (see ``_render.py`` for why).
"""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ._render import png_bytes
from .autograd_graph import backward_graph

#: the functions offered by default, written with tensor methods so any library works
FUNCTIONS = {
    "x · tanh(2x)": lambda x: (2 * x).tanh() * x,
    "x³ − 3x": lambda x: x**3 - 3 * x,
    "sigmoid(x) + 0.1 x²": lambda x: x.sigmoid() + 0.1 * x**2,
    "exp(−x²)": lambda x: (-(x * x)).exp(),
}


def draw_graph(ax, nodes, edges, title="backward graph of y (y.grad_fn at the top)"):
    """Boxes for the nodes, arrows for the edges; leaves (AccumulateGrad) in orange."""
    where = [((n.column + 1) / (n.width + 1), -n.level) for n in nodes]
    drawn = []
    for e in edges:
        start, end = where[e.parent], where[e.child]
        skips_levels = start[1] - end[1] > 1  # bend it around the nodes in between
        repeats = drawn.count((e.parent, e.child))  # x * x: two edges to one node, bend apart
        drawn.append((e.parent, e.child))
        bend = 0.5 if skips_levels else 0.35 * repeats
        ax.annotate("", xy=end, xytext=start,
                    arrowprops=dict(arrowstyle="->", color="gray", shrinkA=12, shrinkB=12,
                                    connectionstyle=f"arc3,rad={bend}"))
    for node, (px, py) in zip(nodes, where):
        label = node.name + ("\n(writes x.grad)" if node.is_leaf else "")
        ax.text(px, py, label, ha="center", va="center", fontsize=8,
                bbox=dict(boxstyle="round", fc="#ffd6a5" if node.is_leaf else "#caf0f8"))
    levels = 1 + max(n.level for n in nodes)
    ax.set_xlim(0, 1)
    ax.set_ylim(-levels + 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(title, fontsize=9)


class AutogradExplorer(widgets.VBox):
    """A dropdown of functions and a slider for ``x``, bound to one figure.

    ``torch`` is the library to run: ``edutorch``, or real PyTorch (the widget
    uses only the API the two share); ``functions`` maps names to
    ``f(x_tensor) -> y_tensor``.
    """

    def __init__(self, torch, functions=None, x=0.5, x_range=(-2.0, 2.0)):
        self.torch = torch
        self.functions = dict(functions or FUNCTIONS)
        self.x_range = x_range
        self.function = widgets.Dropdown(options=list(self.functions), description="f(x)")
        self.x = widgets.FloatSlider(value=x, min=x_range[0], max=x_range[1], step=0.05, description="x")
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="720px"))
        self.summary = widgets.Label()
        self.figure = Figure(figsize=(9, 3.4), dpi=80)  # 720 × 272 pixels
        FigureCanvasAgg(self.figure)
        super().__init__([widgets.HBox([self.function, self.x]), self.summary, self.image])
        self.function.observe(self.draw_function, names="value")
        self.x.observe(self.move_x, names="value")
        self.draw_function()

    @property
    def f(self):
        return self.functions[self.function.value]

    def draw_function(self, change=None):
        """The static picture: the curve ``y = f(x)`` and the backward graph of ``f``."""
        torch = self.torch
        lo, hi = self.x_range[0] - 0.5, self.x_range[1] + 0.5
        xs = torch.linspace(lo, hi, 201)
        with torch.no_grad():  # the curve itself needs no graph
            ys = self.f(xs).numpy()
        self.figure.clear()
        left, right = self.figure.subplots(1, 2)
        left.plot(xs.numpy(), ys, color="#023e8a", label="y = f(x)")
        self.tangent = left.plot([], [], "--", color="#e85d04", label="tangent: slope x.grad",
                                 animated=True)[0]
        self.point = left.plot([], [], "o", color="#e85d04", animated=True)[0]
        left.set_xlim(lo, hi)
        left.set_ylim(ys.min() - 0.5, ys.max() + 0.5)
        left.set_xlabel("x")
        left.legend(fontsize=8, loc="upper left")
        left.set_title(self.function.value, fontsize=9)
        x = torch.tensor(self.x.value, requires_grad=True)
        self.nodes, self.edges = backward_graph(self.f(x).grad_fn)
        draw_graph(right, self.nodes, self.edges)
        self.figure.tight_layout()
        self.figure.canvas.draw()
        self.background = self.figure.canvas.copy_from_bbox(self.figure.bbox)
        self.move_x()

    def move_x(self, change=None):
        """Run backward at the slider's ``x`` and draw the tangent whose slope is ``x.grad``."""
        x0 = self.x.value
        x = self.torch.tensor(x0, requires_grad=True)
        y = self.f(x)
        y.backward()
        self.y, self.slope = y.item(), x.grad.item()
        xs = np.array([self.x_range[0] - 0.5, self.x_range[1] + 0.5])
        self.tangent.set_data(xs, self.y + self.slope * (xs - x0))
        self.point.set_data([x0], [self.y])
        canvas = self.figure.canvas
        canvas.restore_region(self.background)
        for artist in (self.tangent, self.point):
            artist.axes.draw_artist(artist)
        self.image.value = png_bytes(canvas)
        self.summary.value = f"x = {x0:.2f},  y = {self.y:.4f},  x.grad = dy/dx = {self.slope:.4f}"

    def __repr__(self):  # a short text form for the notebook file (instead of the PNG bytes)
        return f"AutogradExplorer(f={self.function.value!r}, x={self.x.value})"
