"""Checkpoint scenario: ``load`` of a 400 MB state_dict, time and peak memory.

Ten float32 tensors of 10M elements (400 MB), saved once by each library
into a temporary directory (deleted at exit):

* edutorch: ``edutorch.load(path)`` of ``edutorch.save``'s zip of ``.npy``;
* NumPy (the floor): ``np.load`` of ``np.savez``'s archive, every array read;
* PyTorch: ``torch.load(path, weights_only=True)`` of ``torch.save``'s file.

The files sit in the page cache (just written), so the time is the loader's
own work: reading, CRC (edutorch and NumPy's zipfile check one; PyTorch's
reader does not), allocating.  Peak memory is measured once per contender in
a fresh subprocess (the high-water mark ``VmHWM`` after the load minus
the resident size ``VmRSS`` before it; ``ru_maxrss`` would include the
parent's size, inherited through fork) and reported as a multiple of the file size, with the issue's
limit of 1.2x for edutorch (a ``measured_limits`` entry of the scenario).
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import edutorch as et

try:
    import torch
except ImportError:  # the torch contender is simply left out
    torch = None

N_TENSORS, N_ELEMENTS = 10, 10_000_000  # 400 MB of float32
MEMORY_LIMIT = 1.2  # peak memory of edutorch.load, as a multiple of the file size

_PEAK_SCRIPT = """
import sys
kind, path = sys.argv[1], sys.argv[2]
if kind == "edutorch":
    import edutorch as lib
    load = lib.load
elif kind == "torch":
    import torch
    load = lambda p: torch.load(p, weights_only=True)
else:
    import numpy as np
    def load(p):
        with np.load(p, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
def status(field):  # kB, from the kernel's accounting of this process
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))
before = status("VmRSS")
loaded = load(path)
print(status("VmHWM") - before)
"""


def _write_files(directory):
    """The same 400 MB of weights as an edutorch, a NumPy and (if installed) a PyTorch file."""
    rng = np.random.default_rng(0)
    arrays = {f"layer{i}.weight": rng.standard_normal(N_ELEMENTS, dtype=np.float32) for i in range(N_TENSORS)}
    paths = {"edutorch": os.path.join(directory, "edutorch.pt"), "numpy": os.path.join(directory, "numpy.npz")}
    et.save({k: et.tensor(v) for k, v in arrays.items()}, paths["edutorch"])
    np.savez(paths["numpy"], **arrays)
    if torch is not None:
        paths["torch"] = os.path.join(directory, "torch.pt")
        torch.save({k: torch.from_numpy(v) for k, v in arrays.items()}, paths["torch"])
    return paths


def _peak_memory(kind, path):
    """Extra peak resident memory of one load in a fresh process (Linux: needs /proc), or None."""
    if not os.path.exists("/proc/self/status"):
        return None
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, kind, path], env=env,
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def _numpy_load(path):
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def scenarios():
    directory = tempfile.mkdtemp(prefix="edutorch-bench-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    paths = _write_files(directory)
    size = os.path.getsize(paths["edutorch"])
    peaks = {kind: _peak_memory(kind, path) for kind, path in paths.items()}
    ratios = {kind: peak / os.path.getsize(paths[kind]) for kind, peak in peaks.items() if peak is not None}
    measured = {}
    if "edutorch" in ratios:
        measured["mem"] = {"value": ratios["edutorch"], "limit": MEMORY_LIMIT,
                           "pass": ratios["edutorch"] <= MEMORY_LIMIT}
    memory_note = ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()) or "not measured (no /proc)"
    contenders = {
        "edutorch": lambda: et.load(paths["edutorch"]),
        "numpy": lambda: _numpy_load(paths["numpy"]),
        "torch": (lambda: torch.load(paths["torch"], weights_only=True)) if torch is not None else None,
    }
    return [{
        "name": f"load a {size / 1e6:.0f} MB checkpoint (10 float32 tensors)",
        "contenders": contenders,
        "limits": {"torch": 1.0, "numpy": None, "ms": None},
        "measured_limits": measured,
        "setup_note": f"files in the page cache; peak memory of one load / file size: {memory_note}",
    }]
