"""Every "known difference from PyTorch" that README.md lists is asserted here, one test each.

A test shows the difference on edutorch's side (and on PyTorch's where it is installed),
so when edutorch comes to behave like PyTorch, its test fails and the README's list has to
lose that entry; `test_every_listed_difference_has_a_test` fails when the list has an
entry without a test here, or a test here has no entry in the list.
"""
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import edutorch as et
from edutorch._scope import OutOfScopeError

ROOT = Path(__file__).resolve().parents[1]
TORCH_REASON = ("real PyTorch not installed: its side of a known difference not shown (its CPU build: "
                "pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0)")
DOCUMENTED = {}  # the start of a README bullet -> the test of that difference


def documents(bullet_start):
    """Mark a test as the one for the README bullet that starts with ``bullet_start``."""
    def mark(test):
        assert bullet_start not in DOCUMENTED, bullet_start
        DOCUMENTED[bullet_start] = test.__name__
        return test
    return mark


def readme_differences():
    """The bullets of README's "Known differences from PyTorch", each as one line of text."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Known differences from PyTorch", 1)[1].split("\n## ", 1)[0]
    return [" ".join(item.split()) for item in re.findall(r"^- (.*?)(?=^- |^\S|\Z)", section, re.M | re.S)]


def torch_or_skip():
    return pytest.importorskip("torch", reason=TORCH_REASON)


def packed_shapes(lib, fn):
    """The tensors a saved-tensor hook sees while ``fn()`` records its graph."""
    packed = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        fn()
    return packed


# --- the differences, in README's order -----------------------------------------------------------
@documents("Random numbers come from NumPy's PCG64")
def test_same_seed_same_numbers_but_not_pytorchs():
    et.manual_seed(0)
    first = et.randn(3).numpy()
    et.manual_seed(0)
    np.testing.assert_array_equal(et.randn(3).numpy(), first)
    torch = torch_or_skip()
    torch.manual_seed(0)
    assert not np.allclose(torch.randn(3).numpy(), first)


@documents("The CuPy (`\"cuda\"`) path has not yet been run on a real GPU")
def test_cuda_runs_on_the_cupy_stand_in(fake_cuda):
    assert (ROOT / "tests" / "fake_cupy.py").exists() and (ROOT / "tests/tensor/test_cuda_standin.py").exists()
    x = et.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.device.type == "cuda"
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [2.0, 4.0])


@documents("Saved-tensor hooks: which tensors a built-in op saves")
def test_saved_tensors_of_linear_cross_entropy_and_mul():
    a, b = et.ones(2, 3, requires_grad=True), et.full((2, 3), 2.0, requires_grad=True)
    assert packed_shapes(et, lambda: a * b)[0] is a  # PyTorch packs b first
    layer = et.nn.Linear(3, 4)
    assert any(t is layer.weight for t in packed_shapes(et, lambda: layer(a)))  # PyTorch: weight.t()
    logits, target = et.ones(2, 3, requires_grad=True), et.tensor([0, 1])
    ce = packed_shapes(et, lambda: et.nn.functional.cross_entropy(logits, target))
    assert all(t.dim() > 0 for t in ce)  # no 0-dim total_weight
    torch = torch_or_skip()
    ta, tb = torch.ones(2, 3, requires_grad=True), torch.full((2, 3), 2.0, requires_grad=True)
    assert packed_shapes(torch, lambda: ta * tb)[0] is tb
    tlayer = torch.nn.Linear(3, 4)
    assert (3, 4) in [tuple(t.shape) for t in packed_shapes(torch, lambda: tlayer(ta))]
    tce = packed_shapes(torch, lambda: torch.nn.functional.cross_entropy(torch.ones(2, 3, requires_grad=True),
                                                                         torch.tensor([0, 1])))
    assert len(tce) == len(ce) + 1 and tce[-1].dim() == 0


@documents("`grad_fn._saved_<name>` and `grad_fn._raw_saved_<name>`")
def test_saved_attributes_missing_on_some_nodes():
    x = et.ones(2, 3, requires_grad=True)
    out = et.nn.Linear(3, 4)(x)
    assert out.grad_fn.name() == "AddmmBackward0" and not hasattr(out.grad_fn, "_saved_mat2")
    assert not hasattr(x.cumsum(0).grad_fn, "_saved_dim")
    raw = x.exp().grad_fn._raw_saved_result
    assert hasattr(raw, "register_hooks") and not hasattr(raw, "unpack")
    torch = torch_or_skip()
    tx = torch.ones(2, 3, requires_grad=True)
    assert hasattr(torch.nn.Linear(3, 4)(tx).grad_fn, "_saved_mat2")
    assert hasattr(tx.cumsum(0).grad_fn, "_saved_dim")
    assert hasattr(tx.exp().grad_fn._raw_saved_result, "unpack")


@documents("Non-reentrant checkpoint: no `debug=True`")
def test_non_reentrant_checkpoint_has_no_debug_mode():
    from edutorch.utils.checkpoint import checkpoint

    x = et.ones(2, requires_grad=True)
    checkpoint(lambda t: (t * 2).sin(), x, use_reentrant=False).sum().backward()  # works
    with pytest.raises(ValueError, match="no dispatcher"):
        checkpoint(lambda t: t * 2, x, use_reentrant=False, debug=True)


@documents("Mixing devices is checked by the elementwise ops")
def test_mixed_devices_in_a_fused_layer_fail_inside_cupy(fake_cuda):
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        et.ones(2, device="cuda") + et.ones(2)
    layer = et.nn.Linear(3, 2, device="cuda")
    with pytest.raises(TypeError, match="numpy.ndarray"):
        layer(et.ones(4, 3))
    logits = et.ones(2, 3, device="cuda")
    assert et.nn.functional.cross_entropy(logits, et.tensor([0, 1])).device.type == "cuda"  # PyTorch raises


@documents("Ops on `meta` tensors run on zeros of the full shape")
def test_ops_on_meta_tensors_compute_on_zeros():
    import tracemalloc

    x = et.empty(1000, 1000, device="meta")
    tracemalloc.start()
    try:
        y = x * 2
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert y.is_meta and peak >= 4_000_000  # the product was computed, then dropped


@documents("Some ops are compositions of other differentiable ops")
def test_composed_ops_show_their_parts_grad_fn():
    a, b = et.ones(2, 3, requires_grad=True), et.ones(4, 3, requires_grad=True)
    assert et.cdist(a, b).grad_fn.name() == "LinalgVectorNormBackward0"  # PyTorch: CdistBackward0
    assert et.addmv(b[:, 0], b, a[0]).grad_fn.name() == "AddBackward0"  # PyTorch: AddmvBackward0
    assert et.addmm(et.zeros(4), a, b.t()).grad_fn.name() == "AddmmBackward0"  # one Function, as PyTorch's
    assert et.nn.functional.glu(et.ones(4, 2, requires_grad=True)).grad_fn.name() != "GluBackward0"
    torch = torch_or_skip()
    assert torch.nn.functional.glu(torch.ones(4, 2, requires_grad=True)).grad_fn.name() == "GluBackward0"


@documents("Double backward through a convolution or a normalization layer")
def test_first_gradient_of_a_convolution_is_built_from_tensor_ops():
    def first_gradient(lib):
        x, w = lib.ones(1, 1, 4, 4, requires_grad=True), lib.ones(1, 1, 3, 3, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.conv2d(x, w).sum(), x, create_graph=True)
        return g.grad_fn.name()

    assert first_gradient(et) != "ConvolutionBackwardBackward0"
    assert first_gradient(torch_or_skip()) == "ConvolutionBackwardBackward0"


@documents("Out-of-scope names (see")
def test_out_of_scope_names_raise_an_attribute_error_with_the_reason():
    with pytest.raises(OutOfScopeError, match="not available in edutorch") as refused:
        et.jit  # noqa: B018
    assert isinstance(refused.value, AttributeError)


@documents("`load` treats every file as hostile")
def test_load_refuses_a_deflated_manifest_longer_than_the_file_and_1_mib(tmp_path):
    import json
    import zipfile

    from edutorch.serialization import CheckpointError

    path = tmp_path / "model.pt"
    et.save({"a": et.ones(2)}, path)
    with zipfile.ZipFile(path) as stored:
        members = {name: stored.read(name) for name in stored.namelist()}
    manifest = json.loads(members["manifest.json"])
    members["manifest.json"] = json.dumps(manifest, indent=2 * 1024 * 1024).encode()  # valid JSON, 2+ MiB
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as rezipped:
        for name, data in members.items():
            rezipped.writestr(name, data)
    assert path.stat().st_size < 1024 * 1024
    with pytest.raises(CheckpointError, match="manifest"):
        et.load(path)


@documents("`save`/`load` never pickle")
def test_saving_a_whole_module_is_refused(tmp_path):
    with pytest.raises(TypeError, match="state_dict"):
        et.save(et.nn.Linear(2, 2), tmp_path / "model.pt")
    torch = torch_or_skip()
    torch.save(torch.nn.Linear(2, 2), tmp_path / "torch-model.pt")  # pickled


@documents("Overlapping writes whose result depends on memory order are refused")
def test_order_dependent_overlapping_writes_are_refused():
    def smear(lib):
        m = lib.arange(6.0).reshape(2, 3)
        m[:, 1:] = m[:, :-1]
        return m.tolist()

    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        smear(et)
    assert smear(torch_or_skip()) == [[0.0, 0.0, 0.0], [3.0, 3.0, 3.0]]


def backward_after_changing_a_cdist_operand(lib):
    a, b = lib.ones(2, 2, requires_grad=True) * 1, lib.ones(3, 2, requires_grad=True) * 2
    out = lib.cdist(a, b)
    b.mul_(2)
    try:
        out.sum().backward()
    except RuntimeError as error:
        return str(error)
    return "computed"


@documents("A tensor changed in place between forward and `backward`")
def test_cdist_built_from_other_ops_does_not_save_its_operands():
    assert backward_after_changing_a_cdist_operand(et) == "computed"
    assert "modified by an inplace operation" in backward_after_changing_a_cdist_operand(torch_or_skip())


def tangent_of_a_product_by_a_number(lib):
    """``x * 2.0`` on a dual of a leaf that requires grad: the tangent's grad_fn and requires_grad."""
    forward_ad = lib.autograd.forward_ad
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with forward_ad.dual_level():
        tangent = forward_ad.unpack_dual(forward_ad.make_dual(x, lib.ones(2)) * 2.0).tangent
        assert tangent.tolist() == [2.0, 2.0]  # the values agree
        return (tangent.grad_fn.name() if tangent.grad_fn else None), tangent.requires_grad


