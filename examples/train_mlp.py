"""Train a small MLP on the 8x8 handwritten digits, PyTorch-style.

    python examples/train_mlp.py            # edutorch
    python examples/train_mlp.py --torch    # the very same code under real PyTorch

The digits (1797 images, UCI, CC BY 4.0) ship with edutorch: no download.
The loop is ``edutorch.utils.train.fit``: zero_grad -> forward -> loss ->
backward -> clip -> step -> schedule, one line of progress per epoch.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import edutorch  # noqa: E402
from edutorch.datasets import load_digits  # noqa: E402
from edutorch.utils.train import fit  # noqa: E402


def build(torch, seed=0):
    """The model, loss, optimizer and schedule (only public PyTorch API)."""
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 10),
    )
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    return model, loss_fn, optimizer


def loaders(torch, batch_size=32, seed=0):
    """Train/test DataLoaders over the shipped digits (converted for real PyTorch if asked)."""
    x_train, y_train = load_digits("train")
    x_test, y_test = load_digits("test")
    if torch is not edutorch:
        x_train, y_train, x_test, y_test = (torch.from_numpy(t.numpy()) for t in (x_train, y_train, x_test, y_test))
    data = torch.utils.data
    train = data.DataLoader(data.TensorDataset(x_train, y_train), batch_size=batch_size, shuffle=True,
                            generator=torch.Generator().manual_seed(seed))
    test = data.DataLoader(data.TensorDataset(x_test, y_test), batch_size=512)
    return train, test


def main(torch=edutorch, epochs=15, target_accuracy=None, log=print, seed=0):
    """Train and return the history (a list of per-epoch dicts)."""
    model, loss_fn, optimizer = build(torch, seed)
    train_loader, test_loader = loaders(torch, seed=seed)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    return fit(model, train_loader, loss_fn, optimizer, epochs, test_loader=test_loader, max_norm=5.0,
               scheduler=scheduler, target_accuracy=target_accuracy, log=log)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", action="store_true", help="run the same code under real PyTorch")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.torch:
        import torch as lib
    else:
        lib = edutorch
    print(f"MLP 64-128-10 on the 8x8 digits with {lib.__name__} (1438 train / 359 test images)")
    start = time.perf_counter()
    history = main(lib, epochs=args.epochs, seed=args.seed)
    last = history[-1]
    best = max(history, key=lambda r: r["test_accuracy"])
    print(f"\nsummary: {len(history)} epochs in {time.perf_counter() - start:.2f} s | "
          f"final train loss {last['train_loss']:.4f}, test loss {last['test_loss']:.4f}, "
          f"test accuracy {100 * last['test_accuracy']:.1f}% (best {100 * best['test_accuracy']:.1f}% "
          f"at epoch {best['epoch']})")
