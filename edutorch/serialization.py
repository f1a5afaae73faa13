"""``torch.save`` / ``torch.load`` without pickle.

PyTorch's checkpoints are pickles, and unpickling a file can run any code the
file asks for.  edutorch stores the same things (tensors, and dicts / lists /
tuples of tensors and plain values: a ``state_dict``, an optimizer's state)
in NumPy's own safe format instead.  A checkpoint is a zip archive, like
``np.savez`` writes, holding

* ``manifest.json``: the nested structure as JSON (types, key order, dtypes);
* ``arrays/<i>.npy``: one ``.npy`` file per tensor (little-endian, never pickled).

``load`` treats every file as untrusted: ``_checkpoint_reader`` checks the
zip and each ``.npy`` header against the file before anything is allocated,
and ``_Decoder`` checks every node of the manifest; anything unexpected (not
a zip, a PyTorch pickle, a bad checksum, an unsupported dtype, a decompression
bomb, a malformed manifest, a device edutorch does not have) is a
:class:`CheckpointError` (a ``RuntimeError``) that says what is wrong, in
time linear in the file and memory bounded by the file and the tensors it
declares (``_checkpoint_reader`` states the bounds; the fuzz test
``tests/utils/test_checkpoint_fuzz.py`` checks them).  ``save`` to a path replaces the file atomically
(``_atomic_file``), so a crash never leaves a half-written checkpoint.

Known difference from PyTorch: a whole ``nn.Module`` (or any other Python
object) cannot be saved, because that needs pickle; save its ``state_dict()``.
"""
import json
import os
import re
import zipfile
from collections import Counter, OrderedDict

import numpy as np

from . import _dtype, backend
from ._atomic_file import atomic_replace
from ._checkpoint_reader import MANIFEST, SUPPORTED, Archive, CheckpointError, short_repr, open_source
from ._tensor import Tensor
from ._dtype import is_floating as _is_floating

__all__ = ["save", "load", "CheckpointError"]

FORMAT = "edutorch-checkpoint"
FORMAT_VERSION = 1
_PLAIN_TYPES = {bool: "bool", int: "int", float: "float", str: "str", type(None): "none"}
MAX_KEYS_PER_HASH = 8  # more dict keys with one hash value than this were chosen to collide
_SAVED_DEVICE = re.compile(r"cpu|cuda(:[0-9]{1,4})?")  # the devices a tensor is saved from


# -- saving -----------------------------------------------------------------
class _Encoder:
    """Turn a nested object into a JSON-able tree plus a list of arrays.

    Every node is a small dict with a ``"type"`` key.  A tensor node points at
    its array by index; the same tensor object stored twice is written once
    and loads back as one object (as PyTorch keeps shared tensors shared).
    A container that contains itself is refused (JSON has no references).
    """

    def __init__(self):
        self.arrays = []
        self.tensor_index = {}  # id(tensor) -> index into self.arrays
        self.open_containers = set()  # ids of the lists/dicts being encoded (to catch cycles)

    def encode(self, obj):
        if isinstance(obj, Tensor):
            return self._encode_tensor(obj)
        if type(obj) in _PLAIN_TYPES:
            return {"type": _PLAIN_TYPES[type(obj)], "value": obj}
        if isinstance(obj, (dict, list, tuple)):
            return self._encode_container(obj)
        raise _unsupported(obj)

    def _encode_container(self, obj):
        """A dict / OrderedDict / list / tuple node, refusing one that contains itself."""
        if id(obj) in self.open_containers:
            raise ValueError(
                f"edutorch.save cannot store a {type(obj).__name__} that contains itself "
                "(a cyclic reference); checkpoints hold trees of tensors and plain values"
            )
        self.open_containers.add(id(obj))
        try:
            if isinstance(obj, dict):
                return self._encode_dict(obj)
            kind = "list" if isinstance(obj, list) else "tuple"
            return {"type": kind, "items": [self.encode(v) for v in obj]}
        finally:
            self.open_containers.discard(id(obj))

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


def _unsupported(obj):
    """The error for an object ``save`` cannot store; modules and optimizers point to ``state_dict()``."""
    from .nn.modules.module import Module

    kind = type(obj).__name__
    if isinstance(obj, Module) or callable(getattr(obj, "state_dict", None)):
        what = f"a whole nn.Module ({kind})" if isinstance(obj, Module) else f"an object of type {kind}"
        return TypeError(
            f"edutorch.save cannot store {what}: edutorch checkpoints never hold pickled Python "
            "objects or modules (unpickling can run arbitrary code). Save its state_dict() instead: "
            "edutorch.save(model.state_dict(), path), then model.load_state_dict(edutorch.load(path)) "
            "on a freshly built model"
        )
    return TypeError(
        f"edutorch.save cannot store an object of type {kind}: only tensors, "
        "Parameters, dict/OrderedDict/list/tuple and int/float/bool/str/None are supported "
        "(edutorch checkpoints never contain pickled Python objects)"
    )


