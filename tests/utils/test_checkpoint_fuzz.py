"""Fuzzing ``edutorch.load`` with hostile checkpoints (issue 23).

Four families of files, each generated from a fixed seed:

* crafted ``.npy`` headers: dtypes, shapes, ``fortran_order``, versions 1/2/3,
  lying header lengths, unparsable text, truncated or surplus data;
* crafted manifests: JSON type confusion, deep nesting, huge numbers, unknown
  keys, devices edutorch does not have, references to missing members;
* crafted zip structures: duplicate names, other compressions, a truncated
  central directory, zip64 oddities, absolute paths and ``..``, symbolic links;
* random bit flips, byte overwrites and truncations of valid checkpoints.

Every file either loads exactly what it holds (what NumPy reads from a
crafted ``.npy``; the saved object when the damage hit a byte nothing reads)
or raises ``CheckpointError``, never another exception.  No case writes a
file or runs code (an audit hook, ``sys.addaudithook``, watches), and each
finishes within ``HANG_GUARD_S``: a guard against hangs, not a timing test.

CI runs a fixed budget of a few seconds.  A long campaign runs N cases per
family and prints the counts, the slowest case (CPU time) and the largest
traced peak (``EDUTORCH_FUZZ_MEMORY=1``)::

    EDUTORCH_FUZZ_EXAMPLES=100000 EDUTORCH_FUZZ_MEMORY=1 \\
        pytest tests/utils/test_checkpoint_fuzz.py -k bit_flips -s
"""
import io
import json
import math
import os
import random
import stat
import struct
import sys
import time
import tracemalloc
import warnings
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest

import edutorch as et
from checkpoint_files import (central_entries, manifest_text, members_of, npy_bytes, npy_file, padded, patch,
                              refused, saved_bytes, tensor_node, zip_bytes)
from edutorch import _checkpoint_reader
from edutorch.nn.parameter import Parameter
from edutorch.serialization import CheckpointError, load

EXAMPLES = int(os.environ.get("EDUTORCH_FUZZ_EXAMPLES", "0"))  # 0: the CI budget of each family
MEASURE_MEMORY = os.environ.get("EDUTORCH_FUZZ_MEMORY") == "1"  # tracemalloc per case (slower)
HANG_GUARD_S = 20.0  # one case of a few kilobytes takes milliseconds


def budget(ci_cases):
    return EXAMPLES or ci_cases


# -- watching for writes and code execution ---------------------------------------------------
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_FORBIDDEN_EVENTS = {
    "pickle.find_class", "os.system", "subprocess.Popen", "os.exec", "os.posix_spawn",
    "os.fork", "os.forkpty", "ctypes.dlopen", "os.remove", "os.rename", "os.rmdir", "os.mkdir",
    "os.truncate", "os.symlink", "os.link", "os.chmod", "os.chown", "shutil.rmtree", "shutil.move",
}
_watch = {"active": False, "seen": []}


def _audit(event, args):
    """Record, while a case runs, every write-mode open, code run from no file, and process or file change."""
    if not _watch["active"]:
        return
    if event == "open":
        path, mode, flags = args
        if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (flags or 0) & _WRITE_FLAGS:
            _watch["seen"].append(f"open({path!r}, {mode!r}, {flags})")
    elif event == "exec":  # a module's import runs code from its file; anything else would be the file's
        filename = getattr(args[0], "co_filename", "")
        if not os.path.isfile(filename):
            _watch["seen"].append(f"exec of code from {filename!r}")
    elif event in _FORBIDDEN_EVENTS:
        _watch["seen"].append(f"{event}{args!r:.80}")


sys.addaudithook(_audit)  # hooks cannot be removed; this one does nothing outside a case


# -- comparing what loaded with what was expected ------------------------------------------------
def same(a, b):
    """``a`` and ``b`` are the same checkpoint contents: types, dict order, dtypes, shapes and bits."""
    if type(a) is not type(b):
        return False
    if isinstance(a, et.Tensor):
        return (a._data.dtype == b._data.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
                and np.ascontiguousarray(a._data).tobytes() == np.ascontiguousarray(b._data).tobytes())
    if isinstance(a, dict):
        return (list(a) == list(b) and all(same(a[k], b[k]) for k in a)
                and same(getattr(a, "_metadata", None), getattr(b, "_metadata", None)))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)  # plain values; NaN equals NaN here


def same_array(tensor, array):
    """A loaded tensor holds exactly NumPy's reading of the member (bfloat16 as its uint16 bits)."""
    data = tensor._data
    return (data.shape == array.shape and data.dtype.itemsize == array.dtype.itemsize
            and np.ascontiguousarray(data).tobytes() == np.ascontiguousarray(array).tobytes())


