"""Reading a checkpoint's zip archive as untrusted input (edutorch's ``torch._weights_only_unpickler``).

``edutorch.load`` must survive any file a student is handed: damaged,
foreign, or built to do harm.  Nothing in a checkpoint is ever executed (no
pickle), and nothing is allocated before the size it depends on has been
checked against the file.  The checks, in the order a file meets them:

1. ``open_archive``: the file is a zip archive (if not, say which format it is);
2. ``_check_directory``: the zip's directory lists each member once, holds a
   manifest, uses only stored or deflate members, no encryption, and declares
   sizes that fit in the file without overlapping (a deflate member may
   expand at most ``MAX_EXPANSION`` times: no decompression bombs);
3. ``Archive.read_manifest``: the manifest is JSON text;
4. ``Archive.read_array``: a member's local header matches the directory;
   its ``.npy`` header names one of edutorch's dtypes (little-endian) and a
   shape whose size is exactly the data that follows; only then is the
   array allocated, filled straight from the file, and its CRC-32 checked.

Every failure is a :class:`CheckpointError` that says what is wrong.
"""
import io
import json
import math
import os
import struct
import sys
import zipfile
import zlib

import numpy as np

from . import _dtype

try:  # ISA-L's CRC-32 (the ``isal`` package) runs ~3x faster than zlib's: the same checksum
    from isal.isal_zlib import crc32
except ImportError:  # pragma: no cover - a platform without isal's wheels
    from zlib import crc32

MANIFEST = "manifest.json"
MAX_EXPANSION = 100  # a deflate member may hold at most 100x its compressed size
_READ_CHUNK = 1 << 22  # 4 MiB per read: its CRC then runs on data still in the CPU cache
_ZIP_MAGIC = zipfile.stringFileHeader  # b"PK\x03\x04": every zip archive starts with it
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
            zipfile.ZIP_LZMA: "lzma", 9: "deflate64", 93: "zstandard"}
# The .npy dtypes a checkpoint may hold: edutorch's own, little-endian, keyed by the
# full type string (byte order, kind, size), not by a name that hides the byte order.
# bfloat16, which .npy cannot name, is stored as its bits: uint16 (the manifest says bfloat16).
NPY_DTYPES = {d.np.newbyteorder("<").str: d.np.newbyteorder("<") for d in _dtype._ALL if d is not _dtype.bfloat16}
NPY_DTYPES["<u2"] = np.dtype("<u2")
SUPPORTED = ("edutorch tensors are float16/32/64, int8/16/32/64, uint8 or bool, little-endian "
             "(and bfloat16, stored as uint16 bits)")
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
               struct.error, NotImplementedError, zlib.error)


class CheckpointError(RuntimeError):
    """A file that is not a readable edutorch checkpoint (damaged, foreign or hostile)."""


def describe_foreign(head, names):
    """Why a file is not an edutorch checkpoint, in words a student can act on."""
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


def describe_dtype(dtype):
    """A NumPy dtype in words, for the message that refuses it."""
    if dtype.hasobject:
        return "pickled Python objects"
    if dtype.fields is not None or dtype.subdtype is not None or dtype.kind == "V":
        return "a structured (record) dtype"
    if not dtype.isnative:
        return f"big-endian {dtype.newbyteorder('=').name}"
    kinds = {"c": "complex", "U": "str", "S": "bytes", "M": "datetime", "m": "timedelta"}
    return kinds.get(dtype.kind, dtype.name)


def open_source(f):
    """A seekable binary stream for ``f`` (a path or a file object), and a name for messages."""
    if isinstance(f, (str, os.PathLike)):
        return open(f, "rb"), repr(os.fspath(f)), True
    if not (hasattr(f, "seekable") and f.seekable()) or f.tell() != 0:
        # a pipe, or a checkpoint that starts mid-file: read the rest, as torch.load does
        return io.BytesIO(f.read()), "the file", True
    return f, "the file", False


