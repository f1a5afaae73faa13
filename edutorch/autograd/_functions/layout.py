"""Memory layout of results: PyTorch's strides, not NumPy's.

Whether ``reshape``/``flatten`` return a view (writes through one are seen by
the other) or a copy, and whether ``view`` is allowed at all, depends on the
strides of the tensor they start from.  So every op must lay its result out in
memory as PyTorch does, not as NumPy happens to:

* element-wise ops (PyTorch's ``TensorIterator``: ``sin``, ``+``, ``where``,
  ``clone``, ``sort``...) lay the result out like their inputs: the dims in the
  order of the inputs' strides, the first input deciding first
  (``iteration_order``);
* every other op (reductions, ``softmax``, ``cumsum``, ``cat``, ``mm``,
  indexing...) returns a contiguous (C-order) result.  Those that keep their
  input's shape are listed in ``CONTIGUOUS`` by node name (``contiguous()``,
  whose node is ``clone``'s, says ``_contiguous_result = True`` instead);
* ``expand`` returns a view with stride 0 along the expanded dims: an op whose
  result is such a broadcast of its input (``sum``'s gradient) says
  ``_expanded_result = True`` and its result is left as NumPy broadcast it;
* LAPACK-backed ops (``svd``, ``qr``, ``eigh``, ``inv``, ``solve``) return each
  matrix column by column, as LAPACK leaves it: they say ``_column_major_result
  = True`` and lay their results out so themselves (``linalg.column_major``).

``Function.apply`` passes each new result of a built-in op through
``torch_layout``; it copies only when NumPy chose another layout.
"""
import numpy as np

from . import utils as _utils  # _utils._Tensor: edutorch.Tensor, without an import cycle

# Ops that keep their input's shape but return a contiguous result in PyTorch (their node names)
CONTIGUOUS = frozenset({
    "SoftmaxBackward0", "LogSoftmaxBackward0", "CumsumBackward0", "CumprodBackward0", "CummaxBackward0",
    "CumminBackward0", "LogcumsumexpBackward0", "RollBackward0", "MaskedFillBackward0", "MaskedFillBackward1",
    "TrilBackward0", "TriuBackward0", "NativeBatchNormBackward0", "NativeGroupNormBackward0",
    "NativeLayerNormBackward0", "MmBackward0", "BmmBackward0", "AddmmBackward0", "MvBackward0",
    "ConvolutionBackward0", "MaxPool2DWithIndicesBackward0", "AvgPool2DBackward0",
    "AdaptiveAvgPool2DBackward0", "RepeatBackward0", "TopkBackward0", "GatherBackward0", "ScatterBackward0",
    "ScatterBackward1", "ScatterAddBackward0", "IndexAddBackward0", "IndexBackward0", "IndexPutBackward0",
    "IndexSelectBackward0", "RreluWithNoiseBackward0", "RreluWithNoiseBackward1", "CatBackward0",
    "StackBackward0", "KronBackward0", "LogSigmoidBackward0", "LogSigmoidForwardBackward0",
})


def iteration_order(shape, operand_strides):
    """The dims from the fastest-changing in memory to the slowest, as PyTorch's
    ``TensorIterator::reorder_dimensions`` sorts them: by the first input's strides,
    a tie (a broadcast dim, stride 0) decided by the next input."""
    def should_swap(d0, d1):
        for strides in operand_strides:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape)))[::-1]  # C order: the last dim is the fastest
    for i in range(1, len(shape)):  # insertion sort that leaves ambiguous pairs in place
        d1 = i
        for d0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[d0], perm[d1])
            if comparison > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif comparison < 0:
                break
    return perm


def _strides_in_order(shape, perm):
    """Element strides of a dense tensor whose dims are laid out ``perm`` (fastest first)."""
    strides, step = [0] * len(shape), 1
    for d in perm:
        strides[d] = step
        step *= max(shape[d], 1)
    return strides


def _has_strides(a, strides):
    """Does ``a`` have these element strides (dims of size 1 do not count)?"""
    return all(n <= 1 or s == t * a.itemsize for n, s, t in zip(a.shape, a.strides, strides))


def laid_out(a, perm):
    """``a``'s values in memory dims ``perm`` (fastest first): a copy unless ``a`` is laid out so."""
    strides = _strides_in_order(a.shape, perm)
    if _has_strides(a, strides):
        return a
    slowest_first = perm[::-1]
    if slowest_first == list(range(a.ndim)):  # C order
        return a.copy(order="C")
    place = [0] * a.ndim  # where each of a's dims sits in memory order
    for i, d in enumerate(slowest_first):
        place[d] = i
    out = np.empty([a.shape[d] for d in slowest_first], dtype=a.dtype).transpose(place)
    out[...] = a
    return out


