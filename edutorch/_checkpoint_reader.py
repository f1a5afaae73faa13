"""Reading a checkpoint's zip archive as untrusted input (edutorch's ``torch._weights_only_unpickler``).

``edutorch.load`` must survive any file a student is handed: damaged,
foreign, or built to do harm.  Nothing in a checkpoint is ever executed (no
pickle; a ``.npy`` header is read by ``ast.literal_eval``, which only parses
literals), nothing is written, and nothing is allocated before the size it
depends on has been checked against the file.  The checks, in the order a
file meets them:

1. ``Archive._open_zip``: the file is a zip archive (if not, say which format it is);
2. ``Archive._check_directory``: the zip's directory lists each member once,
   holds a manifest, uses only stored or deflate members, no encryption, no
   symbolic links, and declares sizes that fit in the file without
   overlapping (a deflate member may expand at most ``MAX_EXPANSION`` times:
   no decompression bombs);
3. ``Archive.read_manifest``: the manifest is JSON text of at most
   ``manifest_limit`` bytes;
4. ``Archive.read_array``: a member's local header matches the directory;
   its ``.npy`` header names one of edutorch's dtypes (little-endian) and a
   shape whose size is exactly the data that follows; only then is the
   array allocated, filled straight from the file, and its CRC-32 checked.

Every failure is a :class:`CheckpointError` that says what is wrong.

Bounds (tested in ``tests/utils/test_checkpoint_fuzz.py``), for a file of
``S`` bytes whose ``.npy`` headers declare ``T`` bytes of tensors:

* time: linear in ``S + T`` (no step compares every member with every other,
  and ``serialization._Decoder`` refuses dict keys forged to share one hash);
* memory: at most ``T + 64 * max(S, 1 MiB) + 4 MiB``.  ``T``: each tensor
  is allocated once, at the size its header declares, after that size is
  checked against its member (``T <= MAX_EXPANSION * S``).  ``64 * ...``:
  ``json`` builds at most ~48 bytes of Python objects per byte of manifest
  text (deeply nested empty lists; a real manifest ~12), and the text is at
  most ``manifest_limit(S) = max(S, 1 MiB)`` bytes; the zip directory costs
  ~540 bytes per member, each of which takes at least 47 bytes of the file.
  ``4 MiB``: one ``_READ_CHUNK`` of a deflate member.
"""
import ast
import errno
import io
import json
import math
import os
import reprlib
import stat
import struct
import sys
import warnings
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
MANIFEST_FREE = 1 << 20  # a manifest may always be 1 MiB long, and longer only up to the file's size
MAX_NPY_HEADER = 10_000  # NumPy's own limit on a .npy header (``max_header_size``)
MAX_DIMS = 64  # NumPy's limit on an array's number of dimensions
_NPY_LENGTH_FORMATS = {(1, 0): "<H", (2, 0): "<I"}  # how each .npy version stores its header's length
_NPY_KEYS = {"descr", "fortran_order", "shape"}
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
# What ``ast.literal_eval`` raises on text that is not a literal (or one nested too deeply)
_LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)
# What ``np.dtype`` raises on a string that names no dtype
_DTYPE_ERRORS = (TypeError, ValueError, SyntaxError, KeyError, OverflowError, RecursionError)


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


def manifest_limit(file_size):
    """The most bytes of manifest text a file of ``file_size`` bytes may hold.

    A stored manifest lies inside the file, so it is never longer than the
    file.  A deflated one could expand ``MAX_EXPANSION`` times, and ``json``
    builds up to ~48 bytes of Python objects per byte of text: a 1.5 MB file
    took 1.3 GB.  So a manifest may be as long as the whole file, or 1 MiB
    (room for a state_dict of thousands of tensors), whichever is more.
    """
    return max(MANIFEST_FREE, file_size)


def open_source(f):
    """A seekable binary stream for ``f`` (a path or a file object), and a name for messages."""
    if isinstance(f, (str, os.PathLike)):
        return open(f, "rb"), repr(os.fspath(f)), True
    if not (hasattr(f, "seekable") and f.seekable()) or f.tell() != 0:
        # a pipe, or a checkpoint that starts mid-file: read the rest, as torch.load does
        return io.BytesIO(f.read()), "the file", True
    return f, "the file", False


