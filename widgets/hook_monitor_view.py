"""The ipywidgets view of ``HookRecorder``: step through hook calls one by one.

Layout::

    title
    [◀ prev] [slider: event #] [next ▶] [clear]   "event #3 (of #0–#19)"
    [ picture of the event's tensor ]  [ timeline of all events ]
    [ description: module, hook kind, shapes and statistics       ]
"""
from __future__ import annotations

import html
import warnings

import ipywidgets as W

from ._render import Canvas, PictureFallback, RenderAhead, TensorPanel, html_style
from .hook_monitor import HookRecorder

#: a <pre> in JupyterLab breaks lines anywhere ("i\ns ready"): wrap at spaces only
WRAP = "; white-space: pre-wrap; word-break: normal; overflow-wrap: break-word; margin: 0"
KIND_COLOURS = {"forward_pre": "#577590", "forward": "#277da1",
                "backward_pre": "#f3722c", "backward": "#c0392b"}
KEEP = 8  # events whose (picture, caption) the view keeps, rendered ahead or shown


class HookMonitor(PictureFallback, W.VBox):
    """Record forward/backward hook calls of a module and step through them.

    >>> monitor = HookMonitor(model)          # hooks on every leaf module
    >>> monitor.run(x)                         # one forward + backward, then show
    >>> monitor.slider.value = 5               # or the prev/next buttons
    >>> monitor.detach()                       # remove every hook

    After running the model yourself, call ``monitor.refresh()``.
    """

    def __init__(self, module, modules=None):
        self.recorder = HookRecorder(module, modules)
        self.style = html_style()  # the text scale when the widget was built
        self.canvas = Canvas(ncols=1, width=4.4, height=3.2)
        self.panel = TensorPanel(self.canvas, 0, title="the tensor this hook received")
        self.rendered = {}  # event index -> (the event, its PNG, its caption): see _rendered
        self.ahead = RenderAhead(delay_s=0.3)  # the neighbour events, while nobody waits

        self.title = W.HTML()
        self.prev_button = W.Button(description="◀ prev", layout=W.Layout(width="80px"))
        self.next_button = W.Button(description="next ▶", layout=W.Layout(width="80px"))
        self.clear_button = W.Button(description="clear", icon="trash",
                                     layout=W.Layout(width="80px"))
        self.slider = W.IntSlider(min=0, max=0, value=0, description="event",
                                  continuous_update=True, layout=W.Layout(width="360px"))
        self.position = W.Label()
        self.caption = W.HTML(layout=W.Layout(width=self.canvas.css_width))
        self.image = W.Image(format="png", layout=W.Layout(width=self.canvas.css_width))
        self.timeline = W.HTML(layout=W.Layout(width="480px", max_height="340px",
                                               overflow="auto"))
        self.description = W.HTML(layout=W.Layout(width="900px"))

        self.prev_button.on_click(lambda _: self.step(-1))
        self.next_button.on_click(lambda _: self.step(+1))
        self.clear_button.on_click(lambda _: self.clear())
        self.slider.observe(lambda change: self._draw(), names="value")
        controls = W.HBox([self.prev_button, self.slider, self.next_button, self.clear_button,
                           self.position])
        super().__init__([self.title, controls,
                          W.HBox([W.VBox([self.caption, self.image]), self.timeline]),
                          self.description])
        self.refresh()

    def fallback_text(self):
        """Title, the event shown and its caption (with the colour scale)."""
        return [self.title.value, self.position.value, self.caption.value]

    def __repr__(self):  # stable text for notebooks (nbval compares text/plain)
        return (f"HookMonitor({type(self.recorder.module).__name__}, "
                f"{len(self.recorder.module_names)} modules watched)")

    # -- the recorder's life cycle ----------------------------------------------------
    @property
    def events(self):
        return self.recorder.events

    def run(self, *inputs, loss_fn=None, target=None):
        """Clear, run one forward and one backward pass, show the first event; return the loss.

        The loss is ``loss_fn(output, target)`` or, without ``loss_fn``,
        ``output.sum()``. Gradients accumulate into ``.grad`` as usual.
        """
        self.recorder.clear()
        output = self.recorder.module(*inputs)
        loss = loss_fn(output, target) if loss_fn is not None else output.sum()
        with warnings.catch_warnings():
            # The first layer's input never requires grad, so PyTorch (and edutorch) warn
            # that its full backward hook sees only grad_output; the monitor shows exactly
            # that ("falls back to grad_output"), so the warning would only be noise here.
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            loss.backward()
        self.refresh(0)
        return loss

    def refresh(self, index=None):
        """Show the events recorded so far (at ``index``, default: keep the position)."""
        count = len(self.events)
        self.slider.max = max(count - 1, 0)
        if index is not None:
            self.slider.value = min(index, self.slider.max)
        self._draw()

    def clear(self):
        """Forget the recorded events (hooks stay attached)."""
        self.recorder.clear()
        self.refresh(0)

    def detach(self):
        """Remove every hook (the view keeps showing what was recorded; ``attach()`` undoes it)."""
        self.recorder.detach()
        self._draw()

    def attach(self):
        """Register the hooks again after ``detach()`` (recording resumes)."""
        self.recorder.attach()
        self._draw()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.detach()
        return False

    def step(self, delta):
        """Move ``delta`` events forward (or backward), staying in range."""
        self.slider.value = min(max(self.slider.value + delta, 0), self.slider.max)

    # -- drawing ------------------------------------------------------------------------
    def current(self):
        """The event under the slider, or ``None`` when nothing was recorded."""
        return self.events[self.slider.value] if self.events else None

    def _draw(self):
        event = self.current()
        state = "attached" if self.recorder.handles else "detached"
        self.title.value = (
            f"<b>HookMonitor</b> — hooks {state} on {len(self.recorder.module_names)} modules "
            f"of {html.escape(type(self.recorder.module).__name__)}: "
            f"{html.escape(', '.join(self.recorder.module_names) or '(root)')}")
        attached = bool(self.recorder.handles)
        self.clear_button.disabled = not attached  # clearing a detached monitor leaves nothing
        self.clear_button.tooltip = ("forget the recorded events" if attached else
                                     "hooks detached: monitor.attach() to record again")
        if event is None:
            self.position.value = ("no events yet: run the model (or monitor.run(x))" if attached
                                   else "hooks detached: monitor.attach() to record again")
            self.panel.message("no events recorded yet")
            self.image.value = self.canvas.png()
            self.caption.value = self.timeline.value = self.description.value = ""
        else:
            # the slider, the timeline and event.index count from 0: so does this label
            self.position.value = f"event #{event.index} (of #0–#{len(self.events) - 1})" + (
                f" ({self.recorder.dropped} later calls not recorded: clear() to record again)"
                if self.recorder.dropped else "")
            self.image.value, self.caption.value = self._rendered(event)
            self.timeline.value = self._timeline(event.index)
            self.description.value = (f"<pre style='{self.style}{WRAP}'>"
                                      f"{html.escape(event.describe())}</pre>")
            self.ahead.schedule(lambda i=i: self._render_ahead(i)
                                for i in (event.index + 1, event.index - 1))

    def _rendered(self, event):
        """``(PNG, caption HTML)`` of ``event``: rendered once and kept (the last ``KEEP``), so
        an event rendered ahead while the controls rested (the next and the previous one)
        is shown at once. Kept with the event itself: after ``clear()`` and a new run, index
        3 is another event."""
        kept = self.rendered.get(event.index)
        if kept is None or kept[0] is not event:
            if len(self.rendered) >= KEEP:
                del self.rendered[next(iter(self.rendered))]  # the oldest
            self.rendered[event.index] = kept = (event, *self._render(event))
        return kept[1:]

    def _render_ahead(self, index):
        """Render event ``index`` into ``rendered`` if it (still) exists."""
        if 0 <= index < len(self.events):
            self._rendered(self.events[index])

    def _render(self, event):
        """The picture of the tensor ``event`` shows and its caption (the colour scale)."""
        shown = event.primary()
        heading = f"#{event.index} {event.kind} '{html.escape(event.module_name)}'"
        if shown is None:
            self.panel.message("no tensor to show (all None)")
            caption = f"<div style='{self.style}'><b>{heading}</b></div>"
        else:
            scale = self.panel.show(shown.values)
            caption = (f"<div style='{self.style}'><b>{heading}</b>: {shown.label} "
                       f"{shown.shape}, |max| = {scale:.3g}</div>")
        return self.canvas.png(), caption

    def _timeline(self, current):
        """Every event as one line; the current one highlighted."""
        lines = []
        for e in self.events:
            colour = KIND_COLOURS[e.kind]
            mark = "background:#ffe8a3;" if e.index == current else ""
            shown = e.primary()
            shape = "" if shown is None else f" {shown.label} {shown.shape}"
            lines.append(
                f"<div style='{mark}'>{e.index:>3} <span style='color:{colour}'>"
                f"{e.kind:<12}</span> {html.escape(e.module_name)} "
                f"({html.escape(e.class_name)}){html.escape(shape)}</div>")
        return f"<div style='{self.style}; white-space:pre'>{''.join(lines)}</div>"
