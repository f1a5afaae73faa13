"""Lesson 12 (beyond the basics): its sentences about PyTorch, checked under real PyTorch 2.13."""
import pytest
from _claims import error_of, real_torch, warnings_of

torch = real_torch()
nn, F = torch.nn, torch.nn.functional
fx = pytest.importorskip("torch.fx")
checkpoint = pytest.importorskip("torch.utils.checkpoint")


def mlp(depth, width=64):
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)])


def address_of(t):
    """The lesson's helper: where a tensor's numbers start in memory."""
    return t.detach().numpy().__array_interface__["data"][0]


def activation_bytes(fn, model):
    """The lesson's helper: each block of saved memory once, the parameters' not at all."""
    parameters = {address_of(p) for p in model.parameters()}
    held = {}

    def pack(t):
        if address_of(t) not in parameters:
            held[address_of(t)] = t.nbytes
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn()
    return result, sum(held.values())


def test_control_flow_builds_the_graph_each_cell_gets_only_its_steps():
    """"whatever Python executes is what ends up in the graph"; "backward sent each cell exactly the
    gradient of the steps it took part in"."""
    torch.manual_seed(0)
    cell_a, cell_b = nn.Linear(7, 4), nn.Linear(7, 4)
    h = torch.zeros(4)
    for x_t in -torch.rand(3, 3):  # every sum < 0: only cell_b runs
        h = torch.tanh((cell_a if x_t.sum() > 0 else cell_b)(torch.cat([x_t, h])))
    h.sum().backward()
    assert cell_a.weight.grad is None and cell_b.weight.grad is not None


def test_symbolic_trace_cannot_decide_a_data_dependent_branch():
    """"A proxy has no values, so ``if xs[t].sum() > 0`` cannot be decided, and tracing stops with an
    error"."""
    class Branchy(nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x

    error = error_of(fx.symbolic_trace, Branchy())
    assert isinstance(error, fx.proxy.TraceError) and "symbolically traced variables" in str(error)


def test_symbolic_trace_node_kinds_and_relu_to_gelu_rewrite():
    """Nodes "``placeholder``, ``call_module``, ``call_function``, ``call_method``, ``get_attr``,
    ``output``" in a ``GraphModule`` whose ``forward`` is generated code; rewriting ``torch.relu``
    targets and ``recompile()`` changes the computation, "The parameters are shared"."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.scale = nn.Parameter(torch.ones(3))

        def forward(self, x):
            return torch.relu(self.fc(x)).mul(self.scale)

    net = Net()
    gm = fx.symbolic_trace(net)
    assert isinstance(gm, fx.GraphModule) and "def forward" in gm.code
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_module", "call_function", "get_attr",
                                              "call_method", "output"]
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = F.gelu
    gm.recompile()
    x = torch.randn(2, 3)
    assert torch.allclose(gm(x), F.gelu(net.fc(x)) * net.scale)
    assert gm.fc.weight is net.fc.weight


def test_a_linear_saves_its_input_and_a_view_of_its_weight_relu_its_output():
    """"a ``Linear`` its input and its weight, ``relu`` its output"; "PyTorch saves ``weight.t()``, a
    view of it"; "a ReLU's output is saved twice, by the ReLU and by the next ``Linear``"."""
    model, x = mlp(2), torch.randn(32, 64, requires_grad=True)
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        model(x)
    assert [tuple(t.shape) for t in packed] == [(32, 64), (64, 64), (32, 64)] * 2
    assert packed[1]._base is model[0][0].weight and packed[4]._base is model[1][0].weight
    assert address_of(packed[2]) == address_of(packed[3])
    e = x.exp()  # exp saves its output
    assert torch.equal(e.grad_fn._saved_result, e)


def test_activation_bytes_under_torch_match_the_lessons_table():
    """The table's first row (N = 4, 2 segments): 40 KiB held plainly, 32 KiB checkpointed;
    "memory like √N" — the segments' inputs plus one segment's tensors."""
    model, x = mlp(4), torch.randn(32, 64, requires_grad=True)
    _, plain = activation_bytes(lambda: model(x), model)
    _, kept = activation_bytes(
        lambda: checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False), model)
    assert (plain, kept) == (40 * 1024, 32 * 1024)


def test_checkpointing_gives_the_same_gradients():
    """"The gradients are the same: checkpointing changes *when* tensors are computed, not what"."""
    model = mlp(6, width=8)
    x = torch.randn(4, 8, requires_grad=True)
    model(x).sum().backward()
    plain = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=False).sum().backward()
    for a, b in zip(plain, [p.grad for p in model.parameters()] + [x.grad]):
        assert torch.allclose(a, b)


def test_without_use_reentrant_pytorch_warns_and_uses_the_reentrant_algorithm():
    """"Pass ``use_reentrant`` explicitly: without it PyTorch 2.13 warns, and uses the older
    reentrant algorithm"."""
    x = torch.randn(3, requires_grad=True)
    out, caught = warnings_of(checkpoint.checkpoint, lambda t: t.exp(), x)
    assert any("use_reentrant parameter should be passed explicitly" in m for _, m in caught)
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"