def _elementwise_order(out, inputs):
    """``iteration_order`` of an element-wise op's inputs, or None when ``out`` is not element-wise
    (its shape is not the inputs' broadcast shape)."""
    try:
        if not inputs or np.broadcast(*inputs).shape != out.shape:
            return None
    except ValueError:  # the inputs do not broadcast together (more than 32 of them, too)
        return None
    if all(_plainly_contiguous(a, out) for a in inputs):  # PyTorch's fast path: all contiguous, result too
        return list(range(out.ndim))[::-1]
    return iteration_order(out.shape, [_broadcast_strides(a, out.shape) for a in inputs])


def _broadcast_strides(a, shape):
    """``a``'s element strides as an operand of shape ``shape``: 0 along a dim it is broadcast over,
    its own elsewhere, a dim of size 1 included (NumPy's ``broadcast_to`` would give that one 0)."""
    lead = len(shape) - a.ndim
    own = [s // a.itemsize for s in a.strides]
    return [0] * lead + [0 if n == 1 and m != 1 else s for n, m, s in zip(a.shape, shape[lead:], own)]


def torch_layout(cls, outputs, args):
    """``outputs`` of the built-in op ``cls`` laid out in memory as PyTorch lays them out."""
    if cls._backward_name is None:  # a custom Function: its results are laid out as its forward made them
        return outputs
    if type(outputs) is np.ndarray:  # the usual case: one new array
        return _array(cls, outputs, args)
    if type(outputs) is tuple:
        return tuple(_one(cls, o, args) for o in outputs)
    return _one(cls, outputs, args)


def _one(cls, out, args):
    """One output: an array, or a Tensor the forward made (a fresh one gets its array replaced;
    a view or alias of an input, which shares the input's version counter, is left alone)."""
    if type(out) is np.ndarray:
        return _array(cls, out, args)
    if isinstance(out, _utils._Tensor) and type(out._data) is np.ndarray:
        if not any(isinstance(a, _utils._Tensor) and out._version_counter is a._version_counter for a in args):
            out._data = _array(cls, out._data, args)
    return out


# The rule of each op class (``_rule``): its result is contiguous, laid out like its
# inputs (element-wise), or a broadcast view of its input, left as it is.
CONTIGUOUS_RESULT, ELEMENTWISE, EXPANDED = "contiguous", "element-wise", "expanded"
_rules = {}


def _rule(cls):
    """Which of the three layout rules ``cls``'s results follow (worked out once per class)."""
    if getattr(cls, "_expanded_result", False) or getattr(cls, "_column_major_result", False):
        rule = EXPANDED  # left as the forward made it: a broadcast view, or LAPACK's column-major matrices
    elif cls._backward_name in CONTIGUOUS or getattr(cls, "_contiguous_result", False):
        rule = CONTIGUOUS_RESULT
    else:
        rule = ELEMENTWISE
    _rules[cls] = rule
    return rule


def _array(cls, out, args):
    """One new array of ``cls``: as it is when NumPy laid it out as PyTorch would, else a copy.

    The usual case is checked first and fast: a contiguous result of fewer than 2 dims
    (one dense layout only), of an op whose results are contiguous, or of contiguous inputs."""
    contiguous = out.flags.c_contiguous
    if contiguous and out.ndim < 2:
        return out
    rule = _rules.get(cls) or _rule(cls)
    if contiguous:
        if rule is CONTIGUOUS_RESULT or _inputs_contiguous(out, args):
            return out
    elif rule is EXPANDED:  # PyTorch's expand: a view, stride 0 where broadcast
        return out
    inputs = [a._data for a in args if isinstance(a, _utils._Tensor) and type(a._data) is np.ndarray]
    order = _elementwise_order(out, inputs) if rule is ELEMENTWISE else None
    return laid_out(out, order if order is not None else list(range(out.ndim))[::-1])


def _inputs_contiguous(out, args):
    """Are all of an element-wise op's tensor inputs contiguous, so that PyTorch's result is too?"""
    for a in args:
        if isinstance(a, _utils._Tensor) and type(a._data) is np.ndarray:
            x = a._data
            if not x.flags.c_contiguous or (x.shape != out.shape and not _plainly_contiguous(x, out)):
                return False
    return True


def _plainly_contiguous(a, out):
    """Is ``a`` contiguous, and so an operand that leaves the result in C order?  Of ``out``'s shape,
    any contiguous ``a`` is (PyTorch's fast path); one that is broadcast needs C strides for its
    dims of size 1 too (NumPy's flag ignores them, PyTorch's ordering does not)."""
    return a.flags.c_contiguous and (a.shape == out.shape or 1 not in a.shape or a.strides == _c_strides(a))


def _c_strides(a):
    strides, step = [], a.itemsize
    for n in reversed(a.shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def like(a, template):
    """``a`` laid out as ``template`` (PyTorch's ``preserve_format`` of ``zeros_like``...): in its
    dims' order when ``template`` is dense (no gaps, no repeats), else contiguous."""
    if type(a) is not np.ndarray or type(template) is not np.ndarray or template.ndim < 2:
        return a
    perm = iteration_order(template.shape, [[s // template.itemsize for s in template.strides]])
    dense = _has_strides(template, _strides_in_order(template.shape, perm))
    return laid_out(a, perm if dense else list(range(a.ndim))[::-1])
