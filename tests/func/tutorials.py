"""Programs from PyTorch's torch.func tutorials, written as functions of the ``torch`` module.

The tutorial code is kept as published; only where it draws random inputs
(``torch.randn``, a fresh model's initial weights) the numbers come from the
caller (``inputs``), so that PyTorch and edutorch run on the same numbers, and
``device = 'cuda'`` is the CPU.  Each function returns what the tutorial prints
or asserts on.
"""
import contextlib
import sys
from functools import partial


@contextlib.contextmanager
def imported_as_torch(module):
    """Make ``import torch``/``from torch.func import grad`` inside a tutorial find ``module``."""
    names = {"torch": module, "torch.func": module.func, "torch.nn": module.nn,
             "torch.nn.functional": module.nn.functional, "torch.fx": module.fx, "torch.testing": module.testing}
    saved = {name: sys.modules.get(name) for name in names}
    sys.modules.update(names)
    try:
        yield module
    finally:
        for name, old in saved.items():
            if old is None:
                del sys.modules[name]
            else:
                sys.modules[name] = old


def per_sample_grads(torch, inputs, batch_size=64):
    """https://pytorch.org/tutorials/intermediate/per_sample_grads.html"""
    nn = torch.nn
    F = torch.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super(SimpleCNN, self).__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    device = 'cpu'
    data = torch.tensor(inputs["data"][:batch_size], device=device)
    targets = torch.tensor(inputs["targets"][:batch_size], device=device)
    model = SimpleCNN().to(device=device)
    model.load_state_dict({k: torch.tensor(v) for k, v in inputs["state"].items()})

    predictions = model(data)  # move the entire mini-batch through the model
    loss = loss_fn(predictions, targets)
    loss.backward()  # back propagate the 'average' gradient of this mini-batch

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)  # prepend batch dimension for processing
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return torch.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        """ manually process each sample with per sample gradient """
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
        sample_grads = zip(*sample_grads)
        sample_grads = [torch.stack(shards) for shards in sample_grads]
        return sample_grads

    per_sample_grads = compute_sample_grads(data, targets)

    from torch.func import functional_call, vmap, grad

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)

    # we can double check that the results using ``torch.func.grad`` and ``vmap`` match the results of
    # hand processing each one individually:
    for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
        assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
    return per_sample_grads, ft_per_sample_grads


def ensembling(torch, inputs, num_models=10):
    """https://pytorch.org/tutorials/intermediate/ensembling.html (without ``base_model.to('meta')``)"""
    nn = torch.nn
    F = torch.nn.functional

    class SimpleMLP(nn.Module):
        def __init__(self):
            super(SimpleMLP, self).__init__()
            self.fc1 = nn.Linear(784, 128)
            self.fc2 = nn.Linear(128, 128)
            self.fc3 = nn.Linear(128, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            x = F.relu(x)
            x = self.fc3(x)
            return x

    device = 'cpu'
    data = torch.tensor(inputs["data"], device=device)
    models = [SimpleMLP().to(device) for _ in range(num_models)]
    for model, state in zip(models, inputs["states"]):
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})

    minibatches = data[:num_models]
    predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]
    minibatch = data[0]
    predictions2 = [model(minibatch) for model in models]

    from torch.func import stack_module_state

    params, buffers = stack_module_state(models)

    from torch.func import functional_call
    import copy

    # Construct a "stateless" version of one of the models. It is "stateless" in
    # the sense that the parameters are meta Tensors and do not have storage.
    base_model = copy.deepcopy(models[0])

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    sizes = [p.size(0) for p in params.values()]  # show the leading 'num_models' dimension
    assert minibatches.shape == (num_models, 64, 1, 28, 28)  # verify minibatch has leading dimension of size 'num_models'

    from torch import vmap

    predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)

    # verify the ``vmap`` predictions match the
    assert torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)
    predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)

    assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)
    return sizes, predictions1_vmap, predictions2_vmap


def jacobians_hessians(torch, inputs, hessian_sizes=(512, 32), batch_size=64):
    """https://pytorch.org/tutorials/intermediate/jacobians_hessians.html (its reverse-mode parts)"""
    F = torch.nn.functional

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    D = 16
    weight = torch.tensor(inputs["weight"])
    bias = torch.tensor(inputs["bias"])
    x = torch.tensor(inputs["x"])  # feature vector

    def compute_jac(xp):
        jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                         for vec in unit_vectors]
        return torch.stack(jacobian_rows)

    xp = x.clone().requires_grad_()
    unit_vectors = torch.eye(D)

    jacobian = compute_jac(xp)

    from torch.func import vmap, vjp

    _, vjp_fn = vjp(partial(predict, weight, bias), x)

    ft_jacobian, = vmap(vjp_fn)(unit_vectors)

    # let's confirm both methods compute the same result
    assert torch.allclose(ft_jacobian, jacobian)

    from torch.func import jacrev

    ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)

    # Confirm by running the following
    assert torch.allclose(ft_jacobian, jacobian)

    ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)

    from torch.func import hessian

    Din, Dout = hessian_sizes
    weight_h = torch.tensor(inputs["weight_h"][:Dout, :Din])
    bias_h = torch.tensor(inputs["bias_h"][:Dout])
    x_h = torch.tensor(inputs["x_h"][:Din])

    hess_api = hessian(predict, argnums=2)(weight_h, bias_h, x_h)
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight_h, bias_h, x_h)
    assert torch.allclose(hess_api, hess_revrev)

    Din = 31
    Dout = 33
    weight = torch.tensor(inputs["weight_b"])
    bias = torch.tensor(inputs["bias_b"])
    x = torch.tensor(inputs["x_b"][:batch_size])

    compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    batch_jacobian0 = compute_batch_jacobian(weight, bias, x)

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
    # The tutorial asserts allclose with the default atol=1e-8: in PyTorch both sides come from the
    # same batched matmul, bit for bit.  edutorch's vmap computes ``linear`` per sample (a
    # matrix-vector product, rounded otherwise in float32), hence the atol.
    assert torch.allclose(batch_jacobian0, batch_jacobian1, atol=1e-6)
    return jacobian, ft_jac_weight, ft_jac_bias, hess_api, batch_jacobian0, batch_jacobian1, (Din, Dout)