def test_recomputation_stops_early():
    """"when backward first unpacks a tensor saved there, both blocks run again. Block 1 starts but
    never finishes ... the recomputation **stops early**"."""
    deep, x = mlp(4, width=8), torch.randn(2, 8, requires_grad=True)
    starts, ends = [0] * 4, [0] * 4
    for i, block in enumerate(deep):
        block.register_forward_pre_hook(lambda module, args, i=i: starts.__setitem__(i, starts[i] + 1))
        block.register_forward_hook(lambda module, args, output, i=i: ends.__setitem__(i, ends[i] + 1))
    checkpoint.checkpoint_sequential(deep, 2, x, use_reentrant=False).sum().backward()
    assert (starts, ends) == ([2, 2, 1, 1], [2, 1, 1, 1])


def node_names(out):
    names, stack, seen = [], [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(node.name())
        stack.extend(n for n, _ in node.next_functions)
    return sorted(names)


def test_non_reentrant_graph_is_the_plain_graph_node_for_node():
    """"with ``use_reentrant=False`` the graph is the ordinary one, node for node the graph of the
    plain model"."""
    deep, x = mlp(4, width=8), torch.randn(2, 8, requires_grad=True)
    plain = node_names(deep(x).sum())
    assert node_names(checkpoint.checkpoint_sequential(deep, 2, x, use_reentrant=False).sum()) == plain


def test_autocast_cpu_dtypes():
    """"On the CPU the default low dtype is **bfloat16**, on CUDA **float16**"; matrix products cast to
    it; "float64 inputs are never cast, and the parameters themselves stay float32"; the losses run in
    float32; "``exp``, ``softmax``, ``log_softmax``, ``sum``, ``mean``, ``norm`` and ``layer_norm`` of a
    bfloat16 product stay bfloat16 on the CPU"; gradients "come back in the parameters' dtype"."""
    assert torch.get_autocast_dtype("cpu") == torch.bfloat16
    assert torch.is_autocast_cache_enabled()  # "each cast is cached for the region"
    assert torch.get_autocast_dtype("cuda") == torch.float16
    a, b, d = torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4, dtype=torch.float64)
    layer = nn.Linear(4, 4)
    with torch.autocast("cpu"):
        p = a @ b
        assert p.dtype == torch.bfloat16 and layer(a).dtype == torch.bfloat16
        assert p.relu().dtype == torch.bfloat16 and a.relu().dtype == torch.float32 and a.exp().dtype == torch.float32
        assert (d @ d).dtype == torch.float64
        for loss in (F.mse_loss(p, b), F.l1_loss(p, b), F.cross_entropy(p, torch.arange(4)), F.nll_loss(p, torch.arange(4))):
            assert loss.dtype == torch.float32
        assert p.prod().dtype == torch.float32
        for result in (p.exp(), p.softmax(-1), F.log_softmax(p, -1), p.sum(), p.mean(), p.norm(), F.layer_norm(p, (4,))):
            assert result.dtype == torch.bfloat16
        out = layer(a).float().sum()
    assert layer.weight.dtype == torch.float32
    out.backward()
    assert layer.weight.grad.dtype == torch.float32


def test_float16_underflows_below_six_times_ten_to_minus_eight():
    """"the smallest positive float16 is about 6·10⁻⁸, and anything smaller rounds to 0"; "float16
    has 10 bits of mantissa"."""
    assert torch.tensor(2.0 ** -24, dtype=torch.float16).item() == pytest.approx(5.96e-8, rel=1e-3)
    assert torch.tensor(2e-8, dtype=torch.float16).item() == 0
    assert torch.finfo(torch.float16).eps == 2.0 ** -10


def test_grad_scaler_scale_skip_and_backoff():
    """"``GradScaler`` multiplies the loss by a large factor (2¹⁶ at first)"; "If a scaled gradient
    overflowed to ``inf``/``nan``, ``scaler.step`` **skips** the update and ``scaler.update()`` halves
    the scale; after ``growth_interval`` clean steps it doubles it again"."""
    layer = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", growth_interval=2)
    assert torch.amp.GradScaler("cpu").get_scale() == 2.0 ** 16
    loss = layer(torch.ones(1, 2)).sum()
    assert scaler.scale(loss).item() == pytest.approx(loss.item() * 2 ** 16, rel=1e-3)
    before = layer.weight.detach().clone()
    layer.weight.grad = torch.full((1, 2), float("inf"))
    layer.bias.grad = torch.zeros(1)
    scaler.step(optimizer)
    scaler.update()
    assert torch.equal(layer.weight, before) and scaler.get_scale() == 2.0 ** 15
    for _ in range(2):
        optimizer.zero_grad()
        scaler.scale(layer(torch.ones(1, 2)).sum()).backward()
        scaler.step(optimizer)
        scaler.update()
    assert scaler.get_scale() == 2.0 ** 16 and not torch.equal(layer.weight, before)


def test_profiler_names_ops_backward_nodes_and_labels():
    """"records every op the engine runs (``aten::linear``, ``aten::relu``, ...), every backward node
    (``autograd::engine::evaluate_function: AddmmBackward0``) and every region you label with
    ``record_function``"."""
    profiler = pytest.importorskip("torch.profiler")
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    with profiler.profile() as prof:
        with profiler.record_function("my step"):
            model(torch.randn(2, 4)).sum().backward()
    names = {event.key for event in prof.key_averages()}
    assert {"aten::linear", "aten::relu", "my step",
            "autograd::engine::evaluate_function: AddmmBackward0"} <= names
    assert "Self CPU" in prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)


def test_share_memory_puts_parameters_in_shared_memory():
    """"After ``model.share_memory()``, every process that receives the model updates the very same
    parameter storage"."""
    model = nn.Linear(3, 2)
    assert not model.weight.is_shared()
    assert model.share_memory() is model and all(p.is_shared() for p in model.parameters())
