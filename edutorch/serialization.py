"""``torch.save`` / ``torch.load`` without pickle.

PyTorch's checkpoints are pickles, and unpickling a file can run any code the
file asks for.  edutorch stores the same things (tensors, and dicts / lists /
tuples of tensors and plain values: a ``state_dict``, an optimizer's state)
in NumPy's own safe format instead.  A checkpoint is a zip archive, like
``np.savez`` writes, holding

* ``manifest.json``: the nested structure as JSON (types, key order, dtypes);
* ``arrays/<i>.npy``: one ``.npy`` file per tensor, written with
  ``allow_pickle=False``.

``load`` reads it back with ``np.load(..., allow_pickle=False)``, so loading
never executes code from the file; anything unexpected (not a zip, a PyTorch
pickle, a bad checksum, an object array, a malformed manifest) is a clear
``RuntimeError``.  ``save`` writes to a temporary file next to the target and
renames it into place, so a crash never leaves a half-written checkpoint.
"""
import io
import json
import os
import tempfile
import zipfile
from collections import OrderedDict

import numpy as np

from . import backend
from ._tensor import Tensor

__all__ = ["save", "load"]

FORMAT = "edutorch-checkpoint"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
_ZIP_MAGIC = b"PK\x03\x04"
_PLAIN_TYPES = {bool: "bool", int: "int", float: "float", str: "str", type(None): "none"}


# -- saving -----------------------------------------------------------------
class _Encoder:
    """Turn a nested object into a JSON-able tree plus a list of arrays.

    Every node is a small dict with a ``"type"`` key.  A tensor node points at
    its array by index; the same tensor object stored twice is written once
    and loads back as one object (as PyTorch keeps shared tensors shared).
    """

    def __init__(self):
        self.arrays = []
        self.tensor_index = {}  # id(tensor) -> index into self.arrays

    def encode(self, obj):
        if isinstance(obj, Tensor):
            return self._encode_tensor(obj)
        if type(obj) in _PLAIN_TYPES:
            return {"type": _PLAIN_TYPES[type(obj)], "value": obj}
        if isinstance(obj, (dict, OrderedDict)):
            return self._encode_dict(obj)
        if isinstance(obj, (list, tuple)):
            kind = "list" if isinstance(obj, list) else "tuple"
            return {"type": kind, "items": [self.encode(v) for v in obj]}
        raise TypeError(
            f"edutorch.save cannot store an object of type {type(obj).__name__}: only tensors, "
            "Parameters, dict/OrderedDict/list/tuple and int/float/bool/str/None are supported "
            "(edutorch checkpoints never contain pickled Python objects)"
        )

    def _encode_tensor(self, t):
        from .nn.parameter import Parameter

        index = self.tensor_index.get(id(t))
        if index is None:
            index = self.tensor_index[id(t)] = len(self.arrays)
            self.arrays.append(t)
        return {
            "type": "parameter" if isinstance(t, Parameter) else "tensor",
            "array": index,
            "dtype": t._data.dtype.name,
            "shape": list(t._data.shape),
            "device": t.device.type,
            "requires_grad": t.requires_grad,
        }

    def _encode_dict(self, d):
        node = {
            "type": "ordereddict" if isinstance(d, OrderedDict) else "dict",
            "items": [[self.encode(k), self.encode(v)] for k, v in d.items()],
        }
        metadata = getattr(d, "_metadata", None)  # what state_dict() attaches
        if metadata is not None:
            node["metadata"] = self.encode(metadata)
        return node


