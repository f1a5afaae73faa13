"""The same views work on real torch modules: they only use the API both share."""
import warnings

from widgets import GLOBAL, HookMonitor, ParameterTree, PruneExplorer
from widget_helpers import is_png, mlp


def test_parameter_tree_on_torch(real_torch):
    model = mlp(real_torch.nn)
    model(real_torch.randn(3, 20)).sum().backward()
    view = ParameterTree(model)
    view.select.value = "2.weight"
    assert is_png(view.image.value) and ".grad: |max|" in view.caption.value


def test_hook_monitor_on_torch(real_torch):
    model = mlp(real_torch.nn)
    with HookMonitor(model) as monitor, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        monitor.run(real_torch.randn(3, 20))
        monitor.next_button.click()
        assert monitor.current().kind == "forward" and is_png(monitor.image.value)
    assert len(model[0]._forward_hooks) == 0


def test_prune_explorer_on_torch(real_torch):
    model = mlp(real_torch.nn)
    data = (real_torch.randn(16, 20), real_torch.randint(0, 4, (16,)))
    view = PruneExplorer(model, data=data)
    view.layer.value = GLOBAL
    view.amount.value = 0.7
    view.apply_button.click()
    assert "0.weight_orig" in view.table.value
    view.undo_button.click()
    assert not real_torch.nn.utils.prune.is_pruned(model)


def test_parameter_tree_shows_parametrized_weights_on_torch(real_torch):
    from torch.nn.utils import parametrizations

    model = real_torch.nn.Sequential(parametrizations.orthogonal(real_torch.nn.Linear(4, 4)))
    view = ParameterTree(model)
    view.select.value = "0.weight"
    assert is_png(view.image.value) and "(derived)" in view.caption.value
    assert "0.parametrizations.weight.original" in view.caption.value
