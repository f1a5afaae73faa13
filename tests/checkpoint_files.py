"""Building checkpoints by hand (zipfile + struct), for the tests of ``edutorch.load`` on hostile files.

``np.save`` and ``zipfile`` refuse to write a lying ``.npy`` header or a damaged
zip; these helpers write them anyway.  Used by ``tests/tensor/test_serialization_hostile.py``
and ``tests/utils/test_checkpoint_fuzz.py``.
"""
import io
import json
import os
import struct
import warnings
import zipfile

import pytest

from edutorch.serialization import CheckpointError, load, save


def npy_file(header_text, data=b"", version=(1, 0), length=None):
    """A .npy file with any header text at all, and any header length field (``length``, default: the true one)."""
    raw = header_text.encode("latin1", "replace")
    length_format = "<H" if version[0] < 2 else "<I"
    length = len(raw) if length is None else length
    size = struct.calcsize(length_format)
    return b"\x93NUMPY" + bytes(version) + struct.pack(length_format, length % 256**size) + raw + data


def padded(header_text, version=(1, 0)):
    """``header_text`` padded with spaces and a newline to NumPy's 64-byte alignment."""
    prefix = 10 if version[0] < 2 else 12
    return header_text + " " * ((-(prefix + len(header_text) + 1)) % 64) + "\n"


def npy_bytes(descr, shape, data=b"", fortran_order=False, version=(1, 0)):
    """A .npy file whose header says ``descr`` and ``shape``, whatever ``data`` holds."""
    header = repr({"descr": descr, "fortran_order": fortran_order, "shape": tuple(shape)})
    return npy_file(padded(header, version), data, version)


def tensor_node(dtype="float32", shape=(2,), array=0, device="cpu"):
    return {"type": "tensor", "array": array, "dtype": dtype, "shape": list(shape), "device": device,
            "requires_grad": False}


def manifest_text(root):
    return json.dumps({"format": "edutorch-checkpoint", "version": 1, "root": root})


def tensor_manifest(dtype="float32", shape=(2,), array=0):
    return manifest_text(tensor_node(dtype, shape, array))


def zip_bytes(members, compression=zipfile.ZIP_STORED):
    """A zip of ``[(name or ZipInfo, bytes), ...]`` (a list, so that a name may appear twice)."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names
        with zipfile.ZipFile(buf, "w", compression=compression) as z:
            for name, data in members:
                z.writestr(name, data)
    return buf.getvalue()


def members_of(data):
    """``[(name, bytes), ...]`` of a zip, in order."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [(name, z.read(name)) for name in z.namelist()]


def central_entries(data):
    """Offsets of the central-directory records (b'PK\\x01\\x02')."""
    out, at = [], data.find(b"PK\x01\x02")
    while at != -1:
        out.append(at)
        at = data.find(b"PK\x01\x02", at + 4)
    return out


def patch(data, offset, fmt, value):
    """``data`` with the field at ``offset`` set to ``value`` (wrapped to the field's size)."""
    data = bytearray(data)
    struct.pack_into(fmt, data, offset, value % 256 ** struct.calcsize(fmt))
    return bytes(data)


def saved_bytes(obj):
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def refused(data, *messages):
    """Load ``data`` (bytes or a path); it must raise CheckpointError whose message contains every one of ``messages``."""
    with pytest.raises(CheckpointError) as info:
        load(data if isinstance(data, (str, os.PathLike)) else io.BytesIO(data))
    for message in messages:
        assert message in str(info.value), (message, str(info.value))
    return str(info.value)