@documents("Forward mode: where an op's input has no tangent")
def test_a_missing_tangent_is_left_out_not_an_efficient_zero():
    assert tangent_of_a_product_by_a_number(et) == (None, False)
    assert tangent_of_a_product_by_a_number(torch_or_skip()) == ("AddBackward0", True)


@documents("NumPy warns (`RuntimeWarning: overflow encountered in exp`")
def test_overflow_warns_where_pytorch_is_silent():
    with pytest.warns(RuntimeWarning, match="overflow encountered in exp"):
        et.tensor([1000.0]).exp()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        et.tensor([0.0]).log()  # the common cases are silenced as in PyTorch
        torch = torch_or_skip()
        torch.tensor([1000.0]).exp()


@documents("`torch.fx`: a call to a function that PyTorch writes in Python")
def test_fx_records_the_arguments_the_user_passed():
    class Net(et.nn.Module):
        def forward(self, x):
            return et.nn.functional.relu(x) + et.relu(x)

    graph = et.fx.symbolic_trace(Net()).graph
    calls = [node for node in graph.nodes if node.op == "call_function"]
    assert calls[0].kwargs == {}  # PyTorch's node: {'inplace': False}
    assert "edutorch.relu" in str(graph)
    with pytest.raises(NotImplementedError, match="concrete_args"):
        et.fx.symbolic_trace(Net(), concrete_args={"x": 1})


