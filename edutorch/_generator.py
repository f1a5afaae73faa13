"""``torch.Generator``: the random stream beneath every sampler (PyTorch's ``torch._C.Generator``).

In PyTorch the generator lives in the C++ core, below the Tensor: ``Tensor.uniform_``
(a Tensor method) and ``torch.rand`` (``torch/random.py`` and the factories) both draw
from it.  Here too it sits below the Tensor, so that the Tensor's in-place samplers
(``_tensor_methods/sampling.py``) and ``edutorch/random.py``, which makes new
tensors, both import it at their top, and neither imports the other.

edutorch draws from NumPy's PCG64 generator, so a seed gives the same numbers
on every run (but not the same numbers as PyTorch's Mersenne Twister: parity
tests copy weights instead of relying on seeds).
"""
import json

import numpy as np

from .autograd._functions import utils  # utils._Tensor: edutorch.Tensor, without an import cycle


class Generator:
    """``torch.Generator``: an independent, seedable random stream."""

    def __init__(self, device="cpu"):
        self.device = device
        self._seed = 67280421310721  # PyTorch's default seed
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed):
        self._seed = int(seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self):
        self._seed = int(np.random.SeedSequence().entropy % (2**63))
        self._rng = np.random.default_rng(self._seed)
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The generator state as a uint8 tensor (a JSON dump of NumPy's bit generator)."""
        raw = json.dumps(self._rng.bit_generator.state).encode()
        return utils._Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, state):
        self._rng.bit_generator.state = json.loads(bytes(state._data.astype(np.uint8).tolist()).decode())
        return self


default_generator = Generator()


def _rng(generator):
    """The NumPy stream of ``generator``, or of the default generator when it is None."""
    return (generator or default_generator)._rng
