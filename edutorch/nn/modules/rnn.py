"""Recurrent layers: ``RNNCell``, ``LSTMCell``, ``GRUCell`` and the sequence layers ``RNN``, ``LSTM``, ``GRU``.

A *cell* computes one time step, ``h' = f(x, h)``; the sequence layers apply a
cell along the sequence, layer after layer.  The maths, with PyTorch's gate
order and parameter names (``weight_ih_l0`` is layer 0's input-to-hidden
matrix, gates stacked along its rows):

* RNN:  ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or relu)
* LSTM: gates ``i, f, g, o``;  ``c' = f * c + i * g``,  ``h' = o * tanh(c')``
* GRU:  gates ``r, z, n``;  ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
  ``h' = (1 - z) * n + z * h``

Everything is written with Tensor ops (``F.linear``, ``sigmoid``, slicing),
so autograd unrolls the loop over time by itself: backpropagation through time.
"""
import math
import numbers
import warnings

from ... import empty, zeros
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# -- one time step -------------------------------------------------------------------
def _rnn_step(gi, h, w_hh, b_hh, nonlinearity):
    """``act(gi + W_hh h + b_hh)`` where ``gi = W_ih x + b_ih`` was precomputed."""
    pre = gi + F.linear(h, w_hh, b_hh)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def _lstm_step(gi, state, w_hh, b_hh):
    """One LSTM step; ``state = (h, c)``; gates i, f, g, o are consecutive blocks of rows."""
    h, c = state
    gates = gi + F.linear(h, w_hh, b_hh)
    n = h.shape[-1]
    i = gates[..., 0 * n:1 * n].sigmoid()
    f = gates[..., 1 * n:2 * n].sigmoid()
    g = gates[..., 2 * n:3 * n].tanh()
    o = gates[..., 3 * n:4 * n].sigmoid()
    c = f * c + i * g
    return o * c.tanh(), c


def _gru_step(gi, h, w_hh, b_hh):
    """One GRU step; gates r, z, n.  The reset gate scales only the hidden part of n."""
    gh = F.linear(h, w_hh, b_hh)
    n = h.shape[-1]
    r = (gi[..., 0:n] + gh[..., 0:n]).sigmoid()
    z = (gi[..., n:2 * n] + gh[..., n:2 * n]).sigmoid()
    cand = (gi[..., 2 * n:3 * n] + r * gh[..., 2 * n:3 * n]).tanh()
    return (1 - z) * cand + z * h


# -- cells ---------------------------------------------------------------------------
class RNNCellBase(Module):
    """Parameters of a cell: ``weight_ih`` (G*hidden, input), ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        """Every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx):
        """Check sizes; add a batch dim to an unbatched (input_size,) input; zero initial state."""
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}"
            )
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        return x, batched

    def _zeros(self, x):
        return zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)

    def _check_hidden(self, x, *hiddens):
        """PyTorch's checks of each given state against the (batched) input: one row per sample."""
        for i, h in enumerate(hiddens):
            if h.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{i} batch size {h.shape[0]}")
            if h.shape[-1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[-1]}, expected "
                                   f"{self.hidden_size}")


