"""edutorch.save / edutorch.load: exact round trips, atomic writes, refusal of foreign files."""
import io
import json
import os
import random
import pickle
import stat
import subprocess
import sys
import time
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import edutorch as et
from edutorch import nn
from edutorch import _atomic_file as serialization_atomic
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
    assert back.numpy().dtype == np.dtype(dtype)
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
        (random.Random(0).randbytes(64).replace(b"\x80", b"\x00").replace(b"PK", b"pk"), "not a zip archive"),
        (b"\x93NUMPY" + b"\x00" * 20, "single .npy array"),
    ],
    ids=["empty", "random-bytes", "npy-header"],
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


# -- saving to a path: atomic, but like writing the file in place ----------------------------
@pytest.fixture
def umask():
    """Set the process umask for one test (restored afterwards)."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_mode_the_umask_allows(tmp_path, umask, mask, mode):
    umask(mask)
    et.save({"w": et.ones(1)}, tmp_path / "new.pt")
    assert stat.S_IMODE(os.stat(tmp_path / "new.pt").st_mode) == mode


def test_a_new_file_gets_torchs_mode(tmp_path, umask):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    torch.save({"w": torch.ones(1)}, tmp_path / "torch.pt")
    et.save({"w": et.ones(1)}, tmp_path / "edutorch.pt")
    modes = [stat.S_IMODE(os.stat(tmp_path / n).st_mode) for n in ("torch.pt", "edutorch.pt")]
    assert modes[0] == modes[1] == 0o644


def test_an_existing_file_keeps_its_mode(tmp_path, umask):
    path = tmp_path / "ckpt.pt"
    et.save({"v": 1}, path)
    os.chmod(path, 0o640)
    et.save({"v": 2}, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640 and et.load(path) == {"v": 2}


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write any file")
def test_a_read_only_file_is_not_replaced(tmp_path):
    path = tmp_path / "ckpt.pt"
    et.save({"v": 1}, path)
    os.chmod(path, 0o444)
    with pytest.raises(PermissionError):
        et.save({"v": 2}, path)
    assert et.load(path) == {"v": 1} and os.listdir(tmp_path) == ["ckpt.pt"]


def test_saving_through_a_symlink_replaces_its_target(tmp_path):
    target = tmp_path / "real.pt"
    link = tmp_path / "latest.pt"
    et.save({"v": 1}, target)
    link.symlink_to(target.name)
    et.save({"v": 2}, link)
    assert link.is_symlink() and os.readlink(link) == "real.pt"
    assert et.load(target) == {"v": 2} and et.load(link) == {"v": 2}
    dangling = tmp_path / "dangling.pt"
    dangling.symlink_to("made-by-save.pt")
    et.save({"v": 3}, dangling)
    assert dangling.is_symlink() and et.load(tmp_path / "made-by-save.pt") == {"v": 3}


def test_non_regular_targets_are_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(RuntimeError, match=r"'.*pipe' is a FIFO \(named pipe\), not a regular file"):
        et.save({"v": 1}, fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    with pytest.raises(RuntimeError, match="is a directory, not a regular file"):
        et.save({"v": 1}, tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["pipe"]  # no temporary file left anywhere


def test_a_device_node_is_refused(tmp_path):
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    with pytest.raises(RuntimeError, match="is a character device, not a regular file"):
        et.save({"v": 1}, node)
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_a_missing_parent_directory_is_torchs_error(tmp_path):
    missing = tmp_path / "no" / "such"
    with pytest.raises(RuntimeError, match=f"^Parent directory {missing} does not exist.$"):
        et.save({"v": 1}, missing / "x.pt")


def test_a_missing_parent_directory_matches_torch(tmp_path):
    torch = pytest.importorskip("torch", reason="real PyTorch not installed: parity test skipped")
    path = tmp_path / "no" / "x.pt"
    with pytest.raises(RuntimeError) as theirs:
        torch.save({}, path)
    with pytest.raises(RuntimeError) as ours:
        et.save({}, path)
    assert str(ours.value) == str(theirs.value)


def test_an_error_while_writing_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    et.save({"version": 1}, path)

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np.lib.format, "write_array", disk_full)
    with pytest.raises(OSError, match="No space left"):
        et.save({"w": et.ones(3)}, path)
    assert os.listdir(tmp_path) == ["ckpt.pt"] and et.load(path) == {"version": 1}


def test_a_save_killed_with_sigkill_leaves_a_temporary_that_the_next_save_removes(tmp_path):
    """kill -9 cannot be cleaned up after; the temporary's lock dies with the process, so the next save can."""
    path = tmp_path / "ckpt.pt"
    et.save({"version": 1}, path)
    script = (
        "import sys, time, numpy as np, edutorch as et\n"
        "def hang(*a, **k):\n"
        "    print('writing', flush=True); time.sleep(60)\n"
        "np.lib.format.write_array = hang\n"
        f"et.save({{'w': et.ones(3)}}, {str(path)!r})\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(et.__file__)),
                                                        os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env)
    try:
        assert child.stdout.readline() == b"writing\n"
        leftovers = [n for n in os.listdir(tmp_path) if n != "ckpt.pt"]
        assert len(leftovers) == 1 and leftovers[0].startswith(".ckpt.pt.edutorch-tmp-")
        et.save({"version": 2}, path)  # the writer is alive and holds its lock: its file is kept
        assert (tmp_path / leftovers[0]).exists()
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    aged = time.time() - 2 * serialization_atomic.STALE_AFTER_S
    os.utime(tmp_path / leftovers[0], (aged, aged))
    et.save({"version": 3}, path)
    assert os.listdir(tmp_path) == ["ckpt.pt"] and et.load(path) == {"version": 3}