def _build_manifest(obj):
    """The manifest as JSON text, and the tensors it refers to; bad objects fail here, before any write."""
    encoder = _Encoder()
    try:
        root = encoder.encode(obj)
    except RecursionError:
        raise ValueError("edutorch.save: the object is nested too deeply to store") from None
    manifest = {"format": FORMAT, "version": FORMAT_VERSION, "root": root}
    try:
        text = json.dumps(manifest)
    except ValueError as exc:  # an int past Python's str() digit limit
        raise ValueError(f"edutorch.save cannot store a value of the object: {exc}") from None
    return text, encoder.arrays


def _write_archive(stream, manifest_text, tensors):
    """Write the zip: the manifest, then one little-endian ``.npy`` per tensor (never pickled)."""
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(MANIFEST, manifest_text)
        for i, t in enumerate(tensors):
            array = backend.to_device(t._data, "cpu")
            if array.dtype == _dtype.bfloat16.np:  # .npy has no bfloat16: its 16 bits as uint16
                array = array.view(np.uint16)
            array = array.astype(array.dtype.newbyteorder("<"), copy=False)
            with archive.open(f"arrays/{i}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def save(obj, f):
    """Save ``obj`` (tensors, nested dicts/lists of tensors and plain values) to ``f``.

    ``f`` is a path (replaced atomically, see ``_atomic_file``) or a binary
    file-like object opened for writing.  A whole ``nn.Module`` cannot be
    saved (that needs pickle): save ``module.state_dict()``.
    """
    manifest_text, tensors = _build_manifest(obj)
    if not isinstance(f, (str, os.PathLike)):
        _write_archive(f, manifest_text, tensors)
        return
    with atomic_replace(f) as stream:
        _write_archive(stream, manifest_text, tensors)


# -- loading ------------------------------------------------------------------
class _Decoder:
    """Rebuild the object from the manifest tree, checking every node it reads."""

    def __init__(self, archive, map_location, mmap_path=None):
        self.archive, self.map_location, self.mmap_path = archive, map_location, mmap_path
        self.tensors = {}  # member name -> Tensor already rebuilt

    def fail(self, why):
        self.archive.fail(f"has a malformed manifest: {why}")

    def decode(self, node):
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            self.fail(f"expected an object with a 'type', got {short_repr(node)}")
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
        self.fail(f"unknown node type {short_repr(kind)}")

    def _items(self, node):
        items = node.get("items")
        if not isinstance(items, list):
            self.fail(f"a {node['type']} node without an 'items' list")
        return items

    def _decode_plain(self, kind, value):
        expected = {"bool": bool, "int": int, "float": (int, float), "str": str, "none": type(None)}[kind]
        if not isinstance(value, expected) or (kind in ("int", "float") and isinstance(value, bool)):
            self.fail(f"value {short_repr(value)} is not of type {kind}")
        if kind == "float":
            try:
                return float(value)
            except OverflowError:
                self.fail(f"the float value {short_repr(value)}... is out of range")
        return value

    def _decode_dict(self, node):
        """A dict / OrderedDict node: hashable keys, each once; only an OrderedDict carries ``_metadata``."""
        out = OrderedDict() if node["type"] == "ordereddict" else {}
        hashes = Counter()
        for pair in self._items(node):
            if not isinstance(pair, list) or len(pair) != 2:
                self.fail("a dict item that is not a [key, value] pair")
            key = self.decode(pair[0])
            self._check_key(key, out, hashes)
            out[key] = self.decode(pair[1])
        if "metadata" in node:
            if node["type"] != "ordereddict":
                self.fail("a plain dict node with 'metadata' (only a state_dict's OrderedDict has it)")
            out._metadata = self.decode(node["metadata"])
        return out

    def _check_key(self, key, out, hashes):
        """A dict key is hashable and new (a saved dict has no key twice), and few keys share its hash.

        Ints are hashed by value modulo 2**61 - 1, so a forged manifest can list
        keys that all hash alike (0, 2**61 - 1, 2 * (2**61 - 1), ...); building
        a dict of N such keys takes N**2 / 2 comparisons (80,000 keys: minutes).
        ``hashes`` counts the keys of this dict per hash value.
        """
        try:
            key_hash = hash(key)
        except TypeError:
            self.fail(f"an unhashable dict key of type {type(key).__name__} ({short_repr(key)})")
        if key in out:
            self.fail(f"a dict with the key {short_repr(key)} twice")
        hashes[key_hash] += 1
        if hashes[key_hash] > MAX_KEYS_PER_HASH:
            self.fail(f"more than {MAX_KEYS_PER_HASH} dict keys with the same hash value "
                      "(keys chosen to make building the dict slow)")

    def _decode_tensor(self, node):
        """A tensor node; nodes naming the same array share one tensor, as ``save`` wrote them."""
        index = node.get("array")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            self.fail("a tensor node without an array index")
        key = f"arrays/{index}.npy"  # a str key: forged int indices could share one hash
        if key not in self.tensors:
            self.tensors[key] = self._build_tensor(node, key)
        shared = self.tensors[key]
        if list(shared.shape) != node.get("shape") or shared._data.dtype.name != node.get("dtype"):
            self.fail(f"two tensor nodes share arrays/{index} but disagree on its dtype or shape")
        return shared

    def _check_tensor_node(self, node):
        """A tensor node's fields have the types ``save`` writes."""
        shape = node.get("shape")
        if not isinstance(shape, list) or not all(type(n) is int for n in shape):
            self.fail(f"a tensor node whose shape is not a list of ints: {short_repr(shape)}")
        for field, kind in (("dtype", str), ("device", str), ("requires_grad", bool)):
            if field in node and not isinstance(node[field], kind):
                self.fail(f"a tensor node whose {field} is not a {kind.__name__}: {short_repr(node[field])}")

    def _build_tensor(self, node, key):
        """Read the member ``key`` (checked by the archive) and compare it with the node."""
        from .nn.parameter import Parameter

        self._check_tensor_node(node)
        device = self._device(node)
        array = self.archive.read_array(key, self.mmap_path)
        if node.get("dtype") == "bfloat16" and array.dtype == np.uint16:  # stored as its bits
            array = array.view(_dtype.bfloat16.np)
        elif array.dtype == np.uint16:
            self.archive.fail(f"is refused: {key!r} holds uint16 (dtype '<u2'), which only a bfloat16 "
                              f"tensor's bits may be; {SUPPORTED}")
        if array.dtype.name != node.get("dtype") or list(array.shape) != node["shape"]:
            self.fail(
                f"{key!r} has dtype {array.dtype.name} and shape {list(array.shape)}, the "
                f"manifest says {short_repr(node.get('dtype'))} and {short_repr(node['shape'])}"
            )
        tensor = Tensor._make(backend.to_device(array, device))
        requires_grad = node.get("requires_grad", False) and _is_floating(array.dtype)
        if node["type"] == "parameter":
            return Parameter(tensor, requires_grad=requires_grad)
        return tensor.requires_grad_(requires_grad)

    def _device(self, node):
        """Where a tensor goes: ``map_location``'s choice, else the device it was saved from.

        The manifest's device must be one a tensor is saved from (``cpu``,
        ``cuda``, ``cuda:N``); a ``cuda`` tensor on a machine without CUDA is
        refused unless ``map_location`` moves it (as ``torch.load`` does).
        """
        saved = node.get("device", "cpu")
        if not _SAVED_DEVICE.fullmatch(saved):
            self.fail(f"a tensor saved on device {short_repr(saved)}; edutorch tensors are saved from cpu or cuda")
        target = _mapped_device(saved, self.map_location)
        if target is None and saved.startswith("cuda") and not backend.cuda_is_available():
            self.archive.fail(f"holds a tensor saved on device {saved!r}. {_NO_CUDA}")
        return _device_type(saved if target is None else target)


_NO_CUDA = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
            "False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")


