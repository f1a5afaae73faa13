"""The methods and operators of ``torch.Tensor``, one mixin class per topic.

``Tensor`` (``edutorch/_tensor.py``) holds the data and the autograd
attributes; these mixins give it its ops.  The topics follow
``autograd/_functions/``, where each op's ``Function`` (forward and gradient)
lives: a method here is a one-liner that calls it, or a short composition of
other ops where PyTorch composes them too.

=================  ==========================================================
``arithmetic``     ``+ - * / ** %``, ``add``, ``pow``, ``lerp``, ``addcmul``...
``unary``          ``exp``, ``log``, ``sin``, ``sigmoid``, ``erf``, ``round``...
``comparison``     ``== < &``, ``isnan``, ``all``, ``clamp``, ``maximum``, ``where``
``blas``           ``@``, ``mm``, ``bmm``, ``matmul``, ``dot``, ``addmm``, ``kron``
``linalg``         ``triu``, ``diagonal``, ``diag``, ``trace``, ``det``, ``inverse``
``reduction``      ``sum``, ``mean``, ``var``, ``norm``, ``max``, ``argmax``, ``cumsum``, ``softmax``
``sorting``        ``sort``, ``topk``, ``kthvalue``, ``median``, ``unique``
``shape``          ``view``, ``reshape``, ``permute``, ``expand``, ``split``, ``flip``...
``indexing``       ``x[i]``, ``x[i] = v``, ``gather``, ``scatter``, ``nonzero``...
``conversion``     ``clone``, ``to``, ``float()``, ``cuda()``, ``new_zeros``...
``inplace``        ``add_``, ``mul_``, ``exp_``, ``zero_``, ``copy_``, ``+=``...
``sampling``       ``uniform_``, ``normal_``, ``bernoulli``, ``multinomial``...
``composite``      ``frac``, ``logit``, ``fmax``, ``cross``, ``svd``, ``rot90``... and more in-place variants
``views``          (no methods) how a view and its base stay linked for in-place ops
=================  ==========================================================
"""
from .arithmetic import ArithmeticMethods
from .blas import BlasMethods
from .comparison import ComparisonMethods
from .composite import CompositeMethods
from .conversion import ConversionMethods
from .indexing import IndexingMethods
from .inplace import InplaceMethods
from .linalg import LinalgMethods
from .reduction import ReductionMethods
from .sampling import SamplingMethods
from .shape import ShapeMethods
from .sorting import SortingMethods
from .unary import UnaryMethods

__all__ = [
    "ArithmeticMethods", "BlasMethods", "ComparisonMethods", "CompositeMethods", "ConversionMethods", "IndexingMethods",
    "InplaceMethods", "LinalgMethods", "ReductionMethods", "SamplingMethods", "ShapeMethods",
    "SortingMethods", "UnaryMethods",
]