# -- running cases ------------------------------------------------------------------------------
class Campaign:
    """Runs cases, counts their outcomes, and keeps the first failures with a description to rebuild them."""

    def __init__(self, family):
        self.family, self.outcomes, self.failures = family, Counter(), []
        self.slowest, self.peak = (0.0, ""), (0, "")

    def run(self, description, source, check=None):
        """Load ``source`` (bytes or a path); ``check(loaded)`` says whether a successful load is right."""
        if MEASURE_MEMORY:
            tracemalloc.reset_peak()
        start, start_cpu, error = time.perf_counter(), time.process_time(), None
        _watch["active"], _watch["seen"] = True, []
        try:
            with warnings.catch_warnings():  # a warning is a finding too: an error under -W error
                warnings.simplefilter("error")
                loaded = load(io.BytesIO(source) if isinstance(source, bytes) else source)
            outcome = "loaded"
        except CheckpointError:
            outcome = "CheckpointError"
        except Exception as exc:  # the finding this test exists for: any other exception type
            outcome, error = type(exc).__name__, exc
        finally:
            _watch["active"] = False
        elapsed = time.perf_counter() - start
        self._measure(description, time.process_time() - start_cpu)
        if outcome == "loaded" and check is not None and not check(loaded):
            outcome = "loaded wrong contents"
        if _watch["seen"]:
            outcome, error = "wrote or ran code", _watch["seen"][:3]
        if elapsed > HANG_GUARD_S:
            outcome, error = "hang guard", f"{elapsed:.1f} s"
        self.outcomes[outcome] += 1
        if EXAMPLES and sum(self.outcomes.values()) % 10_000 == 0:  # a long campaign shows its progress
            print(f"[{self.family}] {dict(self.outcomes)}", flush=True)
        if outcome not in ("loaded", "CheckpointError") and len(self.failures) < 10:
            self.failures.append(f"{description}: {outcome}: {str(error)[:300]}")
        return outcome

    def _measure(self, description, cpu_time):
        """The slowest case by CPU time (a shared machine's wall time says little), the largest peak."""
        if cpu_time > self.slowest[0]:
            self.slowest = (cpu_time, description)
        if MEASURE_MEMORY:
            peak = tracemalloc.get_traced_memory()[1]
            if peak > self.peak[0]:
                self.peak = (peak, description)

    def finish(self):
        """Print the counts (seen with ``-s``) and fail with the first cases that went wrong."""
        print(f"\n[{self.family}] {sum(self.outcomes.values()):,} files: {dict(self.outcomes)}; "
              f"slowest {self.slowest[0] * 1000:.1f} ms of CPU ({self.slowest[1]})"
              + (f"; largest peak {self.peak[0] / 1e6:.2f} MB ({self.peak[1]})" if MEASURE_MEMORY else ""))
        assert not self.failures, "\n".join(self.failures)
        assert set(self.outcomes) <= {"loaded", "CheckpointError"}


@pytest.fixture
def campaign(request):
    if MEASURE_MEMORY:
        tracemalloc.start()
    c = Campaign(request.node.name)
    yield c
    if MEASURE_MEMORY:
        tracemalloc.stop()


def test_the_watch_sees_writes_and_code_run_from_no_file(tmp_path, monkeypatch, campaign):
    """The audit hook is what proves "nothing written, nothing run": it must see both."""
    def writes(f):
        (tmp_path / "written").write_bytes(b"x")

    def runs_code(f):
        exec(compile("1 + 1", "<checkpoint>", "eval"))

    for fake in (writes, runs_code):
        monkeypatch.setattr(sys.modules[__name__], "load", fake)
        assert campaign.run(fake.__name__, b"") == "wrote or ran code"
    monkeypatch.undo()
    assert campaign.run("a valid file", saved_bytes({"w": et.ones(2)})) == "loaded"


