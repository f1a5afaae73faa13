"""edutorch.save / edutorch.load: exact round trips, atomic writes, refusal of foreign files."""
import io
import json
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import edutorch as et
from edutorch import nn
from edutorch import serialization


def round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    et.save(obj, buf)
    buf.seek(0)
    return et.load(buf, **load_kwargs)


DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_values_and_dtypes_round_trip(dtype, rng):
    values = (rng.standard_normal((3, 4)) * 50).astype(dtype)
    back = round_trip(et.tensor(values))
    assert type(back) is et.Tensor
    assert back.dtype == et.tensor(values).dtype
    assert back.data.dtype == np.dtype(dtype)
    assert np.array_equal(back.numpy(), values)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (1,), (2, 3, 4)])
def test_shapes_round_trip(shape):
    t = et.arange(float(np.prod(shape, dtype=int))).reshape(*shape) if shape else et.tensor(3.5)
    back = round_trip(t)
    assert back.shape == t.shape and np.array_equal(back.numpy(), t.numpy())


def test_non_contiguous_tensor_round_trips():
    t = et.arange(6.0).reshape(2, 3).t()
    back = round_trip(t)
    assert back.tolist() == t.tolist()


def test_parameters_and_requires_grad_round_trip():
    obj = {"p": nn.Parameter(et.ones(2)), "frozen": nn.Parameter(et.ones(1), requires_grad=False),
           "leaf": et.ones(3, requires_grad=True), "plain": et.ones(1)}
    back = round_trip(obj)
    assert type(back["p"]) is nn.Parameter and back["p"].requires_grad
    assert type(back["frozen"]) is nn.Parameter and not back["frozen"].requires_grad
    assert type(back["leaf"]) is et.Tensor and back["leaf"].requires_grad and back["leaf"].is_leaf
    assert not back["plain"].requires_grad


def test_nested_structure_key_order_and_plain_values():
    inner = OrderedDict([("z", 1), ("a", 2)])
    obj = OrderedDict([
        ("b", [1, 2.5, -0.0, float("inf"), None, True, False, "text", (et.tensor([1, 2]), "x")]),
        ("a", {3: "int key", 0: inner, "s": ()}),
        ("nan", float("nan")),
        (7, []),
    ])
    back = round_trip(obj)
    assert type(back) is OrderedDict and list(back) == ["b", "a", "nan", 7]
    assert back["b"][:8] == [1, 2.5, -0.0, float("inf"), None, True, False, "text"]
    assert type(back["b"][1]) is float and type(back["b"][0]) is int and back["b"][5] is True
    assert type(back["b"][8]) is tuple and back["b"][8][0].tolist() == [1, 2]
    assert type(back["a"]) is dict and list(back["a"]) == [3, 0, "s"]
    assert type(back["a"][0]) is OrderedDict and list(back["a"][0]) == ["z", "a"]
    assert back["a"]["s"] == ()
    assert np.isnan(back["nan"])


def test_shared_tensor_stays_shared():
    t = et.ones(2)
    back = round_trip({"x": t, "y": [t]})
    assert back["x"] is back["y"][0]