class _BoundedFile:
    """The checkpoint's stream, seen through a guard: reads and seeks stay inside the file.

    ``zipfile`` reads the central directory with ``read(size)`` and seeks to
    its offset, both taken from the file: a forged zip64 size of 2**63 would
    make ``read`` on a real file allocate that much before finding the end of
    the file, and a forged offset of 2**63 makes ``seek`` raise OverflowError.
    """

    def __init__(self, stream, size):
        self.stream, self.size = stream, size

    def seekable(self):
        return True

    def seek(self, offset, whence=os.SEEK_SET):
        target = offset + {os.SEEK_SET: 0, os.SEEK_CUR: self.stream.tell(), os.SEEK_END: self.size}[whence]
        if not 0 <= target <= self.size:  # an OSError, which zipfile expects of a bad seek
            raise OSError(errno.EINVAL, f"offset {target:,} is outside the file ({self.size:,} bytes)")
        return self.stream.seek(target)

    def tell(self):
        return self.stream.tell()

    def read(self, n=-1):
        left = max(self.size - self.stream.tell(), 0)
        return self.stream.read(left if n is None or n < 0 else min(n, left))

    def readinto(self, buffer):
        return _readinto(self.stream, buffer)


class Archive:
    """A checkpoint's zip archive, checked (steps 1-2) as it opens; members are read on demand."""

    def __init__(self, stream, name):
        self.name = name
        self.size = stream.seek(0, os.SEEK_END)
        self.stream = _BoundedFile(stream, self.size)
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
        members = self._unique_names(infos)
        if MANIFEST not in members:
            self.fail(f"is not an edutorch checkpoint: {describe_foreign(head, list(members))}")
        for info in infos:
            self._check_member(info)
        self._check_no_overlap(infos)
        return members

    def _unique_names(self, infos):
        """Each member is listed once: with two copies of a name, which one is read would
        depend on the zip reader.  (One pass with a dict: linear in the number of members.)"""
        members = {}
        for info in infos:
            if info.filename in members:
                self.fail(f"is refused: the member {info.filename!r:.200} appears more than once in the zip "
                          "(which copy is read would depend on the zip reader)")
            members[info.filename] = info
        return members

    def _check_no_overlap(self, infos):
        """Members lie one after the other: no two entries share bytes (a zip bomb's trick)."""
        by_offset = sorted(infos, key=lambda info: info.header_offset)
        for info, following in zip(by_offset, by_offset[1:]):
            encoding = "utf-8" if info.flag_bits & 0x800 else "cp437"
            name_length = len(info.orig_filename.encode(encoding, "replace"))
            end = info.header_offset + zipfile.sizeFileHeader + name_length + info.compress_size
            if end > following.header_offset:
                self.fail(f"is refused: the members {info.filename!r:.200} and {following.filename!r:.200} "
                          "overlap in the file (their data would be read more than once)")

    def _check_member(self, info):
        """One directory entry: a plain file, stored or deflated, whose sizes fit in the file."""
        self._check_member_kind(info)
        self._check_member_extent(info)

    def _check_member_kind(self, info):
        """Not encrypted, not a symbolic link, and stored or deflate-compressed: the only members
        ``save`` writes (or an archiver re-zipping a checkpoint); other methods are bomb-prone."""
        member = f"{info.filename!r:.200}"
        if info.flag_bits & 0x1:
            self.fail(f"is refused: the member {member} is encrypted")
        if info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16):  # 3: made on Unix
            self.fail(f"is refused: the member {member} is a symbolic link (a checkpoint holds only files)")
        method = info.compress_type
        if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            label = _METHODS.get(method, "unknown")
            self.fail(f"is refused: the member {member} uses compression method {method} ({label}); "
                      "a checkpoint's members are stored or deflate-compressed")

    def _check_member_extent(self, info):
        """The member's bytes lie inside the file, a stored member's two sizes agree, and a deflated
        one expands at most ``MAX_EXPANSION`` times (a decompression bomb is refused unread)."""
        member = f"{info.filename!r:.200}"
        if info.header_offset < 0:  # a damaged directory can place a member before the file's start
            self.fail(f"is damaged: the zip directory places the member {member} before the start of the file")
        if info.header_offset + info.compress_size > self.size:
            self.fail(f"is truncated: the member {member} declares {info.compress_size:,} bytes "
                      f"from offset {info.header_offset:,}, past the end of the file ({self.size:,} bytes)")
        if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
            self.fail(f"is damaged: the stored member {member} declares {info.file_size:,} bytes "
                      f"but occupies {info.compress_size:,}")
        if info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > MAX_EXPANSION * max(info.compress_size, 1):
            self.fail(f"is refused: the member {member} would expand from {info.compress_size:,} to "
                      f"{info.file_size:,} bytes, more than {MAX_EXPANSION}x (a decompression bomb?)")

    def close(self):
        self.zip.close()

    # -- members ------------------------------------------------------------------
    def _open_member(self, key):
        """A file-like reader of one member: stored ones straight from the file, deflate via zipfile."""
        info = self.members.get(key)
        if info is None:
            self.fail(f"is damaged: member {key!r:.200} is missing")
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

    def _read(self, member, n, key):
        """Up to ``n`` bytes of a member; a damaged deflate stream or a bad CRC is a CheckpointError."""
        try:
            return member.read(n)
        except _ZIP_ERRORS as exc:
            self.fail(f"is damaged: {key!r} cannot be read ({exc})")

    def read_manifest(self):
        """Step 3: the manifest's JSON (a dict is checked by the caller), at most ``manifest_limit`` bytes."""
        info = self.members[MANIFEST]
        limit = manifest_limit(self.size)
        if info.file_size > limit:
            self.fail(f"is refused: its manifest would expand from {info.compress_size:,} to {info.file_size:,} "
                      f"bytes, more than the {limit:,} bytes a file of {self.size:,} bytes may hold "
                      "(a decompression bomb?)")
        with self._open_member(MANIFEST) as member:
            raw = self._read(member, -1, MANIFEST)  # to its end (file_size bytes), where the CRC is checked
        if raw[:6] == b"\x93NUMPY":
            self.fail(f"has an unreadable manifest: {MANIFEST!r} is a .npy array, not JSON text")
        try:
            return json.loads(raw, parse_int=self._parse_int)
        except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deeply
            self.fail(f"has an unreadable manifest: {str(exc)[:200]}")
        except MemoryError:
            self.fail(f"is refused: its manifest of {len(raw):,} bytes needs more memory than this machine can allocate")

    def _parse_int(self, digits):
        """A JSON integer, refused past Python's limit on int/str conversion (4300 digits)."""
        limit = sys.get_int_max_str_digits()
        if limit and len(digits.lstrip("-")) > limit:
            self.fail(f"has an unreadable manifest: an integer of {len(digits.lstrip('-'))} digits "
                      f"(more than the {limit} Python converts)")
        return int(digits)

    # -- .npy members -------------------------------------------------------------
    def read_array(self, key, mmap_path=None):
        """Step 4: one ``.npy`` member, checked header first, then read into a fresh array.

        With ``mmap_path`` (the checkpoint's own path: ``torch.load(mmap=True)``) a stored
        member's data is mapped from the file instead of read (:meth:`_map`); the same checks apply.
        """
        with self._open_member(key) as member:
            header = self._npy_header(member, key)
            dtype = self._npy_dtype(header["descr"], key)
            shape = self._npy_shape(header["shape"], key)
            self._check_npy_data_size(member, key, shape, dtype)
            self._check_numpy_limit(shape, dtype, key)
            if mmap_path is not None and isinstance(member, _StoredMember) and math.prod(shape):
                array = self._map(member, mmap_path, math.prod(shape), dtype, key)
            else:
                array = self._allocate(math.prod(shape), dtype, key)
                self._fill(member, array.view(np.uint8).reshape(-1), key)
        return array.reshape(shape[::-1]).T if header["fortran_order"] else array.reshape(shape)

    def _map(self, member, path, count, dtype, key):
        """The member's data as a copy-on-write map of the file (PyTorch's ``MAP_PRIVATE``): pages
        are read when touched, and writes to the tensor stay in memory, never reach the file.
        The member's CRC-32 is still checked (over the mapped bytes, continuing the header's)."""
        start = member.offset + member.tell()
        mapped = np.memmap(path, dtype=np.uint8, mode="c", offset=start, shape=(count * dtype.itemsize,))
        if crc32(mapped, member.crc) != member.info.CRC:
            self.fail(f"is damaged: Bad CRC-32 for file {key!r}")
        return mapped.view(np.ndarray).view(dtype)  # a plain array; the map stays open as its base

    def _npy_header_length(self, member, key):
        """The ``.npy`` magic, a version this reader knows (1.0 or 2.0), and a header length of at
        most ``MAX_NPY_HEADER`` (NumPy's limit), checked before the header is read.

        Version 3.0 only adds UTF-8 field names, i.e. structured dtypes, which a checkpoint never holds.
        """
        magic = self._read(member, 8, key)
        if len(magic) < 8 or magic[:6] != b"\x93NUMPY":
            self.fail(f"is damaged: {key!r} has no readable .npy header (no .npy magic)")
        version = (magic[6], magic[7])
        if version not in _NPY_LENGTH_FORMATS:
            self.fail(f"is damaged: {key!r} has no readable .npy header (unsupported .npy format version {version})")
        length_format = _NPY_LENGTH_FORMATS[version]
        raw_length = self._read(member, struct.calcsize(length_format), key)
        if len(raw_length) < struct.calcsize(length_format):
            self.fail(f"is truncated: {key!r} ends inside its .npy header")
        (length,) = struct.unpack(length_format, raw_length)
        if length > MAX_NPY_HEADER:
            self.fail(f"is refused: {key!r} has a .npy header of {length:,} bytes "
                      f"(NumPy reads at most {MAX_NPY_HEADER:,})")
        return length

    def _npy_header(self, member, key):
        """The ``.npy`` header: a Python dict literal with exactly the keys ``descr``,
        ``fortran_order`` (a bool) and ``shape``, read by ``ast.literal_eval`` (which never runs code)."""
        length = self._npy_header_length(member, key)
        text = self._read(member, length, key)
        if len(text) < length:
            self.fail(f"is truncated: {key!r} ends inside its .npy header")
        try:
            with warnings.catch_warnings():  # e.g. "invalid escape sequence": an error under -W error
                warnings.simplefilter("ignore")
                header = ast.literal_eval(text.decode("latin1"))
        except _LITERAL_ERRORS as exc:
            self.fail(f"is damaged: {key!r} has no readable .npy header ({str(exc)[:200]})")
        if not isinstance(header, dict) or header.keys() != _NPY_KEYS:
            self.fail(f"is damaged: {key!r} has no readable .npy header (not a dict of "
                      f"descr, fortran_order and shape: {short_repr(header)})")
        if not isinstance(header["fortran_order"], bool):
            self.fail(f"is damaged: {key!r} has a .npy header whose fortran_order is not a bool: "
                      f"{short_repr(header['fortran_order'])}")
        return header

    def _npy_dtype(self, descr, key):
        """The header's dtype is one of edutorch's, little-endian (``NPY_DTYPES``); any other dtype
        (big-endian, complex, strings, records, Python objects) is named and refused."""
        dtype = _dtype_or_none(descr) if isinstance(descr, str) else None
        if dtype is not None and dtype.str in NPY_DTYPES:
            return NPY_DTYPES[dtype.str]
        if dtype is not None:
            what = f"{describe_dtype(dtype)} (dtype {dtype.str!r})"
        elif isinstance(descr, list):
            what = f"a structured (record) dtype ({short_repr(descr)})"
        else:
            what = f"an unknown dtype ({short_repr(descr)})"
        self.fail(f"is refused: {key!r} holds {what}; {SUPPORTED}")

    def _npy_shape(self, shape, key):
        """The shape is a tuple of at most ``MAX_DIMS`` (NumPy's limit) non-negative ints, not bools."""
        if not isinstance(shape, tuple) or not all(type(n) is int for n in shape):
            self.fail(f"is damaged: {key!r} has a .npy shape that is not a tuple of ints: {short_repr(shape)}")
        if len(shape) > MAX_DIMS:
            self.fail(f"is refused: {key!r} has {len(shape)} dimensions (at most {MAX_DIMS})")
        if any(n < 0 for n in shape):
            self.fail(f"is damaged: {key!r} has a negative size in its shape {short_repr(shape)}")
        return shape

    def _check_numpy_limit(self, shape, dtype, key):
        """An empty array's shape fits NumPy too: ``np.empty((0, 2**63))`` raises, because NumPy
        wants the product of the non-zero sizes, in bytes, below 2**63 even when one size is 0."""
        if math.prod(max(n, 1) for n in shape) * dtype.itemsize > np.iinfo(np.intp).max:
            self.fail(f"is refused: {key!r} has the shape {short_repr(shape)}, too large for any array")

    def _check_npy_data_size(self, member, key, shape, dtype):
        """The data after the header is exactly ``prod(shape) * itemsize`` bytes: no more, no less."""
        nbytes = math.prod(shape) * dtype.itemsize  # Python ints: a forged shape cannot overflow
        held = self.members[key].file_size - member.tell()
        if nbytes > held:
            self.fail(f"is truncated: {key!r} declares shape {short_repr(shape)} of {dtype.name} ({nbytes:,} bytes) "
                      f"but holds {held:,} bytes of data")
        if nbytes < held:
            self.fail(f"is damaged: {key!r} has {held - nbytes:,} bytes after the data its header declares")

    def _allocate(self, size, dtype, key):
        """The new array; a declared size this machine cannot hold is refused, not a MemoryError."""
        try:
            return np.empty(size, dtype)
        except MemoryError:
            self.fail(f"is refused: {key!r} declares {size * dtype.itemsize:,} bytes of data, "
                      "more memory than this machine can allocate")

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


def _dtype_or_none(descr):
    """``np.dtype(descr)`` for a header's dtype string, or None where NumPy names no dtype
    (its deprecation warnings, e.g. for ``'a'``, silenced: an error under ``-W error``)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.dtype(descr)
    except _DTYPE_ERRORS:
        return None


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60


def short_repr(value):
    """A short repr for messages: a forged value may be huge or deeply nested."""
    return _REPR.repr(value)


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
