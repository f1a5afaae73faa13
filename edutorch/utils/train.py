"""A plain training loop, the one every PyTorch tutorial writes by hand.

::

    for inputs, targets in loader:
        optimizer.zero_grad()                   # 1. forget the last gradients
        outputs = model(inputs)                 # 2. forward
        loss = loss_fn(outputs, targets)        # 3. loss
        loss.backward()                         # 4. backward: fill p.grad
        clip_grad_norm_(params, max_norm)       # 5. (optional) clip
        optimizer.step()                        # 6. update the weights
    scheduler.step()                            # 7. (optional) next learning rate

Nothing here is edutorch-specific: the same functions run unchanged with
real PyTorch objects, which is how the lessons compare the two.
``fit`` prints one plain-text line per epoch (no progress-bar dependency)
and returns the history as a list of dicts, ready to plot.
"""
import importlib
import time

__all__ = ["train_epoch", "evaluate", "fit", "format_epoch"]


def _library_of(model):
    """``edutorch`` or ``torch``: the package the model's parameters come from."""
    first = next(iter(model.parameters()), None)
    if first is None:  # a model without parameters: assume edutorch
        return importlib.import_module(__name__.split(".")[0])
    return importlib.import_module(type(first).__module__.split(".")[0])


def _batch_stats(outputs, targets):
    """Number of correct predictions in a batch of class scores (0 for regression)."""
    if outputs.ndim != 2 or targets.ndim != 1:
        return 0
    return (outputs.argmax(1) == targets).sum().item()


def train_epoch(model, loader, loss_fn, optimizer, *, max_norm=None, scheduler=None):
    """One pass over ``loader``; ``scheduler`` (if given) steps after every batch.

    Returns ``{"loss": mean loss, "accuracy": fraction correct}`` over the
    epoch (accuracy only means something for classification).
    """
    clip_grad_norm_ = _library_of(model).nn.utils.clip_grad_norm_
    model.train()
    total_loss, correct, seen = 0.0, 0, 0
    for inputs, targets in loader:
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
        loss.backward()
        if max_norm is not None:
            clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        n = len(targets)
        total_loss += loss.item() * n
        correct += _batch_stats(outputs, targets)
        seen += n
    return {"loss": total_loss / seen, "accuracy": correct / seen}


def evaluate(model, loader, loss_fn):
    """Mean loss and accuracy of ``model`` over ``loader`` (eval mode, no graph)."""
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    with _library_of(model).no_grad():
        for inputs, targets in loader:
            outputs = model(inputs)
            n = len(targets)
            total_loss += loss_fn(outputs, targets).item() * n
            correct += _batch_stats(outputs, targets)
            seen += n
    return {"loss": total_loss / seen, "accuracy": correct / seen}


def format_epoch(record, epochs):
    """One line of progress, e.g. ``epoch  3/20  train loss 0.4123 acc 88.2% | test ...``."""
    width = len(str(epochs))
    line = (f"epoch {record['epoch']:>{width}}/{epochs}  "
            f"train loss {record['train_loss']:.4f} acc {100 * record['train_accuracy']:5.1f}%")
    if "test_loss" in record:
        line += f"  | test loss {record['test_loss']:.4f} acc {100 * record['test_accuracy']:5.1f}%"
    return line + f"  | lr {record['lr']:.4g}  ({record['seconds']:.2f} s)"


def fit(model, train_loader, loss_fn, optimizer, epochs, *, test_loader=None, max_norm=None, scheduler=None,
        batch_scheduler=None, target_accuracy=None, log=print):
    """Train for ``epochs`` epochs; evaluate on ``test_loader`` after each one.

    ``scheduler`` steps once per epoch, ``batch_scheduler`` (e.g. ``OneCycleLR``)
    once per batch. With ``target_accuracy`` training stops at the first epoch
    whose test accuracy reaches it. ``log`` receives one line per epoch
    (``print`` by default, ``None`` for silence). Returns the history.
    """
    history = []
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        lr = optimizer.param_groups[0]["lr"]
        train = train_epoch(model, train_loader, loss_fn, optimizer, max_norm=max_norm, scheduler=batch_scheduler)
        record = {"epoch": epoch, "lr": lr, "train_loss": train["loss"], "train_accuracy": train["accuracy"]}
        if test_loader is not None:
            test = evaluate(model, test_loader, loss_fn)
            record.update(test_loss=test["loss"], test_accuracy=test["accuracy"])
        if scheduler is not None:
            scheduler.step()
        record["seconds"] = time.perf_counter() - start
        history.append(record)
        if log is not None:
            log(format_epoch(record, epochs))
        if target_accuracy is not None and record.get("test_accuracy", 0.0) >= target_accuracy:
            break
    return history