@documents("Shared memory (`share_memory_`")
def test_a_view_taken_before_sharing_keeps_the_old_memory():
    def view_after_sharing(lib):
        t = lib.zeros(4)
        view = t[:2]
        t.share_memory_()
        t[0] = 1
        return float(view[0])

    assert view_after_sharing(et) == 0.0
    assert view_after_sharing(torch_or_skip()) == 1.0


@documents("Mixed precision: `autocast` looks an op up")
def test_reflection_pad_keeps_its_dtype_under_autocast():
    def padded_dtype(lib):
        x = lib.ones(1, 2, 5, dtype=lib.bfloat16)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            return lib.nn.functional.pad(x, (1, 1), mode="reflect").dtype

    assert padded_dtype(et) == et.bfloat16
    torch = torch_or_skip()
    assert padded_dtype(torch) == torch.float32


@documents("bfloat16 comes from `ml_dtypes`")
def test_long_float16_products_are_computed_in_float32():
    assert float(et.full((1000,), 1.001, dtype=et.float16).prod()) == pytest.approx(2.654, abs=1e-3)
    torch = torch_or_skip()
    assert float(torch.full((1000,), 1.001, dtype=torch.float16).prod()) == pytest.approx(2.607, abs=1e-3)


@documents("`torch.profiler` records one event per `autograd.Function`")
def test_profiler_shows_the_op_not_the_aten_calls_inside():
    def keys(lib):
        layer, x = lib.nn.Linear(3, 4), lib.ones(2, 3)
        with lib.profiler.profile() as prof:
            layer(x)
        return {event.key for event in prof.key_averages()}

    assert keys(et) == {"aten::linear", "aten::t", "aten::transpose", "aten::as_strided", "aten::addmm"}
    with_helpers = keys(torch_or_skip())
    assert keys(et) < with_helpers and {"aten::expand", "aten::copy_"} <= with_helpers


@documents("Out of scope: TorchScript (`torch.jit`)")
def test_torchscript_cpp_extensions_and_distributed_are_out_of_scope():
    for namespace, name in ((et, "jit"), (et, "distributed"), (et.nn, "DistributedDataParallel")):
        with pytest.raises(OutOfScopeError):
            getattr(namespace, name)
    assert not hasattr(et.utils, "cpp_extension")


# --- the list and the tests stay one to one ---------------------------------------------------------
def test_every_listed_difference_has_a_test():
    bullets = readme_differences()
    assert len(bullets) >= 10
    untested = [b[:70] for b in bullets if not any(b.startswith(start) for start in DOCUMENTED)]
    assert not untested, f"README lists a difference without a test here: {untested}"
    stale = [start for start in DOCUMENTED if not any(b.startswith(start) for b in bullets)]
    assert not stale, f"tests of differences README no longer lists: {[DOCUMENTED[s] for s in stale]}"