def _write_archive(stream, manifest, tensors):
    """Write the zip: the manifest, then one ``.npy`` per tensor (never pickled)."""
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(MANIFEST, json.dumps(manifest))
        for i, t in enumerate(tensors):
            array = backend.to_device(t._data, "cpu")
            with archive.open(f"arrays/{i}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def save(obj, f):
    """Save ``obj`` (tensors, nested dicts/lists of tensors and plain values) to ``f``.

    ``f`` is a path (written atomically: temp file + ``os.replace``) or a
    binary file-like object opened for writing.
    """
    encoder = _Encoder()
    manifest = {"format": FORMAT, "version": FORMAT_VERSION, "root": encoder.encode(obj)}
    if not isinstance(f, (str, os.PathLike)):
        _write_archive(f, manifest, encoder.arrays)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".edutorch", dir=directory)
    try:
        with os.fdopen(fd, "wb") as stream:
            _write_archive(stream, manifest, encoder.arrays)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)  # atomic: readers see the old file or the new one
    except BaseException:
        os.unlink(tmp)
        raise


# -- loading ------------------------------------------------------------------
class CheckpointError(RuntimeError):
    """A file that is not a readable edutorch checkpoint (damaged, foreign or hostile)."""


def _describe_foreign(head, names):
    """Why a file is not ours, in words a student can act on."""
    if head[:1] == b"\x80" or head[:2] in (b"(d", b"(l", b"}q", b"]q"):
        return (
            "it is a Python pickle (e.g. a legacy torch.save file or pickle.dump output); "
            "edutorch never unpickles files, because unpickling can run arbitrary code"
        )
    if any(name.endswith("data.pkl") for name in names):
        return (
            "it is a PyTorch checkpoint (torch.save's zip with a pickled data.pkl), which cannot "
            "be read without unpickling; load it with real PyTorch "
            "(torch.load(f, weights_only=True)), convert the tensors with .numpy(), and save "
            "them with edutorch.save"
        )
    if head[:6] == b"\x93NUMPY":
        return "it is a single .npy array, not a checkpoint; read it with numpy.load"
    if head[:4] == _ZIP_MAGIC:
        return f"it is a zip archive without {MANIFEST!r}"
    return "it is not a zip archive (is the file truncated, or of another format?)"


def _open_archive(f):
    """Open ``f`` with ``np.load(allow_pickle=False)``; foreign or damaged files raise."""
    name = repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file"
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as stream:
            data = stream.read()
    else:
        data = f.read()
    names = []
    if data[:4] == _ZIP_MAGIC:
        try:
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise CheckpointError(f"edutorch.load: {name} is damaged or truncated: {exc}") from None
    if MANIFEST not in names:
        raise CheckpointError(
            f"edutorch.load: {name} is not an edutorch checkpoint: {_describe_foreign(data[:16], names)}"
        )
    return np.load(io.BytesIO(data), allow_pickle=False), name


def _read_member(archive, key, name):
    """One member of the archive; bad CRCs and pickled (object) arrays are refused."""
    try:
        return archive[key]
    except KeyError:
        raise CheckpointError(f"edutorch.load: {name} is damaged: member {key!r} is missing") from None
    except ValueError as exc:  # np.load refusing an object array (it would need pickle)
        raise CheckpointError(
            f"edutorch.load: {name} is refused: {key!r} holds pickled Python objects ({exc})"
        ) from None
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise CheckpointError(f"edutorch.load: {name} is damaged: {exc}") from None


