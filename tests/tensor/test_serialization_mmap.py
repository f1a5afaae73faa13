"""``torch.load(f, mmap=True)``: the arrays of a checkpoint mapped from its file, copy-on-write.

Values, dtypes and sharing are as a plain load gives them; writes to a loaded
tensor never reach the file (PyTorch's ``MAP_PRIVATE``); ``f`` must be a path
(PyTorch's ValueError).  Every hostile file of ``test_serialization_hostile.py``
is loaded again here through ``mmap=True`` and must be refused in the same way.
"""
import io

import numpy as np
import pytest

import checkpoint_files
import edutorch as et
import test_serialization_hostile
from edutorch import serialization
from test_serialization_hostile import *  # noqa: F401,F403  (every hostile-file test, again with mmap=True)

# these check the allocation of a read array, which a mapped array does not make
_NOT_MAPPED = {"test_what_this_machine_cannot_allocate_is_a_checkpoint_error",
               "test_load_peaks_at_the_size_of_the_arrays"}


@pytest.fixture(autouse=True)
def _load_with_mmap(request, monkeypatch, tmp_path):
    """Route the hostile tests' loads through a file on disk and ``mmap=True``."""
    if request.function.__name__ in _NOT_MAPPED:
        pytest.skip("checks the memory of a read (not mapped) array")

    def load_mapped(f, *args, **kwargs):
        if not isinstance(f, (str, bytes)) and not hasattr(f, "__fspath__"):
            path = tmp_path / "checkpoint.pt"
            path.write_bytes(f.read())
            f = path
        return serialization.load(f, *args, mmap=True, **kwargs)

    monkeypatch.setattr(checkpoint_files, "load", load_mapped)
    monkeypatch.setattr(test_serialization_hostile, "load", load_mapped)


def _mapped(array):
    """Whether ``array``'s memory is a map of a file (some array it views is a ``np.memmap``)."""
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = getattr(array, "base", None)
    return False


def _saved(tmp_path, obj):
    path = tmp_path / "model.pt"
    et.save(obj, path)
    return path


def test_mapped_tensors_equal_read_ones_and_writes_stay_in_memory(tmp_path):
    state = {"w": et.randn(50, 40), "b": et.arange(7), "h": et.randn(3, 3).to(et.bfloat16), "e": et.zeros(0, 2),
             "p": et.nn.Parameter(et.randn(4))}
    path = _saved(tmp_path, state)
    before = path.read_bytes()
    mapped = et.load(path, mmap=True)
    for key, value in state.items():
        assert mapped[key].dtype == value.dtype and mapped[key].shape == value.shape
        assert np.array_equal(mapped[key].detach().float().numpy(), value.detach().float().numpy())
    assert isinstance(mapped["p"], et.nn.Parameter) and mapped["p"].requires_grad
    assert _mapped(mapped["w"]._data) and not _mapped(et.load(path)["w"]._data)  # the file's pages, not a copy
    mapped["w"].add_(1.0)
    mapped["b"][0] = 99
    assert path.read_bytes() == before  # copy-on-write
    assert np.array_equal(et.load(path)["w"].numpy(), state["w"].numpy())


def test_a_module_loads_a_mapped_state_dict(tmp_path):
    model = et.nn.Linear(5, 3)
    path = _saved(tmp_path, model.state_dict())
    fresh = et.nn.Linear(5, 3)
    fresh.load_state_dict(et.load(path, mmap=True, weights_only=True))
    x = et.randn(2, 5)
    assert np.array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())


def test_mmap_needs_a_path(real_torch, tmp_path):
    for lib in (et, real_torch):
        buf = io.BytesIO()
        lib.save({"a": lib.ones(2)}, buf)
        buf.seek(0)
        with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
            lib.load(buf, mmap=True)


def test_a_flipped_data_byte_is_refused_when_mapped(tmp_path):
    values = np.arange(1000, dtype=np.float32)
    path = _saved(tmp_path, {"w": et.tensor(values)})
    data = bytearray(path.read_bytes())
    data[bytes(data).find(values.tobytes()) + 2000] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(serialization.CheckpointError, match="Bad CRC-32 for file 'arrays/0.npy'"):
        et.load(path, mmap=True)