# -- valid checkpoints to damage ---------------------------------------------------------------------
def valid_checkpoints():
    """A few small checkpoints, and the objects they hold: a state_dict, a mix of every dtype and container
    (shared tensors, a Parameter, a transposed tensor stored in Fortran order, empty and 0-d tensors),
    and the same mix re-zipped with deflate."""
    et.manual_seed(0)
    model = et.nn.Sequential(et.nn.Linear(4, 3), et.nn.BatchNorm1d(3))
    shared = et.randn(2, 3)
    mixed = {
        "floats": [et.randn(3, dtype=et.float16), et.randn(2, 2, dtype=et.float64), et.randn(3).to(et.bfloat16)],
        "ints": (et.arange(5, dtype=et.int8), et.arange(4, dtype=et.int16), et.arange(3, dtype=et.int32),
                 et.tensor([True, False]), et.arange(3, dtype=et.uint8)),
        "shared": [shared, shared], "transposed": et.randn(3, 2).t(), "empty": et.zeros(0, 3), "scalar": et.tensor(2.5),
        "param": Parameter(et.randn(2)), "plain": [1, -2.5, "text", None, True, float("inf")],
        0: {1: "int keys", (2, "tuple"): "tuple key"}, "nested": OrderedDict(a=[[[]]], b=()),
    }
    stored_mixed = saved_bytes(mixed)
    return {
        "state_dict": (saved_bytes(model.state_dict()), model.state_dict()),
        "mixed": (stored_mixed, mixed),
        "mixed-deflate": (zip_bytes(members_of(stored_mixed), zipfile.ZIP_DEFLATED), mixed),
    }


@pytest.fixture(scope="module")
def originals():
    files = valid_checkpoints()
    for name, (data, obj) in files.items():  # the undamaged files load what they hold
        assert same(load(io.BytesIO(data)), obj), name
    return files


# -- family 1: crafted .npy headers -------------------------------------------------------------------
DESCRS = ["<f4", "<f8", "<f2", "|b1", "|u1", "|i1", "<i2", "<i4", "<i8", "<u2", "f4", "=f8", "<b1", "float32",
          ">f4", ">i8", "<c8", "|O", "<U3", "|S2", "<M8[s]", "<m8", "|V4", "<u4", "<u8", "<g", "f4,i4",
          "(2,)f4", "(99999999999,)f4", "", "<f", "xyz", "<f4\x00", "O", "V0", "<f16"]
ODD_DESCRS = [[("a", "<f4")], [("a", "<f4", (2,))], 5, None, b"<f4", ("<f4", (2,)), ["<f4"], {"descr": "<f4"}]
ODD_DIMS = [0, 1, 2, 3, 7, 255, 2**31, 2**32 + 1, 2**62, 2**63 - 1, 2**63, 2**64, 10**30, -1, -(2**63)]
ODD_ELEMENTS = [True, False, 2.0, "2", None, (2,), [2], 1j]
FORTRAN = [False, True, 0, 1, None, "False"]
VERSIONS = [(1, 0), (2, 0), (3, 0), (0, 0), (1, 1), (255, 255)]
BROKEN_TEXT = [
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, }",  # an unclosed "(" (tokenize.TokenError before)
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }",  # Python 2's long suffix
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
    "{'descr': '<f4', 'fortran_order': False}", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk",
    "[1, 2]", "None", "'text'", "{}", "{1: 2}", "(" * 300 + ")" * 300, "[" * 5000, "-" * 9000 + "1",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (" + "9" * 5000 + ",)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), '\x00': 0}", "{'descr': '\\N{bad}'}",
    "{'descr': '<f4', 'fortran_order': __import__('os').system('exit 3'), 'shape': (2,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (lambda: 2)()}", "{**{'descr': '<f4'}}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': {2}}", "\xff\xfe{", "",
]


def random_shape(rng):
    """Mostly small honest shapes; sometimes huge, negative, too many dimensions, or not ints at all."""
    roll = rng.random()
    if roll < 0.5:
        return tuple(rng.randrange(4) for _ in range(rng.randrange(4)))
    if roll < 0.8:
        return tuple(rng.choice(ODD_DIMS + [0, 1, 2]) for _ in range(rng.choice([1, 2, 3, 63, 64, 65, 100])))
    if roll < 0.95:
        shape = [rng.randrange(3) for _ in range(rng.randrange(1, 4))]
        shape[rng.randrange(len(shape))] = rng.choice(ODD_ELEMENTS)
        return tuple(shape)
    return rng.choice([[2], 2, "2", None, {2: 2}])


def npy_header_case(rng):
    """One crafted .npy member and a manifest node naming it (a description to rebuild it)."""
    descr = rng.choice(DESCRS) if rng.random() < 0.9 else rng.choice(ODD_DESCRS)
    shape, fortran, version = random_shape(rng), rng.choice(FORTRAN), rng.choice(VERSIONS)
    if rng.random() < 0.9:
        fortran = rng.choice([False, True])
    if rng.random() < 0.7:
        version = rng.choice([(1, 0), (2, 0)])
    if rng.random() < 0.1:
        text = rng.choice(BROKEN_TEXT)
    else:
        text = padded(repr({"descr": descr, "fortran_order": fortran, "shape": shape}), version)
    data = honest_data(rng, descr, shape)
    length = None
    if rng.random() < 0.1:
        length = rng.choice([0, 1, len(text) - 1, len(text) + 1, len(text) + len(data), 0xFFFF, 10_001, 2**32 - 1])
    npy = npy_file(text, data, version, length)
    if rng.random() < 0.1:
        npy = npy[:rng.randrange(len(npy) + 1)]
    node_shape = list(shape) if isinstance(shape, tuple) and all(type(n) is int for n in shape) else [0]
    dtype = dtype_of(descr)
    name = "bfloat16" if dtype == np.uint16 and rng.random() < 0.5 else getattr(dtype, "name", "float32")
    description = f"npy v{version} {text[:120]!r} length={length} data={len(data)} bytes"
    return npy, tensor_node(name, node_shape), description


