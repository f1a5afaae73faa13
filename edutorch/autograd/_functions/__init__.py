"""The built-in differentiable ops, each a small ``Function`` (forward + backward).

PyTorch writes these derivatives in ``tools/autograd/derivatives.yaml`` and
generates C++; edutorch writes each one by hand, in Python, so a student can
read an op and its gradient side by side.  Each gradient is written once, with
Tensor ops, as the mathematics reads (the matrix product's ``grad @ b.t()``
and ``a.t() @ grad``, in ``blas.py``'s ``mm_mat1_backward`` and
``mm_mat2_backward``, which every product's backward calls, as PyTorch's
``derivatives.yaml`` shares them).  Each op's facts sit beside its
``forward``: its node name (``_backward_name``), what the node shows as
``grad_fn._saved_<name>`` (``_saved_attrs``), and where PyTorch needs them, the
name autocast's lists give it (``_autocast_op``) and its profiler event
(``_profiler_name``).  The same line serves both kinds of backward:

* a plain ``backward()`` runs it with grad mode off, so each op takes
  ``Function.apply``'s short path (no node recorded: a ``forward`` on the
  arrays and a Tensor around the result);
* ``create_graph=True`` runs it with grad mode on, so the gradient is itself
  recorded and can be differentiated again.

Where PyTorch fuses a formula into one kernel (``tanh_backward``,
``threshold_backward``...), ``fused.py`` has it as one ``Function`` with its
own backward.
"""
