"""edutorch widgets: ipywidgets + matplotlib views of a live edutorch model.

Each widget is a pure-Python *model* (computes what to show, over the public
engine API; unit-tested without ipywidgets) plus an ipywidgets/matplotlib
*view* bound to it. Install with ``pip install -e .[widgets]``.

====================  ======================  =====================================
view                  model                   shows
====================  ======================  =====================================
``ParameterTree``     ``ParameterTreeModel``  ``named_modules`` tree, parameters,
                                              buffers, values and ``.grad``;
                                              derived (reparametrized) tensors
                                              next to their stored originals
``HookMonitor``       ``HookRecorder``        forward/backward hook calls, in order,
                                              one event at a time
``PruneExplorer``     ``PruneExplorerModel``  ``nn.utils.prune``: masks, sparsity,
                                              accuracy vs sparsity, apply/undo
``AutogradExplorer``  ``backward_graph``,     ``y = f(x)``, its tangent ``x.grad``
                      ``GroupedGraph``        and the ``grad_fn`` graph (big graphs
                                              collapsed into boxes you can expand)
``TrainingStepper``   TrainingStepperModel    the training loop one line at a time:
                                              ``.grad``, updates Δ, optimizer state,
                                              loss/accuracy curves
``BackwardStepper``   ``BackwardTrace``       ``backward`` node by node, in the
                                              engine's order, grouped by module
====================  ======================  =====================================

- ``GradientInspector`` (model ``GradientInspectorModel``): every parameter's
  gradient norm and log10|g| histogram, what ``clip_grad_norm_`` /
  ``clip_grad_value_`` do to them, and their norms across training steps;
- ``TrainEvalExplorer`` (model ``TrainEvalExplorerModel``): one input in
  ``train()`` and ``eval()`` side by side, what Dropout zeroed, BatchNorm's
  batch vs running statistics as batches are fed, any module that checks
  ``self.training``;
- ``TangentStepper`` (model ``TangentTrace``): forward-mode AD one op at a time,
  each node's primal and tangent on dual numbers (``torch.fx`` + ``forward_ad``),
  as ``BackwardStepper`` does gradients backward;
- ``ProfilerView`` (model ``ProfilerSummary``): a bar chart of a profiler's
  ``key_averages()`` (edutorch's or PyTorch's), the top rows by a chosen sort
  key (bars drawn by the browser, as HTML), with PyTorch's table below it.

The models import neither ipywidgets nor matplotlib; the views render every
figure to PNG bytes shown in a ``widgets.Image`` (works in the browser, under
nbval and in headless tests), except ProfilerView's bars, which are HTML. All of them also accept real ``torch`` modules.

Projectors: figures have two pixels per CSS pixel and 10-12 pt text;
``widgets.set_text_scale(1.5)`` makes the text of the widgets created
afterwards 1.5 times larger (``set_text_scale()`` goes back). A widget's
notebook output also stores its picture as ``image/png`` (a widget with
several pictures stores them joined into one), so a notebook opened before
running it (JupyterLab does not draw widgets in untrusted notebooks) still
shows the figure.
"""
from ._render import set_text_scale, text_scale
from .autograd_graph import GraphEdge, GraphNode, backward_graph
from .backward_stepper import BackwardEvent, BackwardTrace, ModuleScopes
from .graph_groups import GroupedGraph
from .hook_monitor import HookEvent, HookRecorder, TensorRecord
from .parameter_tree import ModuleRow, ParameterTreeModel, TensorRow
from .prune_explorer import GLOBAL, PruneExplorerModel
from .gradient_inspector import GradientInspectorModel
from .train_eval_explorer import TrainEvalExplorerModel
from .training_stepper import StageResult, TrainingStepperModel
from .profiler_summary import ProfileRow, ProfilerSummary
from .autograd_explorer_view import AutogradExplorer
from .backward_stepper_view import BackwardStepper
from .hook_monitor_view import HookMonitor
from .parameter_tree_view import ParameterTree
from .prune_explorer_view import PruneExplorer
from .gradient_inspector_view import GradientInspector
from .train_eval_explorer_view import TrainEvalExplorer
from .training_stepper_view import TrainingStepper
from .profiler_view import ProfilerView
from .tangent_stepper import TangentEvent, TangentNode, TangentTrace
from .tangent_stepper_view import TangentStepper

__all__ = [
    "ParameterTree", "ParameterTreeModel", "ModuleRow", "TensorRow",
    "HookMonitor", "HookRecorder", "HookEvent", "TensorRecord",
    "PruneExplorer", "PruneExplorerModel", "GLOBAL",
    "AutogradExplorer", "backward_graph", "GraphNode", "GraphEdge", "GroupedGraph",
    "set_text_scale", "text_scale",
    "GradientInspector", "GradientInspectorModel",
    "TrainEvalExplorer", "TrainEvalExplorerModel",
    "BackwardStepper", "BackwardTrace", "BackwardEvent", "ModuleScopes",
    "TrainingStepper", "TrainingStepperModel", "StageResult",
    "ProfilerView", "ProfilerSummary", "ProfileRow",
    "TangentStepper", "TangentTrace", "TangentNode", "TangentEvent",
]