def dtype_of(descr):
    """The NumPy dtype a header's ``descr`` string names, or None."""
    try:
        return np.dtype(descr) if isinstance(descr, str) else None
    except Exception:  # NumPy raises TypeError, ValueError, SyntaxError... for strings that name nothing
        return None


def honest_data(rng, descr, shape):
    """The bytes the header declares, when that is small; else (and sometimes anyway) a few bytes too many or few."""
    dtype = dtype_of(descr)
    nbytes = None
    if dtype is not None and isinstance(shape, tuple) and all(type(n) is int and n >= 0 for n in shape):
        nbytes = math.prod(shape) * dtype.itemsize
    if nbytes is None or nbytes > 4096:
        nbytes = rng.randrange(64)
    nbytes += rng.choice([0] * 8 + [-1, 1])
    return rng.randbytes(max(nbytes, 0))


def numpy_reads_the_same(npy):
    """What a successful load of this member must hold: NumPy's own reading of it."""
    def check(loaded):
        try:
            expected = np.load(io.BytesIO(npy), allow_pickle=False)
        except Exception:  # NumPy cannot read it: nothing should have loaded
            return False
        return same_array(loaded, expected)
    return check


def test_crafted_npy_headers(campaign):
    rng = random.Random(23)
    for i in range(budget(600)):
        npy, node, description = npy_header_case(rng)
        data = zip_bytes([("manifest.json", manifest_text(node)), ("arrays/0.npy", npy)])
        campaign.run(f"npy case {i}: {description}", data, numpy_reads_the_same(npy))
    campaign.finish()
    assert campaign.outcomes["loaded"] > 0 and campaign.outcomes["CheckpointError"] > 0


# -- family 2: crafted manifests ------------------------------------------------------------------------
HUGE = "@HUGE@"  # placeholders replaced in the JSON text (json.dumps cannot write these numbers)
DEEP = "@DEEP@"  # followed by a depth: list nodes nested that deep
JSON_VALUES = [None, True, False, 0, -1, 1.5, 2**63, -(2**63) - 1, 10**300, "", "x", "tensor", [], {}, [[]],
               {"type": "tensor"}, {"type": "none"}, {"type": "int", "value": True}, ["@HUGE@"], "@HUGE@",
               {"type": "float", "value": "@HUGE@"}, {"type": "int", "value": "@HUGE@"}]
HUGE_TEXT = ["9" * 5000, "-" + "9" * 4301, "1e400", "-1e400", "1" + "0" * 4300, "NaN", "Infinity", "1" * 4300]
DEVICES = ["cuda", "cuda:1", "xla", "meta", "", "CPU", "cpu:0", "cuda:", "cuda:99999", "mps", 5, None, ["cpu"]]
ARRAYS = [99, -1, 10**30, 2**61 - 1, "0", 1.0, True, None, [0]]


def paths_in(tree, path=()):
    """Every (path, value) of a JSON tree, the root first."""
    yield path, tree
    children = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
    for key, value in children:
        yield from paths_in(value, (*path, key))


def replace_at(tree, path, value):
    if not path:
        return value
    parent = tree
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return tree


