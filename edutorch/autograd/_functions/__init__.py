"""The built-in differentiable ops, each a small ``Function`` (forward + backward).

PyTorch writes these derivatives in ``tools/autograd/derivatives.yaml`` and
generates C++; edutorch writes each one by hand, in Python, so a student can
read an op and its gradient side by side.  Backward formulas use Tensor ops,
so with ``create_graph=True`` they are differentiated again.
"""
