"""PyTorch's torch.nn.utils pruning and norm examples, run unchanged with ``import edutorch as torch``.

Each example is the code of a docstring example of ``torch.nn.utils.prune``,
``weight_norm``, ``spectral_norm``, ``parametrizations`` and ``skip_init``, or
of the official pruning tutorial.  Only the import lines differ: the body runs
once against edutorch and once against real PyTorch, and where the printed
output is deterministic the two outputs must be identical.
"""
import contextlib
import io
import textwrap

import pytest

from nn_utils_helpers import require_torch

HEADER = """
import {lib} as torch
from {lib} import nn
import {lib}.nn.functional as F
import {lib}.nn.utils.prune as prune
from {lib}.nn.utils import skip_init
from {lib}.nn.utils.prune import random_unstructured, remove
"""

NORM_HEADER = """
from {lib}.nn.utils import weight_norm, remove_weight_norm, spectral_norm, remove_spectral_norm
"""

PARAMETRIZATIONS_HEADER = """
from {lib}.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm
"""

PARAMETRIZE_HEADER = """
import {lib}.nn.utils.parametrize as P
"""

EXAMPLES = {
    # -- torch/nn/utils/prune.py docstrings ----------------------------------------------
    "identity": (HEADER, True, """
        m = prune.identity(nn.Linear(2, 3), "bias")
        print(m.bias_mask)
    """),
    "random_unstructured": (HEADER, True, """
        m = prune.random_unstructured(nn.Linear(2, 3), "weight", amount=1)
        print(torch.sum(m.weight_mask == 0))
    """),
    "l1_unstructured": (HEADER, True, """
        m = prune.l1_unstructured(nn.Linear(2, 3), "weight", amount=0.2)
        print(m.state_dict().keys())
    """),
    "random_structured": (HEADER, True, """
        m = prune.random_structured(nn.Linear(5, 3), "weight", amount=3, dim=1)
        columns_pruned = int(sum(torch.sum(m.weight, dim=0) == 0))
        print(columns_pruned)
    """),
    "ln_structured": (HEADER, True, """
        m = prune.ln_structured(
            nn.Conv2d(5, 3, 2), "weight", amount=0.3, dim=1, n=float("-inf")
        )
        print(int((m.weight_mask == 0).sum()))
    """),
    "global_unstructured": (HEADER, True, """
        from collections import OrderedDict
        net = nn.Sequential(
            OrderedDict(
                [
                    ("first", nn.Linear(10, 4)),
                    ("second", nn.Linear(4, 1)),
                ]
            )
        )
        parameters_to_prune = (
            (net.first, "weight"),
            (net.second, "weight"),
        )
        prune.global_unstructured(
            parameters_to_prune,
            pruning_method=prune.L1Unstructured,
            amount=10,
        )
        print(sum(torch.nn.utils.parameters_to_vector(net.buffers()) == 0))
    """),
    "custom_from_mask": (HEADER, True, """
        m = prune.custom_from_mask(
            nn.Linear(5, 3), name="bias", mask=torch.tensor([0, 1, 0])
        )
        print(m.bias_mask)
    """),
    "remove": (HEADER, True, """
        m = random_unstructured(nn.Linear(5, 7), name="weight", amount=0.2)
        m = remove(m, name="weight")
        print(m.state_dict().keys())
    """),
    "is_pruned": (HEADER, True, """
        m = nn.Linear(5, 7)
        print(prune.is_pruned(m))
        prune.random_unstructured(m, name="weight", amount=0.2)
        print(prune.is_pruned(m))
    """),
    # -- weight_norm.py / spectral_norm.py ---------------------------------------------------
    "weight_norm": (HEADER + NORM_HEADER, True, """
        import warnings
        warnings.simplefilter("ignore", FutureWarning)
        m = weight_norm(nn.Linear(20, 40), name='weight')
        print(m)
        print(m.weight_g.size())
        print(m.weight_v.size())
        m = weight_norm(nn.Linear(20, 40))
        remove_weight_norm(m)
        print(m.state_dict().keys())
    """),
    "spectral_norm": (HEADER + NORM_HEADER, True, """
        m = spectral_norm(nn.Linear(20, 40))
        print(m)
        print(m.weight_u.size())
        m = spectral_norm(nn.Linear(40, 10))
        remove_spectral_norm(m)
        print(m.state_dict().keys())
    """),
    # -- parametrizations.py -----------------------------------------------------------------
    "parametrizations.weight_norm": (HEADER + PARAMETRIZATIONS_HEADER, True, """
        m = weight_norm(nn.Linear(20, 40), name='weight')
        print(m)
        print(m.parametrizations.weight.original0.size())
        print(m.parametrizations.weight.original1.size())
    """),
    "parametrizations.spectral_norm": (HEADER + PARAMETRIZATIONS_HEADER, True, """
        snm = spectral_norm(nn.Linear(20, 40))
        print(snm)
    """),
    "parametrizations.orthogonal": (HEADER + PARAMETRIZATIONS_HEADER, True, """
        orth_linear = orthogonal(nn.Linear(20, 40))
        print(orth_linear)
        Q = orth_linear.weight
        print(bool(((Q.T @ Q - torch.eye(20)) ** 2).sum() < 1e-8))
    """),
    # -- doc examples that need torch.linalg / triu (edutorch/linalg.py) ----------------------
    "parametrize.Symmetric": (HEADER + PARAMETRIZE_HEADER, True, """
        class Symmetric(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).T  # Return a symmetric matrix

            def right_inverse(self, A):
                return A.triu()

        m = nn.Linear(5, 5)
        P.register_parametrization(m, "weight", Symmetric())
        print(torch.allclose(m.weight, m.weight.T))  # m.weight is now symmetric
        A = torch.rand(5, 5)
        A = A + A.T  # A is now symmetric
        m.weight = A  # Initialize the weight to be the symmetric matrix A
        print(torch.allclose(m.weight, A))
    """),
    "parametrize.RankOne": (HEADER + PARAMETRIZE_HEADER, True, """
        class RankOne(nn.Module):
            def forward(self, x, y):
                # Form a rank 1 matrix multiplying two vectors
                return x.unsqueeze(-1) @ y.unsqueeze(-2)

            def right_inverse(self, Z):
                # Project Z onto the rank 1 matrices
                U, S, Vh = torch.linalg.svd(Z, full_matrices=False)
                # Return rescaled singular vectors
                s0_sqrt = S[0].sqrt().unsqueeze(-1)
                return U[..., :, 0] * s0_sqrt, Vh[..., 0, :] * s0_sqrt

        linear_rank_one = P.register_parametrization(
            nn.Linear(4, 4), "weight", RankOne()
        )
        print(torch.linalg.matrix_rank(linear_rank_one.weight).item())
    """),
    # the docstrings print a random value here: we print what does not depend on it
    "parametrizations.orthogonal.dist": (HEADER + PARAMETRIZATIONS_HEADER, True, """
        orth_linear = orthogonal(nn.Linear(20, 40))
        Q = orth_linear.weight
        d = torch.dist(Q.T @ Q, torch.eye(20))
        print(d.shape, d.grad_fn.name(), bool(d < 1e-5))
    """),
    "parametrizations.spectral_norm.matrix_norm": (HEADER + PARAMETRIZATIONS_HEADER, True, """
        snm = spectral_norm(nn.Linear(20, 40))
        sigma = torch.linalg.matrix_norm(snm.weight, 2)
        # u^T W v <= sigma_max(W) for unit u, v: the normalised weight's norm is >= 1
        print(sigma.shape, sigma.grad_fn.name(), bool(sigma > 0.999))
    """),
    # -- init.py -------------------------------------------------------------------------------
    "skip_init": (HEADER, False, """
        m = torch.nn.utils.skip_init(torch.nn.Linear, 5, 1)
        m.weight
        m2 = torch.nn.utils.skip_init(torch.nn.Linear, in_features=6, out_features=1)
        m2.weight
        print(m2.weight.shape)
    """),
    # -- the pruning tutorial (pytorch.org/tutorials/intermediate/pruning_tutorial) ----------
    "tutorial": (HEADER, True, """
        device = torch.device("cpu")

        class LeNet(nn.Module):
            def __init__(self):
                super(LeNet, self).__init__()
                # 1 input image channel, 6 output channels, 3x3 square conv kernel
                self.conv1 = nn.Conv2d(1, 6, 3)
                self.conv2 = nn.Conv2d(6, 16, 3)
                self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5x5 image dimension
                self.fc2 = nn.Linear(120, 84)
                self.fc3 = nn.Linear(84, 10)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
                x = F.max_pool2d(F.relu(self.conv2(x)), 2)
                x = x.view(-1, int(x.nelement() / x.shape[0]))
                x = F.relu(self.fc1(x))
                x = F.relu(self.fc2(x))
                x = self.fc3(x)
                return x

        model = LeNet().to(device=device)
        module = model.conv1
        print([name for name, _ in module.named_parameters()])
        print(list(module.named_buffers()))

        prune.random_unstructured(module, name="weight", amount=0.3)
        print([name for name, _ in module.named_parameters()])
        print([name for name, _ in module.named_buffers()])
        print(module.weight.shape, int((module.weight_mask == 0).sum()))
        print(len(module._forward_pre_hooks))

        prune.l1_unstructured(module, name="bias", amount=3)
        print([name for name, _ in module.named_parameters()])
        print([name for name, _ in module.named_buffers()])
        print(module.bias_mask.sum())

        prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
        print(int((module.weight_mask.sum(dim=(1, 2, 3)) == 0).sum()))
        for hook in module._forward_pre_hooks.values():
            if hook._tensor_name == "weight":  # select out the correct hook
                break
        print([type(m).__name__ for m in hook])

        print(model.state_dict().keys())

        prune.remove(module, 'weight')
        print([name for name, _ in module.named_parameters()])
        print([name for name, _ in module.named_buffers()])

        new_model = LeNet()
        for name, module in new_model.named_modules():
            # prune 20% of connections in all 2D-conv layers
            if isinstance(module, torch.nn.Conv2d):
                prune.l1_unstructured(module, name='weight', amount=0.2)
            # prune 40% of connections in all linear layers
            elif isinstance(module, torch.nn.Linear):
                prune.l1_unstructured(module, name='weight', amount=0.4)

        print(dict(new_model.named_buffers()).keys())  # to verify that all masks exist

        model = LeNet()

        parameters_to_prune = (
            (model.conv1, 'weight'),
            (model.conv2, 'weight'),
            (model.fc1, 'weight'),
            (model.fc2, 'weight'),
            (model.fc3, 'weight'),
        )

        prune.global_unstructured(
            parameters_to_prune,
            pruning_method=prune.L1Unstructured,
            amount=0.2,
        )
        print(
            "Global sparsity: {:.2f}%".format(
                100. * float(
                    torch.sum(model.conv1.weight == 0)
                    + torch.sum(model.conv2.weight == 0)
                    + torch.sum(model.fc1.weight == 0)
                    + torch.sum(model.fc2.weight == 0)
                    + torch.sum(model.fc3.weight == 0)
                )
                / float(
                    model.conv1.weight.nelement()
                    + model.conv2.weight.nelement()
                    + model.fc1.weight.nelement()
                    + model.fc2.weight.nelement()
                    + model.fc3.weight.nelement()
                )
            )
        )
        print(model.conv1(torch.randn(2, 1, 32, 32)).shape)  # the pre-hook runs in forward

        class FooBarPruningMethod(prune.BasePruningMethod):
            \"\"\"Prune every other entry in a tensor
            \"\"\"
            PRUNING_TYPE = 'unstructured'

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask

        def foobar_unstructured(module, name):
            FooBarPruningMethod.apply(module, name)
            return module

        model = LeNet()
        foobar_unstructured(model.fc3, name='bias')

        print(model.fc3.bias_mask)
    """),
}


def run_example(lib, header, body):
    """Run ``header`` (imports for ``lib``) then ``body``; return what it printed."""
    source = header.format(lib=lib) + textwrap.dedent(body)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, f"<example {lib}>", "exec"), {"__name__": "__example__"})
    return out.getvalue()


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs_under_edutorch(name):
    header, _, body = EXAMPLES[name]
    assert run_example("edutorch", header, body)


@pytest.mark.parametrize("name", sorted(k for k, v in EXAMPLES.items() if v[1]))
def test_example_prints_what_torch_prints(name):
    require_torch()
    header, _, body = EXAMPLES[name]
    got = run_example("edutorch", header, body)
    want = run_example("torch", header, body)
    assert got == want
