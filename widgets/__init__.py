"""edutorch widgets: ipywidgets + matplotlib views of a live edutorch model.

Each widget is a pure-Python *model* (computes what to show, over the public
engine API; unit-tested without ipywidgets) plus an ipywidgets/matplotlib
*view* bound to it. Install with ``pip install -e .[widgets]``.

====================  ======================  =====================================
view                  model                   shows
====================  ======================  =====================================
``ParameterTree``     ``ParameterTreeModel``  ``named_modules`` tree, parameters,
                                              buffers, values and ``.grad``
``HookMonitor``       ``HookRecorder``        forward/backward hook calls, in order,
                                              one event at a time
``PruneExplorer``     ``PruneExplorerModel``  ``nn.utils.prune``: masks, sparsity,
                                              accuracy vs sparsity, apply/undo
``AutogradExplorer``  ``backward_graph``,     ``y = f(x)``, its tangent ``x.grad``
                      ``GroupedGraph``        and the ``grad_fn`` graph (big graphs
                                              collapsed into boxes you can expand)
====================  ======================  =====================================

The models import neither ipywidgets nor matplotlib; the views render every
figure to PNG bytes shown in a ``widgets.Image`` (works in the browser, under
nbval and in headless tests). All of them also accept real ``torch`` modules.

Projectors: figures have two pixels per CSS pixel and 10-12 pt text;
``widgets.set_text_scale(1.5)`` makes the text of the widgets created
afterwards 1.5 times larger (``set_text_scale()`` goes back). A widget's
notebook output also stores its picture as ``image/png``, so a notebook
opened before running it (JupyterLab does not draw widgets in untrusted
notebooks) still shows the figure.
"""
from ._render import set_text_scale, text_scale
from .autograd_graph import GraphEdge, GraphNode, backward_graph
from .graph_groups import GroupedGraph
from .hook_monitor import HookEvent, HookRecorder, TensorRecord
from .parameter_tree import ModuleRow, ParameterTreeModel, TensorRow
from .prune_explorer import GLOBAL, PruneExplorerModel
from .autograd_explorer_view import AutogradExplorer
from .hook_monitor_view import HookMonitor
from .parameter_tree_view import ParameterTree
from .prune_explorer_view import PruneExplorer

__all__ = [
    "ParameterTree", "ParameterTreeModel", "ModuleRow", "TensorRow",
    "HookMonitor", "HookRecorder", "HookEvent", "TensorRecord",
    "PruneExplorer", "PruneExplorerModel", "GLOBAL",
    "AutogradExplorer", "backward_graph", "GraphNode", "GraphEdge", "GroupedGraph",
    "set_text_scale", "text_scale",
]