def _mapped_device(saved, map_location):
    """The device ``map_location`` (str, device or dict) sends a tensor saved on ``saved`` to, or None."""
    if isinstance(map_location, dict):
        return map_location.get(saved, map_location.get(f"{saved}:0"))
    return map_location


def _device_type(target):
    """``"cpu"`` or ``"cuda"`` for a device the caller asked for (PyTorch's RuntimeError otherwise)."""
    target = str(target).split(":")[0]
    if target == "cuda" and not backend.cuda_is_available():
        raise RuntimeError(_NO_CUDA)
    if target not in ("cpu", "cuda"):
        raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {target}")
    return target


def load(f, map_location=None, weights_only=True, *, mmap=None):
    """Load what :func:`save` wrote.

    ``map_location``: ``"cpu"``, ``"cuda"``, a ``device``, or a dict such as
    ``{"cuda:0": "cpu"}``; ``None`` puts each tensor back where it was saved.
    ``weights_only`` is accepted so PyTorch code runs unchanged: edutorch
    loading is always "weights only" (it never unpickles).  ``mmap=True``
    (``f`` must be a path) maps the CPU tensors' data from the file instead of
    reading it: a large checkpoint loads at once, its pages read when used,
    and writing to a loaded tensor changes memory only, never the file (as
    PyTorch's default ``MAP_PRIVATE``).  A damaged, foreign or hostile file
    raises :class:`CheckpointError`, with or without ``mmap``.
    """
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    stream, name, owned = open_source(f)
    try:
        archive = Archive(stream, name)
        try:
            return _decode_manifest(archive, map_location, os.fspath(f) if mmap else None)
        finally:
            archive.close()
    finally:
        if owned:
            stream.close()


def _decode_manifest(archive, map_location, mmap_path=None):
    """Check the manifest's format marker and version, then rebuild its tree."""
    manifest = archive.read_manifest()
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        archive.fail("is not an edutorch checkpoint (no format marker)")
    if manifest.get("version") != FORMAT_VERSION:
        archive.fail(
            f"uses checkpoint format version {short_repr(manifest.get('version'))}; "
            f"this edutorch reads version {FORMAT_VERSION}"
        )
    try:
        return _Decoder(archive, map_location, mmap_path).decode(manifest.get("root"))
    except RecursionError:
        archive.fail("is nested too deeply to load")