class _Decoder:
    """Rebuild the object from the manifest tree, checking every node it reads."""

    def __init__(self, archive, name, map_location):
        self.archive, self.name, self.map_location = archive, name, map_location
        self.tensors = {}  # array index -> Tensor already rebuilt

    def fail(self, why):
        raise CheckpointError(f"edutorch.load: {self.name} has a malformed manifest: {why}")

    def decode(self, node):
        if not isinstance(node, dict) or "type" not in node:
            self.fail(f"expected an object with a 'type', got {node!r:.80}")
        kind = node["type"]
        if kind in ("bool", "int", "float", "str", "none"):
            return self._decode_plain(kind, node.get("value"))
        if kind in ("list", "tuple"):
            items = [self.decode(v) for v in self._items(node)]
            return items if kind == "list" else tuple(items)
        if kind in ("dict", "ordereddict"):
            return self._decode_dict(node)
        if kind in ("tensor", "parameter"):
            return self._decode_tensor(node)
        self.fail(f"unknown node type {kind!r:.40}")

    def _items(self, node):
        items = node.get("items")
        if not isinstance(items, list):
            self.fail(f"a {node['type']} node without an 'items' list")
        return items

    def _decode_plain(self, kind, value):
        expected = {"bool": bool, "int": int, "float": (int, float), "str": str, "none": type(None)}[kind]
        if not isinstance(value, expected) or (kind == "int" and isinstance(value, bool)):
            self.fail(f"value {value!r:.40} is not of type {kind}")
        return float(value) if kind == "float" else value

    def _decode_dict(self, node):
        out = OrderedDict() if node["type"] == "ordereddict" else {}
        for pair in self._items(node):
            if not isinstance(pair, list) or len(pair) != 2:
                self.fail("a dict item that is not a [key, value] pair")
            key = self.decode(pair[0])
            if isinstance(key, (list, dict)):
                self.fail("an unhashable dict key")
            out[key] = self.decode(pair[1])
        if "metadata" in node:
            out._metadata = self.decode(node["metadata"])
        return out

    def _decode_tensor(self, node):
        index = node.get("array")
        if not isinstance(index, int) or isinstance(index, bool):
            self.fail("a tensor node without an array index")
        if index not in self.tensors:
            self.tensors[index] = self._build_tensor(node, index)
        return self.tensors[index]

    def _build_tensor(self, node, index):
        from .nn.parameter import Parameter

        array = _read_member(self.archive, f"arrays/{index}", self.name)
        if not isinstance(array, np.ndarray):
            self.fail(f"arrays/{index} is not a .npy array")
        if array.dtype.name != node.get("dtype") or list(array.shape) != node.get("shape"):
            self.fail(
                f"arrays/{index} has dtype {array.dtype.name} and shape {list(array.shape)}, the "
                f"manifest says {node.get('dtype')!r:.20} and {node.get('shape')!r:.40}"
            )
        device = _target_device(node.get("device", "cpu"), self.map_location)
        tensor = Tensor._make(backend.to_device(array, device))
        requires_grad = bool(node.get("requires_grad", False)) and array.dtype.kind == "f"
        if node["type"] == "parameter":
            return Parameter(tensor, requires_grad=requires_grad)
        return tensor.requires_grad_(requires_grad)


def _target_device(saved, map_location):
    """Where a tensor saved on ``saved`` goes, given ``map_location`` (str, device or dict)."""
    if isinstance(map_location, dict):
        target = map_location.get(saved, map_location.get(f"{saved}:0", saved))
    elif map_location is None:
        target = saved
    else:
        target = map_location
    target = str(target).split(":")[0]
    if target == "cuda" and not backend.cuda_is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
            "False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU."
        )
    if target not in ("cpu", "cuda"):
        raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {target}")
    return target


def load(f, map_location=None, weights_only=True):
    """Load what :func:`save` wrote.

    ``map_location``: ``"cpu"``, ``"cuda"``, a ``device``, or a dict such as
    ``{"cuda:0": "cpu"}``; ``None`` puts each tensor back where it was saved.
    ``weights_only`` is accepted so PyTorch code runs unchanged: edutorch
    loading is always "weights only" (it never unpickles).
    """
    archive, name = _open_archive(f)
    with archive:
        raw = _read_member(archive, MANIFEST, name)
        try:
            manifest = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise CheckpointError(f"edutorch.load: {name} has an unreadable manifest: {exc}") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise CheckpointError(f"edutorch.load: {name} is not an edutorch checkpoint (no format marker)")
        if manifest.get("version") != FORMAT_VERSION:
            raise CheckpointError(
                f"edutorch.load: {name} uses checkpoint format version {manifest.get('version')!r:.20}; "
                f"this edutorch reads version {FORMAT_VERSION}"
            )
        decoder = _Decoder(archive, name, map_location)
        try:
            return decoder.decode(manifest.get("root"))
        except RecursionError:
            raise CheckpointError(f"edutorch.load: {name} is nested too deeply to load") from None
