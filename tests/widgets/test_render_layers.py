"""widgets._render.Canvas: frame parts, the axes whose range follows the data."""
import numpy as np

from widgets._render import Canvas


def a_plot():
    """A canvas with one plot: a line (slow: new data only) and its x axis as a frame part."""
    canvas = Canvas(ncols=1, width=4.0, height=2.8)
    ax = canvas.figure.add_axes(canvas.slots[0])
    ax.set_title("a plot")
    ax.set_xlabel("x")
    line, = ax.plot(np.arange(10), np.arange(10) ** 2)
    canvas.frame_part([ax.xaxis], key=ax.get_xlim)
    canvas.animate(line, slow=True)
    canvas.panels.append(type("Panel", (), {"layout": lambda self: "plot"})())
    return canvas, ax, line


def full_render(canvas):
    canvas.invalidate()
    return canvas.png()


def test_a_new_range_redraws_the_axis_not_the_frame(monkeypatch):
    canvas, ax, line = a_plot()
    canvas.png()
    full_draws = []
    monkeypatch.setattr(canvas.figure.canvas, "draw", lambda: full_draws.append(1))
    ax.set_xlim(0, 100)  # new data with a new range
    line.set_data(np.arange(100), np.arange(100) ** 0.5)
    canvas.new_data()
    picture = canvas.png()
    assert not full_draws  # the frame was pasted; only the axis was drawn again
    monkeypatch.undo()
    assert picture == full_render(canvas)  # pixel for pixel what drawing it all gives


def test_an_unchanged_range_pastes_the_kept_axis(monkeypatch):
    canvas, ax, line = a_plot()
    first = canvas.png()
    drawn = []
    original = type(ax.xaxis).draw
    monkeypatch.setattr(type(ax.xaxis), "draw", lambda self, *a: drawn.append(self)
                        or original(self, *a))
    line.set_ydata(np.arange(10) * 3.0)  # new data, same range
    canvas.new_data()
    moved = canvas.png()
    assert ax.xaxis not in drawn and moved != first
    ax.set_xlim(-5, 5)
    canvas.png()
    assert ax.xaxis in drawn