def test_stale_temporaries_are_removed_only_when_unlocked_old_and_of_this_path(tmp_path):
    path = tmp_path / "ckpt.pt"
    aged = time.time() - 2 * serialization_atomic.STALE_AFTER_S
    names = {"stale": ".ckpt.pt.edutorch-tmp-00000001", "fresh": ".ckpt.pt.edutorch-tmp-00000002",
             "locked": ".ckpt.pt.edutorch-tmp-00000003", "other": ".other.pt.edutorch-tmp-00000004",
             "mine": ".ckpt.pt.backup"}
    os.mkfifo(tmp_path / ".ckpt.pt.edutorch-tmp-fifo")  # not a file of ours: left alone, and no hang
    os.symlink("ckpt.pt", tmp_path / ".ckpt.pt.edutorch-tmp-link")
    for key, name in names.items():
        (tmp_path / name).write_bytes(b"partial")
        if key != "fresh":
            os.utime(tmp_path / name, (aged, aged))
    with open(tmp_path / names["locked"], "rb") as held:
        fcntl = pytest.importorskip("fcntl", reason="advisory locks need fcntl (not on Windows)")
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        et.save({"v": 1}, path)
    left = set(os.listdir(tmp_path))
    kept = {names[k] for k in ("fresh", "locked", "other", "mine")}
    assert left == {"ckpt.pt", ".ckpt.pt.edutorch-tmp-fifo", ".ckpt.pt.edutorch-tmp-link"} | kept


def test_a_cyclic_structure_is_a_clear_error(tmp_path):
    cyclic = [1]
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="cannot store a list that contains itself"):
        et.save(cyclic, tmp_path / "c.pt")
    d = {"a": {}}
    d["a"]["back"] = d
    with pytest.raises(ValueError, match="cannot store a dict that contains itself"):
        et.save(d, io.BytesIO())
    assert os.listdir(tmp_path) == []
    shared = [et.ones(1)]
    back = round_trip({"x": shared, "y": shared})  # shared but not cyclic: fine
    assert back["x"][0] is back["y"][0]


def test_a_deeply_nested_structure_is_a_clear_error():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested too deeply"):
        et.save(deep, io.BytesIO())


def test_an_int_too_long_for_json_is_a_clear_error():
    with pytest.raises(ValueError, match="cannot store a value of the object.*4300"):
        et.save({"n": 10**5000}, io.BytesIO())
    assert round_trip({"n": 10**300})["n"] == 10**300


def test_saving_a_whole_module_points_to_state_dict(tmp_path):
    """torch.save(model) pickles the module; an edutorch checkpoint never holds one (README, known differences)."""
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    with pytest.raises(TypeError, match=r"cannot store a whole nn.Module \(Sequential\).*never hold pickled "
                                        r"Python objects or modules.*edutorch.save\(model.state_dict\(\), path\)"):
        et.save(model, tmp_path / "m.pt")
    assert os.listdir(tmp_path) == []
    with pytest.raises(TypeError, match=r"whole nn.Module \(Linear\).*state_dict\(\)"):
        et.save({"model": model[0]}, io.BytesIO())
    optim = pytest.importorskip("edutorch.optim", reason="edutorch.optim not available")
    with pytest.raises(TypeError, match=r"cannot store an object of type SGD.*Save its state_dict\(\) instead"):
        et.save(optim.SGD(model.parameters(), lr=0.1), io.BytesIO())
