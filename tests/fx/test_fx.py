"""``torch.fx``: symbolic tracing, the graph API, generated code and transformations.

Models are written once as ``make_<name>(lib)`` so the same source is traced by
edutorch and (parity tests) by real PyTorch: node ops, names, targets, args,
``str(graph)``, ``print_tabular`` and ``gm.code`` must agree, up to the name of
the library in function paths (``torch.relu`` vs ``edutorch.relu``).
"""
import copy
import operator
import re
import sys

import numpy as np
import pytest

import edutorch as et
from edutorch import fx
from edutorch.fx.proxy import TraceError

REASON = "real PyTorch not installed: parity test skipped"


# -- the same models for both libraries -----------------------------------------------------
def make_mlp(lib):
    class MLP(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(4, 8)
            self.fc2 = lib.nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(lib.relu(self.fc1(x)))

    return MLP()


def make_everything(lib):
    """Every op kind: placeholder defaults, get_attr (parameter, buffer twice), call_method with
    kwargs, nested Sequential, operators both ways round, attribute, indexing, dict/tuple output."""
    nn = lib.nn

    class Everything(nn.Module):
        def __init__(self):
            super().__init__()
            self.param = nn.Parameter(lib.ones(3, 4))
            self.linear = nn.Linear(4, 5)
            self.seq = nn.Sequential(nn.Linear(5, 5), nn.ReLU())
            self.register_buffer("buf", lib.ones(5))

        def forward(self, x, y=None, scale=2.0):
            z = self.linear(x + self.param).clamp(min=0.0, max=1.0)
            z = self.seq(z) * self.buf
            z = lib.relu(z) + lib.softmax(z, dim=-1) * self.buf
            w = z.shape[0]
            s = z.sum(dim=-1, keepdim=True)[0]
            z = 2 * z - z / 3 + (-z) ** 2
            return {"out": lib.cat([z, z.t().t()], 1) - 1, "s": (s, w, x.size(1), abs(z))}

    return Everything()


def make_submodule_tree(lib):
    """A user module inside a user module: traced through; a parameter used twice, one node."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.scale = nn.Parameter(lib.ones(4))

        def forward(self, x):
            return self.lin(x) * self.scale + self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])
            self.act = nn.Tanh()

        def forward(self, x):
            for block in self.blocks:
                x = self.act(block(x))
            return x.mean()

    return Net()


def make_conv_bn(lib):
    nn = lib.nn

    class ConvBN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(2, 4, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 3, 3, bias=False)
            self.bn2 = nn.BatchNorm2d(3)

        def forward(self, x):
            x = lib.relu(self.bn1(self.conv1(x)))
            return self.bn2(self.conv2(x))

    return ConvBN()


MODELS = {"mlp": make_mlp, "everything": make_everything, "tree": make_submodule_tree,
          "conv_bn": make_conv_bn}


def run_same(model_et, x):
    return model_et(et.tensor(x, dtype=et.float32))


# -- tracing, no torch ---------------------------------------------------------------------------
def test_trace_records_each_kind_of_node():
    gm = fx.symbolic_trace(make_mlp(et))
    nodes = list(gm.graph.nodes)
    assert [(n.op, n.name) for n in nodes] == [
        ("placeholder", "x"), ("call_module", "fc1"), ("call_function", "relu"),
        ("call_module", "fc2"), ("output", "output")]
    assert nodes[2].target is et.relu and nodes[2].args == (nodes[1],)
    assert nodes[3].args[0] is nodes[2] and list(nodes[2].users) == [nodes[3]]
    assert type(gm).__name__ == "MLP" and isinstance(gm, fx.GraphModule)
    assert gm.code == ("\n\n\ndef forward(self, x):\n    fc1 = self.fc1(x);  x = None\n"
                       "    relu = edutorch.relu(fc1);  fc1 = None\n"
                       "    fc2 = self.fc2(relu);  relu = None\n    return fc2\n    ")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_graph_module_computes_what_the_model_computes(name, rng):
    model = MODELS[name](et).eval()
    gm = fx.symbolic_trace(model)
    x = rng.standard_normal((3, 2, 5, 5) if name == "conv_bn" else (3, 4))
    ref, out = run_same(model, x), run_same(gm, x)
    if isinstance(ref, dict):
        ref, out = ref["out"], out["out"]
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-6)


def test_the_loop_from_the_docs_runs_unchanged(capsys):
    traced = fx.symbolic_trace(make_everything(et))
    for node in traced.graph.nodes:
        if node.op == "call_function":
            print(node.target)
    printed = capsys.readouterr().out.splitlines()
    assert printed[:2] == ["<built-in function add>", "<built-in function mul>"]
    assert "<built-in function getattr>" in printed and "<built-in function getitem>" in printed


def test_parameters_are_get_attr_nodes_and_reused(rng):
    gm = fx.symbolic_trace(make_submodule_tree(et))
    get_attrs = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert get_attrs == ["blocks.0.scale", "blocks.1.scale"]  # one node each, used twice
    modules = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert modules == ["blocks.0.lin", "act", "blocks.1.lin", "act"]


def test_tensor_constant_becomes_an_attribute():
    class AddConst(et.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = et.tensor([1.0, 2.0])  # a plain tensor attribute

        def forward(self, x):
            return x + self.c + et.tensor([10.0, 20.0])

    gm = fx.symbolic_trace(AddConst())
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == ["c", "_tensor_constant0"]
    assert gm(et.zeros(2)).tolist() == [11.0, 22.0]


# -- control flow -----------------------------------------------------------------------------
class DataDependent(et.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


class Iterates(et.nn.Module):
    def forward(self, x):
        return [row for row in x]


class Length(et.nn.Module):
    def forward(self, x):
        return x * len(x)


def test_data_dependent_control_flow_raises_trace_error():
    with pytest.raises(TraceError, match="symbolically traced variables cannot be used as inputs to control flow"):
        fx.symbolic_trace(DataDependent())
    with pytest.raises(TraceError, match="Proxy object cannot be iterated"):
        fx.symbolic_trace(Iterates())
    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing by default"):
        fx.symbolic_trace(Length())
    assert issubclass(TraceError, ValueError)


def test_tracing_restores_everything_it_patched():
    before = (et.relu, et.nn.functional.relu, et.nn.Module.__call__, et.nn.Module.__getattr__)
    with pytest.raises(TraceError):
        fx.symbolic_trace(DataDependent())
    fx.symbolic_trace(make_mlp(et))
    assert (et.relu, et.nn.functional.relu, et.nn.Module.__call__, et.nn.Module.__getattr__) == before


def test_static_control_flow_is_unrolled():
    class Repeat(et.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.n = n

        def forward(self, x):
            for _ in range(self.n):
                x = x * 2
            return x

    gm = fx.symbolic_trace(Repeat(3))
    assert [n.name for n in gm.graph.nodes] == ["x", "mul", "mul_1", "mul_2", "output"]
    assert gm(et.ones(1)).item() == 8.0


# -- changing the graph ----------------------------------------------------------------------------
def relu_to_gelu(gm, lib=et):
    """PyTorch's tutorial transformation: every relu (function or module) becomes gelu."""
    F = lib.nn.functional
    modules = dict(gm.named_modules())
    for node in gm.graph.nodes:
        is_relu_fn = node.op == "call_function" and node.target in (lib.relu, F.relu)
        is_relu_mod = node.op == "call_module" and isinstance(modules[node.target], lib.nn.ReLU)
        if is_relu_fn or is_relu_mod:
            with gm.graph.inserting_after(node):
                new_node = gm.graph.call_function(F.gelu, node.args, node.kwargs)
                node.replace_all_uses_with(new_node)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm


def test_relu_to_gelu_still_runs_and_matches(rng):
    model = make_everything(et)
    gm = relu_to_gelu(fx.symbolic_trace(model))
    assert "gelu" in gm.code and "relu" not in gm.code
    assert [n.name for n in gm.graph.nodes if "gelu" in n.name] == ["gelu", "gelu_1"]

    class Reference(et.nn.Module):  # the same model, written with gelu
        def forward(self, x):
            F = et.nn.functional
            m = model
            z = m.linear(x + m.param).clamp(min=0.0, max=1.0)
            z = F.gelu(m.seq[0](z)) * m.buf
            z = F.gelu(z) + F.softmax(z, dim=-1) * m.buf
            z = 2 * z - z / 3 + (-z) ** 2
            return et.cat([z, z], 1) - 1

    x = et.tensor(rng.standard_normal((3, 4)), dtype=et.float32)
    np.testing.assert_allclose(gm(x)["out"].detach().numpy(), Reference()(x).detach().numpy(), rtol=1e-6)


def _parent_name(target):
    *parent, name = target.rsplit(".", 1)
    return parent[0] if parent else "", name


def fuse(model, lib=et):
    """PyTorch's conv/bn fusion tutorial, unchanged but for the library."""
    fuse_conv_bn_eval = lib.nn.utils.fusion.fuse_conv_bn_eval
    model = copy.deepcopy(model)
    fx_model = lib.fx.symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    for node in fx_model.graph.nodes:
        if node.op != "call_module":
            continue
        if (type(modules[node.target]) is lib.nn.BatchNorm2d
                and type(modules[node.args[0].target]) is lib.nn.Conv2d):
            if len(node.args[0].users) > 1:
                continue
            conv, bn = modules[node.args[0].target], modules[node.target]
            parent_name, name = _parent_name(node.args[0].target)
            setattr(modules[parent_name], name, fuse_conv_bn_eval(conv, bn))
            node.replace_all_uses_with(node.args[0])
            fx_model.graph.erase_node(node)
    fx_model.graph.lint()
    fx_model.recompile()
    return fx_model


def test_conv_bn_fusion_matches_the_unfused_model(rng):
    model = make_conv_bn(et)
    model.train()
    for _ in range(3):  # give the BatchNorms running statistics that are not 0 and 1
        model(et.tensor(rng.standard_normal((4, 2, 5, 5)) * 3 + 1, dtype=et.float32))
    model.eval()
    fused = fuse(model)
    assert [n.op for n in fused.graph.nodes].count("call_module") == 2
    assert "bn" not in fused.code
    x = et.tensor(rng.standard_normal((2, 2, 5, 5)), dtype=et.float32)
    np.testing.assert_allclose(fused(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_retargeting_a_node_and_recompiling():
    class AddOnly(et.nn.Module):
        def forward(self, x, y):
            return et.add(x, y)

    gm = fx.symbolic_trace(AddOnly())
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == et.add:
            node.target = et.mul
    gm.recompile()
    assert "edutorch.mul(x, y)" in gm.code
    assert gm(et.tensor(3.0), et.tensor(4.0)).item() == 12.0


def test_building_a_graph_by_hand_and_the_insert_points():
    g = fx.Graph()
    x = g.placeholder("x")
    relu = g.call_method("relu", (x,))
    out = g.output(relu)
    with g.inserting_before(relu):
        neg = g.call_function(operator.neg, (x,))
    relu.replace_input_with(x, neg)
    with g.inserting_after(relu):
        g.call_function(operator.add, (relu, 1))  # unused: dead code
    assert [n.name for n in g.nodes] == ["x", "neg", "relu", "add", "output"]
    assert g.eliminate_dead_code() is True and g.eliminate_dead_code() is False
    assert [n.name for n in g.nodes] == ["x", "neg", "relu", "output"]
    g.lint()
    gm = fx.GraphModule(et.nn.Module(), g)
    assert gm(et.tensor([-1.0, 2.0])).tolist() == [1.0, 0.0]
    assert out.args == (relu,)


def test_erase_and_lint_errors():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(operator.neg, (x,))
    g.output(y)
    with pytest.raises(RuntimeError, match=r"Tried to erase Node x but it still had 1 users in the graph: \{neg: None\}!"):
        g.erase_node(x)
    with g.inserting_before(x):
        z = g.call_function(operator.abs, (y,))  # uses y before y is defined
    with pytest.raises(RuntimeError, match="Argument 'neg' of Node 'abs_1' was used before it has been defined!"):
        g.lint()
    g.erase_node(z)
    g.lint()


def test_print_tabular_uses_tabulate_or_says_it_is_missing(capsys, monkeypatch):
    pytest.importorskip("tabulate", reason="tabulate is in the [lab] and [test] extras")
    fx.symbolic_trace(make_mlp(et)).graph.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert lines[2].split() == ["placeholder", "x", "x", "()", "{}"]
    monkeypatch.setitem(sys.modules, "tabulate", None)
    with pytest.raises(ImportError):
        fx.symbolic_trace(make_mlp(et)).graph.print_tabular()
    assert "`print_tabular` relies on the library `tabulate`" in capsys.readouterr().out


def test_deepcopy_and_str():
    gm = fx.symbolic_trace(make_mlp(et))
    clone = copy.deepcopy(gm)
    assert clone.code == gm.code and clone.fc1 is not gm.fc1
    x = et.ones(2, 4)
    assert clone(x).tolist() == gm(x).tolist()
    assert str(gm).endswith(gm.code + "\n# To see more debug info, please use `graph_module.print_readable()`")


# -- parity with torch.fx -----------------------------------------------------------------------------
_FN_PATH = re.compile(r"\b(?:edu)?torch(?:\._C\._nn|\.nn\.functional)?\.(\w+)(?=[(\]])")


def _normalise(text):
    """``torch.relu(`` / ``edutorch.relu(`` / ``torch._C._nn.gelu(`` -> ``fn.relu(`` ..."""
    text = _FN_PATH.sub(r"fn.\1", text)
    return re.sub(r"<(?:built-in method|function) (\w+)[^>]*>", r"<fn \1>", text)


def _target(node):
    t = node.target
    if isinstance(t, str):
        return t
    if getattr(t, "__module__", None) in ("_operator", "builtins"):
        return repr(t)
    return f"fn.{t.__name__}"


def _describe(lib, name):
    gm = lib.fx.symbolic_trace(MODELS[name](lib))
    nodes = [(n.op, n.name, _target(n), str(n.args), str(n.kwargs), sorted(u.name for u in n.users))
             for n in gm.graph.nodes]
    return nodes, _normalise(gm.code), _normalise(str(gm.graph)), gm


@pytest.mark.parametrize("name", sorted(MODELS))
def test_parity_nodes_code_and_graph(name):
    torch = pytest.importorskip("torch", reason=REASON)
    mine, ref = _describe(et, name), _describe(torch, name)
    assert mine[0] == ref[0]
    assert mine[1] == ref[1]
    assert mine[2] == ref[2]
    assert repr(mine[3]) == repr(ref[3])  # the module tree the GraphModule keeps


@pytest.mark.parametrize("name", sorted(MODELS))
def test_parity_print_tabular(name, capsys):
    torch = pytest.importorskip("torch", reason=REASON)
    pytest.importorskip("tabulate", reason="tabulate is in the [lab] and [test] extras")
    tables = []
    for lib in (et, torch):
        gm = lib.fx.symbolic_trace(MODELS[name](lib))
        gm.graph.print_tabular()
        # the target column's width depends on how functions print: compare cell by cell
        tables.append([_normalise(line).split() for line in capsys.readouterr().out.splitlines()[2:]])
    assert tables[0] == tables[1]


@pytest.mark.parametrize("model", [DataDependent, Iterates, Length])
def test_parity_tracing_errors(model):
    torch = pytest.importorskip("torch", reason=REASON)

    class TorchVersion(torch.nn.Module):
        forward = model.forward

    errors = []
    for lib, m in ((et, model()), (torch, TorchVersion())):
        with pytest.raises(Exception) as info:
            lib.fx.symbolic_trace(m)
        errors.append(info.value)
    assert type(errors[0]).__name__ == type(errors[1]).__name__
    assert isinstance(errors[0], RuntimeError) == isinstance(errors[1], RuntimeError)
    assert str(errors[0]) == str(errors[1])


def _mutations(lib):
    """Graph surgery in either library; returns what each step printed or raised."""
    seen = []
    gm = lib.fx.symbolic_trace(MODELS["mlp"](lib))
    g = gm.graph
    nodes = {n.name: n for n in g.nodes}
    try:
        g.erase_node(nodes["fc1"])
    except RuntimeError as e:
        seen.append(str(e))
    with g.inserting_after(nodes["relu"]):
        extra = g.call_function(operator.mul, (nodes["relu"], 2))
        nodes["relu"].replace_all_uses_with(extra, delete_user_cb=lambda u: u is not extra)
    with g.inserting_before(nodes["fc1"]):
        g.call_method("sum", (nodes["x"],))  # dead
        g.get_attr("fc1.weight")              # dead
    seen.append([n.name for n in g.nodes])
    seen.append(g.eliminate_dead_code())
    gm.recompile()
    seen.append(_normalise(gm.code))
    with g.inserting_before(nodes["x"]):
        bad = g.call_function(operator.neg, (extra,))
    try:
        g.lint()
    except RuntimeError as e:
        seen.append(str(e).split("\n")[0])
    g.erase_node(bad)
    g.lint()
    seen.append(str(g))
    return seen


def test_parity_graph_mutation():
    torch = pytest.importorskip("torch", reason=REASON)
    mine, ref = _mutations(et), _mutations(torch)
    assert mine[:-1] == ref[:-1]
    assert _normalise(mine[-1]) == _normalise(ref[-1])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_parity_print_readable(name):
    torch = pytest.importorskip("torch", reason=REASON)
    texts = [_normalise(lib.fx.symbolic_trace(MODELS[name](lib)).print_readable(print_output=False))
             for lib in (et, torch)]
    assert texts[0] == texts[1]


def test_parity_transformations():
    torch = pytest.importorskip("torch", reason=REASON)
    import torch.nn.utils.fusion  # noqa: F401  (a submodule torch does not import by itself)

    results = []
    for lib in (et, torch):
        gelu = relu_to_gelu(lib.fx.symbolic_trace(MODELS["everything"](lib)), lib)
        fused = fuse(MODELS["conv_bn"](lib).eval(), lib)
        results.append((_normalise(gelu.code), _normalise(str(gelu.graph)), _normalise(fused.code),
                        repr(fused)))
    assert results[0] == results[1]


def scaled_softplus(x, beta=2.0):
    return (1 + (x * beta).exp()).log() / beta + et.ones(1)


def test_a_plain_function_can_be_traced(rng):
    gm = fx.symbolic_trace(scaled_softplus)
    assert type(gm).__name__ == "scaled_softplus"
    assert [n.op for n in gm.graph.nodes][:2] == ["placeholder", "placeholder"]
    x = et.tensor(rng.standard_normal(4))
    np.testing.assert_allclose(gm(x).numpy(), scaled_softplus(x).numpy(), rtol=1e-12)


def test_parity_tracing_a_function():
    torch = pytest.importorskip("torch", reason=REASON)

    def f(lib):
        def scaled(x, beta=2.0):
            return (1 + (x * beta).exp()).log() / beta + lib.relu(x)
        return scaled

    texts = [(_normalise(lib.fx.symbolic_trace(f(lib)).code), _normalise(str(lib.fx.symbolic_trace(f(lib)).graph)))
             for lib in (et, torch)]
    assert texts[0] == texts[1]


def times_length(x):
    """Untraceable (``len`` of a Proxy): ``fx.wrap`` keeps it one call_function node."""
    return x * len(x)


fx.wrap("times_length")


def test_wrap_keeps_a_function_as_one_node():
    class UsesWrapped(et.nn.Module):
        def forward(self, x):
            return times_length(x) + 1

    gm = fx.symbolic_trace(UsesWrapped())
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert calls[0].target is times_length and calls[0].name == "times_length"
    assert gm(et.ones(3)).tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        fx.symbolic_trace(Length())  # unwrapped, len still fails
