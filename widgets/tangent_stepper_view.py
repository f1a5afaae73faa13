"""The ipywidgets view of ``TangentTrace``: step through a forward pass on dual numbers.

Layout (``BackwardStepper``'s, with the arrows the other way)::

    title, colour legend
    [◀ prev] [slider: step] [next ▶]                     "step 3 / 6"
    [ the fx graph, inputs on top, this step coloured ]  [ primal of the node  ]
                                                         [ tangent of the node ]
    [ what happened at this step (text): tangents arriving, primal, tangent, rule ]

The graph is drawn by ``BackwardStepper``'s ``GraphPicture``; the red arrows
go from the node that just ran to the nodes its tangent goes on to.
"""
from __future__ import annotations

import html

from ._render import CSS_DPI, Canvas, TensorPanel, html_style
from .backward_stepper import box_states
from .backward_stepper_view import (DETAIL_PX, FILL, SENT, STATE_COLOURS, GraphPicture,
                                    StepperView, _largest, _split, colour_chip)
from .tangent_stepper import TangentTrace, consumers, layout


def legend_html(style):
    """The colour key of the tangent picture."""
    boxes = [f"<span style='background:{FILL['leaf']};padding:0 4px'>input (make_dual)</span>",
             f"<span style='background:{FILL['node']};padding:0 4px'>op</span>",
             "<b>bold</b> border: its tangent goes to 2+ nodes"]
    states = [colour_chip(STATE_COLOURS["receiving"], "an input is ready, waiting"),
              colour_chip(STATE_COLOURS["current"], "running now"),
              colour_chip(STATE_COLOURS["done"], "done: primal and tangent known"),
              f"<span style='color:{SENT}'>━</span> where its tangent goes"]
    return f"<div style='{style}'>{' · '.join(boxes)}<br>{' · '.join(states)}</div>"


class TangentStepper(StepperView):
    """Step through ``fn(*primals)`` on dual numbers: each node's primal and tangent.

    >>> x = torch.tensor([1.0, 2.0]); v = torch.tensor([1.0, 0.0])
    >>> stepper = TangentStepper(lambda x: (x * x).sin().sum(), x, v)   # runs fn once
    >>> stepper.next_button.click()                                      # or the slider

    The last node's tangent is ``torch.func.jvp(fn, primals, tangents)[1]``.
    """

    def __init__(self, fn, primals, tangents):
        self.trace = TangentTrace(fn, primals, tangents)
        self.graph_layout = layout(self.trace)
        self.picture = GraphPicture()
        self.picture.draw_layout(self.graph_layout)
        self.style = html_style()
        self.canvas = Canvas(ncols=1, width=DETAIL_PX / CSS_DPI, height=4.6)
        self.canvas.slots.append(_split(self.canvas))
        self.primal_panel = TensorPanel(self.canvas, 0, title="primal (the value)")
        self.tangent_panel = TensorPanel(self.canvas, 1, title="tangent (its derivative along v)")

        self._build(len(self.trace.events), legend_html(self.style))

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        return f"TangentStepper({len(self.trace.nodes)} nodes, {len(self.trace.events)} steps)"

    def _title(self):
        return (f"<b>TangentStepper</b> — {len(self.trace.nodes)} nodes run once, on "
                "dual numbers: each computes its value and its tangent together")

    def _render_step(self, step):
        """``(graph PNG, caption HTML, primal/tangent PNG)`` of ``step``, drawn now."""
        trace = self.trace
        states, event = trace.state(step)
        current = None if event is None else event.node
        sent_to = () if event is None or event.tangent is None else consumers(trace, current)
        graph = self.picture.png(box_states(self.graph_layout, states), sent_to, current)
        return (graph, *self._render_detail(event))

    def _render_detail(self, event):
        """``(caption HTML, PNG)``: the node's primal (top) and tangent (bottom), each on its
        own colour scale."""
        if event is None:
            self.primal_panel.message("the inputs get their\ntangents from make_dual")
            self.tangent_panel.message("")
            return (f"<div style='{self.style}'>step 0: nothing has run yet</div>",
                    self.canvas.png())
        node = self.trace.nodes[event.node]
        text = f"node {html.escape(node.what)}: primal |max| {_largest(event.primal):.3g}"
        self.primal_panel.show(event.primal.values)
        if event.tangent is None:
            self.tangent_panel.message("None: no tangent reached\nthis node (zero)")
        else:
            self.tangent_panel.show(event.tangent.values)
            text += f", tangent |max| {_largest(event.tangent):.3g}"
        return (f"<div style='{self.style}'>{text} (each picture on its own scale, "
                "white = 0)</div>", self.canvas.png())
