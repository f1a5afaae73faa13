"""The autograd ``Function``s behind ``torch.nn.functional``.

Each file holds the ops of one family (linear, conv, pooling, normalization,
activation, loss, sparse, padding): a NumPy ``forward`` next to its
``backward``.  ``edutorch/nn/functional.py`` is the public face that checks
arguments and calls ``SomeFunction.apply``.
"""