class RNNCell(RNNCellBase):
    """``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x, batched = self._prepare(input, hx)
        h = self._zeros(x) if hx is None else (hx if batched else hx.unsqueeze(0))
        self._check_hidden(x, h)
        out = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                        self.nonlinearity)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, batched = self._prepare(input, hx)
        if hx is None:
            hx = (self._zeros(x), self._zeros(x))
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check_hidden(x, *hx)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: returns ``h'``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, batched = self._prepare(input, hx)
        h = self._zeros(x) if hx is None else (hx if batched else hx.unsqueeze(0))
        self._check_hidden(x, h)
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)


# -- sequence layers -----------------------------------------------------------------
class RNNBase(Module):
    """A stack of ``num_layers`` recurrent layers (optionally bidirectional) over a sequence."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}"
            )
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size != 0:
            raise ValueError("edutorch's recurrent layers do not implement proj_size (LSTM projections)")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        kw = dict(device=device, dtype=dtype)
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else hidden_size * num_directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                params = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, hidden_size))]
                if bias:
                    params += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                for name, shape in params:
                    setattr(self, name + suffix, Parameter(empty(shape, **kw)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        """Every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self):
        names = self._flat_weights_names
        per = len(names) // (self.num_layers * (2 if self.bidirectional else 1))
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- helpers for forward ----------------------------------------------------------
    def _layout(self, input):
        """Return the input as (L, N, H_in) and whether it had a batch dim."""
        if input.ndim not in (2, 3):
            raise ValueError(f"{self.mode.split('_')[0]}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        weight_dtype = self.weight_ih_l0.dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). Convert input: "
                f"input.to({weight_dtype}), or convert model: model.to({input.dtype})"
            )
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.shape[-1]}"
            )
        batched = input.ndim == 3
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        return x, batched

    def _check_hidden(self, h, batch, batched):
        """PyTorch's checks on a given initial state (hx, or each of LSTM's (h0, c0))."""
        layers = self.num_layers * (2 if self.bidirectional else 1)
        if not batched:
            if h.ndim != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {h.ndim}-D tensor")
            h = h.unsqueeze(1)
        elif h.ndim != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {h.ndim}-D tensor")
        expected = (layers, batch, self.hidden_size)
        if tuple(h.shape) != expected:
            raise RuntimeError(f"Expected hidden size {expected}, got {list(h.shape)}")

    def _params(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        w_ih, w_hh = getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix)
        b_ih = getattr(self, "bias_ih" + suffix) if self.bias else None
        b_hh = getattr(self, "bias_hh" + suffix) if self.bias else None
        return w_ih, w_hh, b_ih, b_hh

    def _run(self, x, states):
        """Run every layer and direction over ``x`` (L, N, H); ``states[k]`` is layer/direction k's start."""
        from ... import cat, stack

        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._params(layer, direction)
                gi = F.linear(x, w_ih, b_ih)  # input projections of all steps in one product
                state = states[layer * directions + direction]
                steps = range(x.shape[0]) if direction == 0 else reversed(range(x.shape[0]))
                hs = [None] * x.shape[0]
                for t in steps:
                    state = self._step(gi[t], state, w_hh, b_hh)
                    hs[t] = state[0] if isinstance(state, tuple) else state
                outputs.append(stack(hs))
                finals.append(state)
            x = outputs[0] if directions == 1 else cat(outputs, dim=2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def _finish(self, output, batched):
        if not batched:
            return output.squeeze(1)
        # PyTorch's kernel transposes its result in place (transpose_): a new tensor, not a view
        return output.transpose_(0, 1) if self.batch_first else output


class RNN(RNNBase):
    """Elman RNN over a sequence: returns ``(output, h_n)``."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def _step(self, gi, h, w_hh, b_hh):
        return _rnn_step(gi, h, w_hh, b_hh, self.nonlinearity)

    def forward(self, input, hx=None):
        from ... import stack

        x, batched = self._layout(input)
        layers = self.num_layers * (2 if self.bidirectional else 1)
        if hx is None:
            states = [zeros(x.shape[1], self.hidden_size, dtype=x.dtype, device=x.device) for _ in range(layers)]
        else:
            self._check_hidden(hx, x.shape[1], batched)
            h = hx if batched else hx.unsqueeze(1)
            states = list(h.unbind(0))  # one state per layer and direction, as PyTorch splits hx
        output, finals = self._run(x, states)
        h_n = stack(finals)
        return self._finish(output, batched), (h_n if batched else h_n.squeeze(1))


class LSTM(RNNBase):
    """Long short-term memory over a sequence: returns ``(output, (h_n, c_n))``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def _step(self, gi, state, w_hh, b_hh):
        return _lstm_step(gi, state, w_hh, b_hh)

    def forward(self, input, hx=None):
        from ... import stack

        x, batched = self._layout(input)
        layers = self.num_layers * (2 if self.bidirectional else 1)
        if hx is None:
            states = [(zeros(x.shape[1], self.hidden_size, dtype=x.dtype, device=x.device),
                       zeros(x.shape[1], self.hidden_size, dtype=x.dtype, device=x.device)) for _ in range(layers)]
        else:
            h0, c0 = hx
            self._check_hidden(h0, x.shape[1], batched)
            self._check_hidden(c0, x.shape[1], batched)
            if not batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            states = list(zip(h0.unbind(0), c0.unbind(0)))
        output, finals = self._run(x, states)
        h_n = stack([h for h, _ in finals])
        c_n = stack([c for _, c in finals])
        if not batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._finish(output, batched), (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit over a sequence: returns ``(output, h_n)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def _step(self, gi, h, w_hh, b_hh):
        return _gru_step(gi, h, w_hh, b_hh)

    forward = RNN.forward