class Archive:
    """A checkpoint's zip archive, checked (steps 1-2) as it opens; members are read on demand."""

    def __init__(self, stream, name):
        self.stream, self.name = stream, name
        self.size = stream.seek(0, os.SEEK_END)
        stream.seek(0)
        head = stream.read(16)
        self.zip = self._open_zip(head)
        self.members = self._check_directory(head)

    def fail(self, why):
        raise CheckpointError(f"edutorch.load: {self.name} {why}")

    def _open_zip(self, head):
        """Step 1: the file is a zip archive; anything else is described and refused."""
        if head[:4] != _ZIP_MAGIC:
            self.fail(f"is not an edutorch checkpoint: {describe_foreign(head, [])}")
        try:
            return zipfile.ZipFile(self.stream)
        except _ZIP_ERRORS as exc:
            self.fail(f"is damaged or truncated: {exc}")

    def _check_directory(self, head):
        """Step 2: the zip's directory, checked against the file before any member is read."""
        infos = self.zip.infolist()
        names = [info.filename for info in infos]
        if len(set(names)) != len(names):
            twice = next(n for n in names if names.count(n) > 1)
            self.fail(f"is refused: the member {twice!r} appears more than once in the zip "
                      "(which copy is read would depend on the zip reader)")
        if MANIFEST not in names:
            self.fail(f"is not an edutorch checkpoint: {describe_foreign(head, names)}")
        for info in infos:
            self._check_member(info)
        self._check_no_overlap(infos)
        return dict(zip(names, infos))

    def _check_no_overlap(self, infos):
        """Members lie one after the other: no two entries share bytes (a zip bomb's trick)."""
        by_offset = sorted(infos, key=lambda info: info.header_offset)
        for info, following in zip(by_offset, by_offset[1:]):
            encoding = "utf-8" if info.flag_bits & 0x800 else "cp437"
            name_length = len(info.orig_filename.encode(encoding, "replace"))
            end = info.header_offset + zipfile.sizeFileHeader + name_length + info.compress_size
            if end > following.header_offset:
                self.fail(f"is refused: the members {info.filename!r} and {following.filename!r} "
                          "overlap in the file (their data would be read more than once)")

    def _check_member(self, info):
        """One directory entry: a known compression, no encryption, sizes that fit in the file."""
        member = repr(info.filename)
        if info.flag_bits & 0x1:
            self.fail(f"is refused: the member {member} is encrypted")
        method = info.compress_type
        if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            label = _METHODS.get(method, "unknown")
            self.fail(f"is refused: the member {member} uses compression method {method} ({label}); "
                      "a checkpoint's members are stored or deflate-compressed")
        if info.header_offset + info.compress_size > self.size:
            self.fail(f"is truncated: the member {member} declares {info.compress_size:,} bytes "
                      f"from offset {info.header_offset:,}, past the end of the file ({self.size:,} bytes)")
        if method == zipfile.ZIP_STORED and info.file_size != info.compress_size:
            self.fail(f"is damaged: the stored member {member} declares {info.file_size:,} bytes "
                      f"but occupies {info.compress_size:,}")
        if method == zipfile.ZIP_DEFLATED and info.file_size > MAX_EXPANSION * max(info.compress_size, 1):
            self.fail(f"is refused: the member {member} would expand from {info.compress_size:,} to "
                      f"{info.file_size:,} bytes, more than {MAX_EXPANSION}x (a decompression bomb?)")

    def close(self):
        self.zip.close()

    # -- members ------------------------------------------------------------------
    def _open_member(self, key):
        """A file-like reader of one member: stored ones straight from the file, deflate via zipfile."""
        info = self.members.get(key)
        if info is None:
            self.fail(f"is damaged: member {key!r} is missing")
        if info.compress_type == zipfile.ZIP_DEFLATED:
            try:
                return self.zip.open(info)  # checks the local header; decompresses at most file_size bytes
            except _ZIP_ERRORS as exc:
                self.fail(f"is damaged: {exc}")
        return _StoredMember(self.stream, self._data_offset(info), info)

    def _data_offset(self, info):
        """Where a member's bytes start: after its local header, which must match the directory."""
        self.stream.seek(info.header_offset)
        header = self.stream.read(zipfile.sizeFileHeader)
        if len(header) != zipfile.sizeFileHeader or header[:4] != _ZIP_MAGIC:
            self.fail(f"is damaged: the local header of {info.filename!r} is missing")
        fields = struct.unpack(zipfile.structFileHeader, header)
        name_length, extra_length = fields[10], fields[11]
        raw_name = self.stream.read(name_length)
        encoding = "utf-8" if fields[3] & 0x800 else "cp437"
        if raw_name.decode(encoding, "replace") != info.orig_filename:
            self.fail(f"is damaged: the local header of {info.filename!r} names {raw_name!r:.60}")
        offset = info.header_offset + zipfile.sizeFileHeader + name_length + extra_length
        if offset + info.compress_size > self.size:
            self.fail(f"is truncated: the member {info.filename!r} ends past the end of the file")
        return offset

    def read_manifest(self):
        """Step 3: the manifest's JSON (a dict is checked by the caller)."""
        member = self._open_member(MANIFEST)
        with member:
            try:
                raw = member.read()
            except _ZIP_ERRORS as exc:
                self.fail(f"is damaged: {exc}")
        if raw[:6] == b"\x93NUMPY":
            self.fail(f"has an unreadable manifest: {MANIFEST!r} is a .npy array, not JSON text")
        try:
            return json.loads(raw, parse_int=self._parse_int)
        except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deeply
            self.fail(f"has an unreadable manifest: {str(exc)[:200]}")

    def _parse_int(self, digits):
        """A JSON integer, refused past Python's limit on int/str conversion (4300 digits)."""
        limit = sys.get_int_max_str_digits()
        if limit and len(digits.lstrip("-")) > limit:
            self.fail(f"has an unreadable manifest: an integer of {len(digits.lstrip('-'))} digits "
                      f"(more than the {limit} Python converts)")
        return int(digits)

    def read_array(self, key):
        """Step 4: one ``.npy`` member, checked header first, then read into a fresh array."""
        member = self._open_member(key)
        with member:
            shape, fortran_order, dtype = self._read_npy_header(member, key)
            array = np.empty(math.prod(shape), dtype)
            self._fill(member, array.view(np.uint8).reshape(-1), key)
        return array.reshape(shape[::-1]).T if fortran_order else array.reshape(shape)

    def _read_npy_header(self, member, key):
        """The ``.npy`` header: dtype and shape, checked against the member's size."""
        try:
            shape, fortran_order, dtype = _parse_npy_header(member)
        except (*_ZIP_ERRORS, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
            self.fail(f"is damaged: {key!r} has no readable .npy header ({str(exc)[:200]})")
        if dtype.str not in NPY_DTYPES:
            self.fail(f"is refused: {key!r} holds {describe_dtype(dtype)} (dtype {dtype.str!r}); "
                      + SUPPORTED)
        if any(n < 0 for n in shape):
            self.fail(f"is damaged: {key!r} has a negative size in its shape {shape}")
        nbytes = math.prod(shape) * dtype.itemsize  # Python ints: a forged shape cannot overflow
        held = self.members[key].file_size - member.tell()
        if nbytes > held:
            self.fail(f"is truncated: {key!r} declares shape {shape} of {dtype.name} ({nbytes:,} bytes) "
                      f"but holds {held:,} bytes of data")
        if nbytes < held:
            self.fail(f"is damaged: {key!r} has {held - nbytes:,} bytes after the data its header declares")
        return shape, fortran_order, NPY_DTYPES[dtype.str]

    def _fill(self, member, out, key):
        """Read the member's data into ``out`` (a byte view of the new array), chunk by chunk."""
        filled = 0
        try:
            while filled < len(out):
                n = member.readinto(out[filled:filled + _READ_CHUNK])
                if not n:
                    self.fail(f"is truncated: {key!r} ends after {filled:,} of {len(out):,} data bytes")
                filled += n
            member.read(1)  # reach the end: a deflate member checks its CRC there
        except _ZIP_ERRORS as exc:
            self.fail(f"is damaged: {exc}")


def _parse_npy_header(member):
    """``(shape, fortran_order, dtype)`` by NumPy's own parser (a literal, at most 10,000 characters)."""
    version = np.lib.format.read_magic(member)
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    if version not in readers:  # 3.0 only adds UTF-8 field names, i.e. structured dtypes
        raise ValueError(f"unsupported .npy format version {version}")
    return readers[version](member)


class _StoredMember(io.RawIOBase):
    """A stored (uncompressed) member, read straight from the archive's file.

    ``ZipFile.open`` would copy every chunk through a ``bytes`` object;
    ``readinto`` here fills the caller's array directly, and the CRC-32 of
    each chunk is computed right after reading it, while it is still in the
    CPU's cache: loading costs one read of the file.  The CRC is checked when
    the last byte has been read, as ``ZipFile.open`` does (``torch.load``
    checks none).
    """

    def __init__(self, stream, offset, info):
        self.stream, self.offset, self.info = stream, offset, info
        self.position, self.crc = 0, 0

    def readable(self):
        return True

    def tell(self):
        return self.position

    def readinto(self, buffer):
        view = memoryview(buffer).cast("B")
        want = min(len(view), self.info.file_size - self.position)
        if want <= 0:
            return 0
        self.stream.seek(self.offset + self.position)
        n = _readinto(self.stream, view[:want])
        self.crc = crc32(view[:n], self.crc)
        self.position += n
        if self.position == self.info.file_size and self.crc != self.info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {self.info.filename!r}")
        return n


def _readinto(stream, view):
    """``stream.readinto(view)``, also for file objects that only have ``read``."""
    if hasattr(stream, "readinto"):
        return stream.readinto(view) or 0
    data = stream.read(len(view))
    view[:len(data)] = data
    return len(data)
