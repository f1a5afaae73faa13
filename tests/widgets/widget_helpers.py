"""Plain helpers for the widget tests (imported by name: this folder is on sys.path)."""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def mlp(nn_module, sizes=(20, 16, 8, 4)):
    """Linear/ReLU stack: Sequential(0 Linear, 1 ReLU, 2 Linear, 3 ReLU, 4 Linear)."""
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn_module.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn_module.ReLU())
    return nn_module.Sequential(*layers)


def copy_weights(torch, source, target):
    """Load an edutorch model's state_dict into a torch twin (same architecture)."""
    target.load_state_dict({k: torch.tensor(v.detach().numpy())
                            for k, v in source.state_dict().items()})
    return target


def png_bytes(image_widget):
    """The bytes an ``ipywidgets.Image`` holds (its trait stores a memoryview)."""
    return bytes(image_widget.value)


def is_png(data):
    return bytes(data).startswith(PNG_SIGNATURE)


async def built_in_a_kernel(build, done, timeout_s=60.0):
    """``build()`` inside a running asyncio event loop, as in a Jupyter kernel, then let the
    loop idle until ``done(widget)`` (what the widget renders ahead in idle time is ready)."""
    import asyncio
    import time

    widget = build()
    deadline = time.monotonic() + timeout_s
    while not done(widget):
        assert time.monotonic() < deadline, "nothing was rendered ahead"
        await asyncio.sleep(0.05)
    return widget