def module_tree():
    class Tree(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(et.randn(3, 2))
            self.register_buffer("count", et.tensor(4))
            self.seq = nn.Sequential(nn.ParameterList([et.randn(2)]), nn.Module())

    return Tree()


def test_module_state_dict_round_trip_with_metadata(tmp_path):
    m = module_tree()
    path = tmp_path / "model.pt"
    et.save(m.state_dict(), path)
    sd = et.load(path)
    assert list(sd) == list(m.state_dict())
    assert sd._metadata == m.state_dict()._metadata
    fresh = module_tree()
    assert repr(fresh.load_state_dict(sd)) == "<All keys matched successfully>"
    assert np.array_equal(fresh.w.detach().numpy(), m.w.detach().numpy())
    assert fresh.count.dtype == et.int64


def test_optimizer_state_dict_round_trip(tmp_path):
    optim = pytest.importorskip("edutorch.optim", reason="edutorch.optim not available yet")
    m = module_tree()
    opt = optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    (m.w.sum() + m.seq[0][0].sum()).backward()
    opt.step()
    state = opt.state_dict()
    et.save(state, str(tmp_path / "opt.pt"))
    back = et.load(str(tmp_path / "opt.pt"))
    assert list(back["state"]) == list(state["state"]) and all(isinstance(k, int) for k in back["state"])
    assert back["param_groups"] == state["param_groups"]
    for k, v in state["state"].items():
        assert np.array_equal(back["state"][k]["momentum_buffer"].numpy(), v["momentum_buffer"].numpy())
    opt2 = optim.SGD(module_tree().parameters(), lr=0.1, momentum=0.9)
    opt2.load_state_dict(back)


def test_map_location_and_weights_only(tmp_path):
    back = round_trip({"a": et.ones(1)}, map_location="cpu", weights_only=False)
    assert back["a"].device.type == "cpu"
    back = round_trip({"a": et.ones(1)}, map_location={"cuda:0": "cpu"})
    assert back["a"].device.type == "cpu"
    if not et.backend.cuda_is_available():
        with pytest.raises(RuntimeError, match="map_location=torch.device\\('cpu'\\)"):
            round_trip(et.ones(1), map_location="cuda")


def test_unsupported_objects_are_refused_before_writing(tmp_path):
    path = tmp_path / "x.pt"
    et.save({"ok": 1}, path)
    with pytest.raises(TypeError, match="cannot store an object of type object"):
        et.save({"bad": object()}, path)
    assert et.load(path) == {"ok": 1}
    with pytest.raises(TypeError, match="ndarray"):
        et.save(np.ones(2), io.BytesIO())


def test_write_is_atomic_when_a_crash_interrupts_it(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    et.save({"version": 1, "w": et.ones(3)}, path)

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(np.lib.format, "write_array", crash)
    with pytest.raises(KeyboardInterrupt):
        et.save({"version": 2, "w": et.zeros(3)}, path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["ckpt.pt"]  # no temp file left behind
    old = et.load(path)
    assert old["version"] == 1 and old["w"].tolist() == [1.0, 1.0, 1.0]


def test_archive_is_a_plain_npz_with_a_json_manifest(tmp_path):
    path = tmp_path / "c.pt"
    et.save({"w": et.ones(2, 2)}, path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["arrays/0.npy", "manifest.json"]
        manifest = json.loads(z.read("manifest.json"))
    assert manifest["format"] == "edutorch-checkpoint" and manifest["root"]["type"] == "dict"
    with np.load(path, allow_pickle=False) as npz:
        assert npz["arrays/0"].tolist() == [[1.0, 1.0], [1.0, 1.0]]


# -- foreign, damaged and hostile files ----------------------------------------------
def saved_bytes(obj):
    buf = io.BytesIO()
    et.save(obj, buf)
    return buf.getvalue()


def zip_bytes(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def load_bytes(data):
    return et.load(io.BytesIO(data))


class Exploit:
    """Unpickling this would create a marker file: it must never happen."""

    marker = None

    def __reduce__(self):
        return (open, (Exploit.marker, "w"))


def test_a_pickle_is_refused_without_being_executed(tmp_path):
    Exploit.marker = str(tmp_path / "pwned")
    path = tmp_path / "evil.pt"
    path.write_bytes(pickle.dumps({"w": Exploit()}))
    with pytest.raises(RuntimeError, match="is a Python pickle.*never unpickles"):
        et.load(path)
    assert not os.path.exists(Exploit.marker)


def test_a_pickled_object_array_inside_a_checkpoint_is_refused(tmp_path):
    Exploit.marker = str(tmp_path / "pwned")
    good = saved_bytes({"w": et.ones(1)})
    members = {n: zipfile.ZipFile(io.BytesIO(good)).read(n) for n in ["manifest.json"]}
    npy = io.BytesIO()
    np.save(npy, np.array([Exploit()], dtype=object), allow_pickle=True)
    members["arrays/0.npy"] = npy.getvalue()
    with pytest.raises(RuntimeError, match="refused.*pickled Python objects"):
        load_bytes(zip_bytes(members))
    assert not os.path.exists(Exploit.marker)


def test_a_pytorch_checkpoint_is_recognised():
    data = zip_bytes({"archive/data.pkl": pickle.dumps({}), "archive/version": "3"})
    with pytest.raises(RuntimeError, match="PyTorch checkpoint.*cannot be read without unpickling"):
        load_bytes(data)


def test_a_real_torch_save_file_is_recognised():
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf)
    with pytest.raises(RuntimeError, match="PyTorch checkpoint"):
        load_bytes(buf.getvalue())


def test_edutorch_checkpoint_is_refused_by_torch_weights_only_load():
    """The other direction: real torch cannot mistake our file for one of its own."""
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    with pytest.raises(Exception):
        torch.load(io.BytesIO(saved_bytes({"w": et.ones(1)})), weights_only=True)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "not a zip archive"),
        (os.urandom(64).replace(b"\x80", b"\x00").replace(b"PK", b"pk"), "not a zip archive"),
        (b"\x93NUMPY" + b"\x00" * 20, "single .npy array"),
    ],
)
def test_foreign_bytes_are_refused(data, message):
    with pytest.raises(RuntimeError, match=message):
        load_bytes(data)


def test_a_truncated_checkpoint_is_refused():
    data = saved_bytes({"w": et.ones(100)})
    for cut in (len(data) // 2, len(data) - 10, 10):
        with pytest.raises(RuntimeError, match="damaged or truncated"):
            load_bytes(data[:cut])


def test_a_flipped_byte_fails_the_checksum():
    payload = np.arange(64, dtype=np.float64)
    data = bytearray(saved_bytes({"w": et.tensor(payload)}))
    at = bytes(data).find(payload.tobytes()) + 100
    data[at] ^= 0xFF
    with pytest.raises(RuntimeError, match="damaged.*(CRC|crc)"):
        load_bytes(bytes(data))


def test_malformed_manifests_are_refused():
    good = saved_bytes({"w": et.ones(2)})
    arrays = {"arrays/0.npy": zipfile.ZipFile(io.BytesIO(good)).read("arrays/0.npy")}

    def with_manifest(text):
        return zip_bytes({"manifest.json": text, **arrays})

    manifest = json.loads(zipfile.ZipFile(io.BytesIO(good)).read("manifest.json"))
    cases = {
        "not json {": "unreadable manifest",
        json.dumps({"root": {"type": "none", "value": None}}): "no format marker",
        json.dumps({**manifest, "version": 99}): "format version 99",
        json.dumps({**manifest, "root": {"type": "function", "value": "os.system"}}): "unknown node type",
        json.dumps({**manifest, "root": {"type": "int", "value": "3"}}): "is not of type int",
        json.dumps({**manifest, "root": {**manifest["root"], "items": [[{"type": "str", "value": "w"},
                    {"type": "tensor", "array": 5, "dtype": "float32", "shape": [2]}]]}}): "member 'arrays/5.npy' is missing",
        json.dumps({**manifest, "root": {**manifest["root"], "items": [[{"type": "str", "value": "w"},
                    {"type": "tensor", "array": 0, "dtype": "int64", "shape": [2]}]]}}): "the manifest says 'int64'",
    }
    for text, message in cases.items():
        with pytest.raises(RuntimeError, match=message):
            load_bytes(with_manifest(text))
    with pytest.raises(RuntimeError, match="without 'manifest.json'"):
        load_bytes(zip_bytes(arrays))


def test_errors_are_runtime_errors_of_one_class():
    assert issubclass(serialization.CheckpointError, RuntimeError)
