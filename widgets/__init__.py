"""edutorch widgets: ipywidgets + matplotlib views of a live edutorch model.

Each widget is a pure-Python *model* (computes what to show, over the public
engine API; unit-tested without ipywidgets) plus an ipywidgets/matplotlib
*view* bound to it. Install with ``pip install -e .[widgets]``.
"""
