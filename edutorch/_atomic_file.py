"""Replacing a file atomically, as ``edutorch.save(obj, path)`` does.

The checkpoint is written to a temporary file next to the target, flushed to
disk, then renamed over the target (``os.replace``): a reader, or a crash,
sees the old checkpoint or the new one, never half of one.  Seen from outside
it behaves like ``torch.save``'s plain ``open(path, "wb")``:

* a new file gets the mode the umask allows (0644 under umask 022), an
  existing file keeps its mode (and, where permitted, its owner and group),
  and a file we may not write is refused with ``PermissionError``;
* a symlink stays a symlink: the file it points to is replaced;
* a directory, FIFO, socket or device node is refused with a clear error
  (renaming over it would silently replace the node itself);
* the temporary file is removed on every error, ``KeyboardInterrupt`` included.

A process killed outright (``kill -9``, power loss) cannot remove its
temporary file.  Each save holds an exclusive ``flock`` on its temporary
file (``.NAME.edutorch-tmp-XXXXXXXX``); the kernel drops that lock when the
process dies, so the next save to the same path removes the temporaries of
that path that nobody holds (and that are older than ``STALE_AFTER_S``, which
covers the instant between creating a file and locking it).  Without
``fcntl`` (Windows) such leftovers are kept, never guessed at.
A hard link to the old file keeps the old contents: that is the price of an
atomic replace.
"""
import contextlib
import errno
import os
import secrets
import stat
import time

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, so stale temporaries are left alone
    fcntl = None

STALE_AFTER_S = 10.0
_TEMP_INFIX = ".edutorch-tmp-"


def _kind(mode):
    """A file type in words (for a path that is not a regular file)."""
    for test, word in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO (named pipe)"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device")):
        if test(mode):
            return word
    return "special file"


def resolve_target(path):
    """The regular file that saving to ``path`` replaces (symlinks followed), and its stat or None."""
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {os.path.dirname(os.path.abspath(path))} does not exist.")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target, None
    if not stat.S_ISREG(st.st_mode):
        raise RuntimeError(
            f"edutorch.save: {os.fspath(path)!r} is a {_kind(st.st_mode)}, not a regular file; "
            "edutorch.save replaces a checkpoint file as a whole. To write into this "
            "node, pass an open file object: with open(path, 'wb') as f: edutorch.save(obj, f)"
        )
    if not os.access(target, os.W_OK):  # what open(path, "wb") would say about a read-only file
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
    return target, st


def _temporary_name(target):
    directory, base = os.path.split(target)
    return os.path.join(directory, f".{base}{_TEMP_INFIX}{secrets.token_hex(4)}")


def _try_lock(fd):
    """Take the exclusive advisory lock on ``fd`` without waiting; False if someone holds it."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def remove_stale_temporaries(target):
    """Delete the temporaries that killed saves to ``target`` left behind (see the module docstring)."""
    if fcntl is None:
        return
    directory, base = os.path.split(target)
    prefix = f".{base}{_TEMP_INFIX}"
    try:
        names = [n for n in os.listdir(directory) if n.startswith(prefix)]
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        try:
            # O_NONBLOCK: a FIFO given a temporary's name must not hang the save
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            old = time.time() - st.st_mtime > STALE_AFTER_S
            if stat.S_ISREG(st.st_mode) and old and _try_lock(fd):
                os.unlink(path)
        except OSError:
            pass
        finally:
            os.close(fd)


def _create_temporary(target, existing):
    """A new, locked temporary file next to ``target``, with the mode the target will have."""
    while True:
        tmp = _temporary_name(target)
        try:  # mode 0o666 lets the kernel apply the umask, as open(path, "wb") does
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
            break
        except FileExistsError:
            continue
    try:
        _try_lock(fd)
        if existing is not None:
            _copy_mode_and_owner(fd, existing)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    return fd, tmp


def _copy_mode_and_owner(fd, st):
    """Give the new file the old file's permission bits, and its owner/group where allowed."""
    os.fchmod(fd, stat.S_IMODE(st.st_mode))
    if hasattr(os, "fchown") and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(PermissionError):
            os.fchown(fd, st.st_uid, st.st_gid)
        os.fchmod(fd, stat.S_IMODE(st.st_mode))  # chown clears set-uid/set-gid bits


@contextlib.contextmanager
def atomic_replace(path):
    """Yield a binary stream; on success it replaces ``path`` atomically, on any error it vanishes."""
    target, existing = resolve_target(path)
    remove_stale_temporaries(target)
    fd, tmp = _create_temporary(target, existing)
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, target)  # atomic: readers see the old file or the new one
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise

