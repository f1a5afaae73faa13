"""``parallel_apply``: each replica applied to its own inputs.

PyTorch starts a thread per device so the GPUs work at the same time; here the
replicas run one after the other (CuPy queues each device's work anyway), which
gives the same outputs.
"""


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """``[modules[i](*inputs[i], **kwargs_tup[i]) for each i]``."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    outputs = []
    for module, args, kwargs in zip(modules, inputs, kwargs_tup):
        if not isinstance(args, (list, tuple)):
            args = (args,)
        outputs.append(module(*args, **kwargs))
    return outputs