def mutate_manifest(rng, tree):
    """One mutation of a manifest tree, and its name (an earlier mutation may have left no node of
    the kind a mutation needs, e.g. no tensor: then the tree is left as it is)."""
    nodes = list(paths_in(tree))
    dicts = [v for _, v in nodes if isinstance(v, dict)]
    tensors = [v for v in dicts if v.get("type") in ("tensor", "parameter")]
    pair_lists = [v["items"] for v in dicts if v.get("type") in ("dict", "ordereddict")
                  and isinstance(v.get("items"), list) and v["items"]]
    kind = rng.choice(["type confusion", "delete key", "unknown key", "device", "array", "deep nesting",
                       "huge number", "colliding keys", "format", "pairs"])
    if kind == "type confusion":
        tree = replace_at(tree, rng.choice(nodes)[0], json.loads(json.dumps(rng.choice(JSON_VALUES))))
    elif kind == "delete key" and any(dicts):
        node = rng.choice([d for d in dicts if d])
        del node[rng.choice(list(node))]
    elif kind == "unknown key" and dicts:  # ignored: the file still holds what was saved
        rng.choice(dicts)[rng.choice(["extra", "__class__", "items2", "\u00e9"])] = rng.choice(JSON_VALUES)
    elif kind == "device" and tensors:
        rng.choice(tensors)["device"] = rng.choice(DEVICES)
    elif kind == "array" and tensors:
        rng.choice(tensors)["array"] = rng.choice(ARRAYS)
    elif kind == "deep nesting":  # written into the text: json.dumps itself would recurse too deeply
        tree = replace_at(tree, rng.choice(nodes)[0], f"{DEEP}{rng.choice([50, 500, 990, 5000, 20_000])}")
    elif kind == "huge number":
        tree = replace_at(tree, rng.choice(nodes)[0], HUGE)
    elif kind == "colliding keys":  # ints that all hash to 0 (a dict of N of them takes N**2 / 2 steps)
        pairs = [[{"type": "int", "value": k * (2**61 - 1)}, {"type": "none", "value": None}] for k in range(40)]
        tree = replace_at(tree, rng.choice(nodes)[0], {"type": "dict", "items": pairs})
    elif kind == "format" and isinstance(tree, dict):
        tree[rng.choice(["format", "version"])] = rng.choice(JSON_VALUES + ["edutorch-checkpoint", 1, 2, "1", 1.0])
    elif kind == "pairs" and pair_lists:
        rng.choice(pair_lists)[0] = rng.choice([[], [1], [1, 2, 3], {"a": 1}, None])
    return tree, kind


def manifest_json(tree, rng):
    """The tree as JSON text, with the placeholders for huge numbers and deep nesting written in."""
    text = json.dumps(tree)
    while HUGE in text:
        text = text.replace(f'"{HUGE}"', rng.choice(HUGE_TEXT), 1).replace(HUGE, rng.choice(HUGE_TEXT), 1)
    while DEEP in text:
        start = text.index(f'"{DEEP}')
        end = text.index('"', start + 1) + 1
        depth = int(text[start + 1 + len(DEEP):end - 1])
        nested = '{"type": "list", "items": [' * depth + '{"type": "none", "value": null}' + "]}" * depth
        text = text[:start] + nested + text[end:]
    return text


def test_crafted_manifests(campaign, originals):
    rng = random.Random(2323)
    data, obj = originals["mixed"]
    members = members_of(data)
    arrays = [m for m in members if m[0] != "manifest.json"]
    original_tree = json.loads(dict(members)["manifest.json"])
    for i in range(budget(500)):
        tree, kinds = json.loads(json.dumps(original_tree)), []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            tree, kind = mutate_manifest(rng, tree)
            kinds.append(kind)
        text = manifest_json(tree, rng)
        harmless = set(kinds) == {"unknown key"}
        campaign.run(f"manifest case {i}: {kinds} {text[:200]!r}", zip_bytes([("manifest.json", text), *arrays]),
                     (lambda loaded: same(loaded, obj)) if harmless else None)
    campaign.finish()
    assert campaign.outcomes["loaded"] > 0 and campaign.outcomes["CheckpointError"] > 0


# -- family 3: crafted zip structures ---------------------------------------------------------------------
ODD_NAMES = ["/etc/passwd", "../../evil.npy", "arrays/../manifest.json", "/manifest.json", "C:\\evil", "arrays/",
             "a" * 300, "manifest.json\x00x", "\u00e9t\u00e9.npy", "./manifest.json", "arrays/0.npy/", "//x", ".."]
METHODS = [1, 2, 6, 9, 12, 14, 19, 93, 95, 98, 99, 0xFFFF]


def link_entry(name, target):
    info = zipfile.ZipInfo(name)
    info.create_system, info.external_attr = 3, (stat.S_IFLNK | 0o777) << 16
    return info, target


def zip_structure_case(rng, members):
    """One damaged or odd zip around the checkpoint's members; the description names what was done."""
    members = list(members)
    kind = rng.choice(["duplicate", "odd name", "renamed", "symlink", "directory", "method", "flags",
                       "truncated directory", "end record", "zip64", "offsets", "junk", "compression"])
    compression = zipfile.ZIP_STORED
    if kind == "duplicate":
        name, data = rng.choice(members)
        members.insert(rng.randrange(len(members) + 1), (name, data if rng.random() < 0.5 else rng.randbytes(40)))
    elif kind == "odd name":
        members.insert(rng.randrange(len(members) + 1), (rng.choice(ODD_NAMES), rng.choice(members)[1]))
    elif kind == "renamed":
        at = rng.randrange(len(members))
        members[at] = (rng.choice(ODD_NAMES), members[at][1])
    elif kind == "symlink":
        at = rng.randrange(len(members))
        target = rng.choice([b"/etc/passwd", b"../manifest.json", members[at][1]])
        entry = link_entry(members[at][0] if rng.random() < 0.5 else "link", target)
        if entry[0].filename == members[at][0]:
            members[at] = entry
        else:
            members.append(entry)
    elif kind == "directory":
        members.insert(rng.randrange(len(members) + 1), (rng.choice(["arrays/", "x/", "manifest.json/"]), b""))
    elif kind == "compression":
        compression = rng.choice([zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
    data = zip_bytes(members, compression)
    return damage_structure(rng, kind, data), kind


def damage_structure(rng, kind, data):
    """The byte-level damages: a field of a directory record, the end records, offsets, junk."""
    records = central_entries(data)
    record = rng.choice(records)
    if kind == "method":
        data = patch(data, record + 10, "<H", rng.choice(METHODS))
    elif kind == "flags":
        data = patch(data, record + 8, "<H", rng.choice([0x1, 0x8, 0x40, 0x800, 0x2000, 0xFFFF]))
    elif kind == "truncated directory":
        data = data[:rng.randrange(records[0], len(data))]
    elif kind == "end record":
        end = data.rfind(b"PK\x05\x06")
        field, fmt = rng.choice([(8, "<H"), (10, "<H"), (12, "<I"), (16, "<I"), (20, "<H")])
        data = patch(data, end + field, fmt, rng.choice([0, 1, 0xFFFF, 0xFFFFFFFF, len(data), 2**31]))
    elif kind == "zip64":
        data = zip64_oddity(rng, data, record)
    elif kind == "offsets":
        field = rng.choice([16, 20, 24, 42])  # crc, compressed size, size, local header offset
        data = patch(data, record + field, "<I", rng.choice([0, 1, 0xFFFFFFFF, 2**31, len(data), rng.randrange(2**32)]))
    elif kind == "junk":
        junk = rng.randbytes(rng.randrange(1, 100))
        data = junk + data if rng.random() < 0.5 else data + junk
    return data


def zip64_oddity(rng, data, record):
    """Sizes and offsets marked 'in the zip64 extra field' (0xFFFFFFFF), with or without such a field, and
    a zip64 end record whose directory size or offset is forged (2**63: read() would allocate it)."""
    if rng.random() < 0.5:
        field = rng.choice([20, 24, 42])
        return patch(data, record + field, "<I", 0xFFFFFFFF)
    end = data.rfind(b"PK\x05\x06")
    size_cd, offset_cd = struct.unpack_from("<II", data, end + 12)
    forged = rng.choice([2**63, 2**64 - 1, 2**32, len(data) * 2, 0])
    zip64_end = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 1, 1,
                            *(rng.choice([(forged, offset_cd), (size_cd, forged), (forged, forged)])))
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
    end_record = bytearray(data[end:])
    struct.pack_into("<HHII", end_record, 8, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    return data[:end] + zip64_end + locator + bytes(end_record)


def test_crafted_zip_structures(campaign, originals, tmp_path):
    rng = random.Random(2324)
    data, obj = originals["mixed"]
    members = members_of(data)
    path = tmp_path / "case.pt"  # loaded from a real file: a file's read() allocates what it is asked for
    for i in range(budget(300)):
        damaged, kind = zip_structure_case(rng, members)
        path.write_bytes(damaged)
        campaign.run(f"zip case {i} ({kind}, seed 2324)", path, lambda loaded: same(loaded, obj))
    campaign.finish()
    assert campaign.outcomes["loaded"] > 0 and campaign.outcomes["CheckpointError"] > 0


# -- family 4: bit flips and truncations of valid checkpoints --------------------------------------------
def damage(rng, data):
    """A random damage of ``data`` and its description: mostly single-bit flips, then truncations,
    several flips, overwritten or deleted bytes."""
    data = bytearray(data)
    roll = rng.random()
    if roll < 0.6:
        bit = rng.randrange(len(data) * 8)
        data[bit // 8] ^= 1 << bit % 8
        return bytes(data), f"flip bit {bit}"
    if roll < 0.75:
        end = rng.randrange(len(data))
        return bytes(data[:end]), f"truncate to {end} bytes"
    if roll < 0.85:
        bits = [rng.randrange(len(data) * 8) for _ in range(rng.randrange(2, 9))]
        for bit in bits:
            data[bit // 8] ^= 1 << bit % 8
        return bytes(data), f"flip bits {bits}"
    at, n = rng.randrange(len(data)), rng.randrange(1, 16)
    if roll < 0.95:
        fill = rng.choice([b"\x00", b"\xff", None])
        data[at:at + n] = fill * n if fill else rng.randbytes(n)
        return bytes(data[:len(data)]), f"overwrite {n} bytes at {at} with {fill!r}"
    del data[at:at + n]
    return bytes(data), f"delete {n} bytes at {at}"


def test_bit_flips_and_truncations(campaign, originals):
    """Whatever a damaged copy of a valid file loads must be exactly the saved object (a flip that hit a
    byte nothing reads: a timestamp, a local header's copy of a size); anything else is refused."""
    rng = random.Random(2325)
    names = sorted(originals)
    for i in range(budget(2500)):
        name = names[i % len(names)]
        data, obj = originals[name]
        damaged, description = damage(rng, data)
        campaign.run(f"{name}: {description} (case {i}, seed 2325)", damaged, lambda loaded, obj=obj: same(loaded, obj))
    campaign.finish()
    assert campaign.outcomes["loaded"] > 0 and campaign.outcomes["CheckpointError"] > 0


# -- the files of issue 23, one by one ---------------------------------------------------------------------
def with_npy(header_text, data=b"", node=None):
    npy = npy_file(padded(header_text), data)
    return zip_bytes([("manifest.json", manifest_text(node or tensor_node(shape=[0]))), ("arrays/0.npy", npy)])


@pytest.mark.parametrize("shape, words", [
    ((0, 2**63), "too large for any array"),
    ((1,) * 65, "65 dimensions (at most 64)"),
    ((True,), "not a tuple of ints: (True,)"),
    ((-2,), "negative size"),
    ((0, -1), "negative size"),
    ((2.0,), "not a tuple of ints"),
])
def test_npy_shapes_of_the_issue_are_refused(shape, words):
    """They raised ValueError / TypeError from NumPy; the data here is the size each shape declares."""
    size = math.prod(n for n in shape if isinstance(n, int) and n > 0) if words != "negative size" else 0
    header = repr({"descr": "<f4", "fortran_order": False, "shape": shape})
    refused(with_npy(header, bytes(4 * size if 0 not in shape else 0)), "'arrays/0.npy'", words)


def test_an_unclosed_parenthesis_in_a_header_is_refused():
    """It raised tokenize.TokenError (NumPy's fallback parser for Python 2 headers)."""
    refused(with_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, }"), "no readable .npy header")


def test_a_header_is_never_evaluated():
    refused(with_npy("{'descr': '<f4', 'fortran_order': __import__('os').system('exit 3'), 'shape': (0,)}"),
            "no readable .npy header")


def test_a_header_longer_than_numpy_reads_is_refused_before_reading_it():
    npy = b"\x93NUMPY\x02\x00" + struct.pack("<I", 2**32 - 1) + b"{"
    data = zip_bytes([("manifest.json", manifest_text(tensor_node())), ("arrays/0.npy", npy)])
    refused(data, "a .npy header of 4,294,967,295 bytes", "at most 10,000")


def on_device(device, values=(1.5, -2.0)):
    """A checkpoint of one float32 tensor whose manifest says it was saved on ``device``."""
    npy = npy_bytes("<f4", (len(values),), np.array(values, np.float32).tobytes())
    return zip_bytes([("manifest.json", manifest_text(tensor_node(device=device))), ("arrays/0.npy", npy)])


@pytest.mark.parametrize("device", ["cuda", "cuda:1", "xla", "meta", ""])
def test_a_manifest_device_edutorch_cannot_use_is_a_checkpoint_error(device):
    """They raised a plain RuntimeError; the message names the device."""
    if device.startswith("cuda") and et.backend.cuda_is_available():
        pytest.skip("CUDA is available here: a cuda checkpoint loads")
    refused(on_device(device), f"device {device!r}")


def test_a_cuda_checkpoint_loads_on_the_cpu_with_map_location():
    """As torch.load: map_location moves a valid cuda checkpoint (a str, a device or a dict)."""
    for device in ("cuda", "cuda:1"):
        for map_location in ("cpu", et.device("cpu"), {device: "cpu"}, {"cuda": "cpu", "cuda:1": "cpu"}):
            t = load(io.BytesIO(on_device(device)), map_location=map_location)
            assert t.device.type == "cpu" and t.tolist() == [1.5, -2.0]
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type at start of device string: xla"):
        load(io.BytesIO(saved_bytes(et.ones(2))), map_location="xla")  # the caller's mistake: PyTorch's RuntimeError


@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_a_cuda_checkpoint_loads_onto_cuda_where_there_is_one(fake_cuda, device):
    t = load(io.BytesIO(on_device(device)))
    assert t.device.type == "cuda" and t.tolist() == [1.5, -2.0]
    assert load(io.BytesIO(on_device(device)), map_location="cpu").device.type == "cpu"


def test_dict_keys_forged_to_share_one_hash_are_refused():
    """Ints hash modulo 2**61 - 1: 80,000 such keys took minutes to put in a dict."""
    pairs = [[{"type": "int", "value": k * (2**61 - 1)}, {"type": "none", "value": None}] for k in range(9)]
    refused(zip_bytes([("manifest.json", manifest_text({"type": "dict", "items": pairs}))]),
            "more than 8 dict keys with the same hash value")
    few = load(io.BytesIO(zip_bytes([("manifest.json", manifest_text({"type": "dict", "items": pairs[:8]}))])))
    assert list(few) == [k * (2**61 - 1) for k in range(8)]


def test_a_dict_key_twice_is_refused():
    pair = [{"type": "int", "value": 1}, {"type": "none", "value": None}]
    refused(zip_bytes([("manifest.json", manifest_text({"type": "dict", "items": [pair, pair]}))]), "the key 1 twice")


# -- time and memory bounds ------------------------------------------------------------------------------
def many_members(n, duplicate):
    """A checkpoint of ``n`` (unused) members and a manifest; with ``duplicate``, the last name twice."""
    members = [("manifest.json", manifest_text({"type": "none", "value": None}))]
    members += [(f"x/{i}", b"") for i in range(n)]
    if duplicate:
        members.append((f"x/{n - 1}", b""))
    return zip_bytes(members)


def test_a_duplicate_name_among_many_members_is_found_in_linear_time():
    """80,000 members with one duplicate took 112 s (each name counted against all); now as long as
    reading the directory.  Timed relative to the same file without the duplicate: a generous bound."""
    n = 20_000
    plain, twice = many_members(n, False), many_members(n, True)
    start = time.perf_counter()
    assert load(io.BytesIO(plain)) is None
    baseline = time.perf_counter() - start
    start = time.perf_counter()
    refused(twice, f"the member 'x/{n - 1}' appears more than once")
    assert time.perf_counter() - start < 5 * baseline + 1.0


def deflated_manifest(n):
    """A deflated manifest of unknown keys holding ~50 bytes of text per compressed byte (within the
    100x a member may expand): the shape of the issue's 1.5 MB file that took 1.33 GB."""
    rng = random.Random(0)
    junk = ",".join("[]," * 100 + str(rng.randrange(10**6)) for _ in range(n))
    text = f'{{"format": "edutorch-checkpoint", "version": 1, "junk": [{junk}], "root": {{"type": "none", "value": null}}}}'
    return zip_bytes([("manifest.json", text)], zipfile.ZIP_DEFLATED), len(text)


def test_a_deflate_bomb_manifest_is_refused_before_inflating():
    data, text_size = deflated_manifest(20_000)
    assert text_size > 40 * len(data) and text_size > _checkpoint_reader.MANIFEST_FREE
    tracemalloc.start()
    try:
        refused(data, "its manifest would expand", "a decompression bomb?")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"{peak:,} bytes"


def test_a_manifest_within_its_limit_costs_at_most_64_bytes_per_byte():
    """The stated bound: the manifest text is at most max(file size, 1 MiB), and json builds at most ~48
    bytes of objects per byte of it (deeply nested empty lists are the worst)."""
    nested = "[" * 50 + "]" * 50
    junk = ",".join([nested] * 4_000)
    text = f'{{"format": "edutorch-checkpoint", "version": 1, "junk": [{junk}], "root": {{"type": "none", "value": null}}}}'
    data = zip_bytes([("manifest.json", text)])
    tracemalloc.start()
    try:
        assert load(io.BytesIO(data)) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 64 * len(text), f"{peak / len(text):.1f} bytes per byte of manifest"


def test_a_forged_zip64_directory_size_reads_no_more_than_the_file(tmp_path):
    """A zip64 end record claiming a 2**62-byte central directory: a real file's read(2**62) would try
    to allocate it (MemoryError) before finding the end of the file."""
    data = saved_bytes({"w": et.ones(3)})
    end = data.rfind(b"PK\x05\x06")
    _, offset_cd = struct.unpack_from("<II", data, end + 12)
    zip64_end = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 2, 2, 2**62, offset_cd)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
    end_record = bytearray(data[end:])
    struct.pack_into("<HHII", end_record, 8, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    path = tmp_path / "zip64.pt"
    path.write_bytes(data[:end] + zip64_end + locator + bytes(end_record))
    tracemalloc.start()
    try:
        refused(path, "is damaged")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"{peak:,} bytes"
