"""Typical answers to the exercises of lesson 09 · Extending autograd."""
from . import right, wrong


def _function(lib, forward, backward, name="Fn", decorate=None):
    """An autograd.Function class named ``name`` with the given static methods."""
    backward = staticmethod(decorate(backward) if decorate else backward)
    return type(name, (lib.autograd.Function,), {"forward": staticmethod(forward), "backward": backward})


# --- 9.1 Softplus -------------------------------------------------------------------------------


def _softplus(lib, grad=lambda lib, g, x: g * lib.sigmoid(x), save=True):
    def forward(ctx, x):
        if save:
            ctx.save_for_backward(x)
        else:
            ctx.x = x
        return lib.log1p(x.exp())

    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors if save else (ctx.x,)
        return grad(lib, grad_output, x)

    return (_function(lib, forward, backward, "Softplus"),)


@right("9.1")
def saves_x_returns_grad_times_sigmoid(lib):
    return _softplus(lib)


@right("9.1")
def sigmoid_written_out(lib):
    return _softplus(lib, grad=lambda lib, g, x: g / (1 + (-x).exp()))


@wrong("9.1", "sigmoid(x) alone", "chain rule")
def forgets_grad_output(lib):
    return _softplus(lib, grad=lambda lib, g, x: lib.sigmoid(x))


@wrong("9.1", "softplus(x), the output")
def multiplies_by_the_output(lib):
    return _softplus(lib, grad=lambda lib, g, x: g * lib.log1p(x.exp()))


@wrong("9.1", "exp(x) is only the derivative of the inside")
def derivative_of_the_inside_only(lib):
    return _softplus(lib, grad=lambda lib, g, x: g * x.exp())


@wrong("9.1", "nothing was saved", "ctx.save_for_backward")
def keeps_x_as_an_attribute(lib):
    return _softplus(lib, save=False)


@wrong("9.1", "pass the class Softplus itself")
def passes_apply_91(lib):
    return (_softplus(lib)[0].apply,)


# --- 9.2 compute only what is needed ------------------------------------------------------------


def _mul(lib, backward):
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    return (_function(lib, forward, backward, "Mul"),)


@right("9.2")
def none_where_not_needed(lib):
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return (grad_output * b if ctx.needs_input_grad[0] else None,
                grad_output * a if ctx.needs_input_grad[1] else None)
    return _mul(lib, backward)


@right("9.2")
def unpacks_needs_input_grad(lib):
    def backward(ctx, grad_output):
        need_a, need_b = ctx.needs_input_grad
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        if need_a:
            grad_a = b * grad_output
        if need_b:
            grad_b = a * grad_output
        return grad_a, grad_b
    return _mul(lib, backward)


@wrong("9.2", "ctx.needs_input_grad is", "does not require grad")
def always_both_gradients(lib):
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output * b, grad_output * a
    return _mul(lib, backward)


@wrong("9.2", "the gradient for a is grad_output * b")
def swapped_gradients(lib):
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return (grad_output * a if ctx.needs_input_grad[0] else None,
                grad_output * b if ctx.needs_input_grad[1] else None)
    return _mul(lib, backward)


@wrong("9.2", "return one per input")
def one_gradient_only(lib):
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output * b
    return _mul(lib, backward)


@wrong("9.2", "requires grad", "backward")
def none_for_both(lib):
    return _mul(lib, lambda ctx, grad_output: (None, None))


@wrong("9.2", "pass the class Mul itself")
def passes_apply_92(lib):
    return (_mul(lib, lambda ctx, g: (None, None))[0].apply,)


# --- 9.3 a Tanh with a second derivative --------------------------------------------------------


def _tanh(lib, grad=lambda g, out: g * (1 - out * out), decorate=None, forward=lambda x: x.tanh()):
    def fwd(ctx, x):
        out = forward(x)
        ctx.save_for_backward(out)
        return out

    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad(grad_output, out)

    return (_function(lib, fwd, backward, "Tanh", decorate),)


@right("9.3")
def saves_the_output(lib):
    return _tanh(lib)


@right("9.3")
def saves_the_input_and_recomputes_tanh(lib):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.tanh()

    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (1 - x.tanh() ** 2)

    return (_function(lib, forward, backward, "Tanh"),)


@wrong("9.3", "once_differentiable")
def marked_once_differentiable(lib):
    from importlib import import_module

    once = import_module(lib.__name__ + ".autograd.function").once_differentiable
    return _tanh(lib, decorate=once)


@wrong("9.3", "second derivative is wrong", ".numpy()")
def backward_through_numpy(lib):
    return _tanh(lib, grad=lambda g, out: g * lib.tensor(1 - out.detach().numpy() ** 2))


@wrong("9.3", "first derivative is wrong")
def one_minus_tanh(lib):
    return _tanh(lib, grad=lambda g, out: g * (1 - out))


@wrong("9.3", "must return tanh(x)")
def sigmoid_forward(lib):
    return _tanh(lib, forward=lambda x: x.sigmoid())


@wrong("9.3", "second derivative is wrong", ".detach()")
def detached_saved_output(lib):
    return _tanh(lib, grad=lambda g, out: g * (1 - out.detach() ** 2))


# --- 9.4 fix an in-place change -----------------------------------------------------------------


@right("9.4")
def a_new_tensor_instead_of_mul_(lib):
    return (lambda x: (2 * x.sigmoid()).sum(),)


@right("9.4")
def in_place_on_a_clone(lib):
    def loss_fixed(x):
        y = x.sigmoid().clone()
        y.mul_(2)
        return y.sum()
    return (loss_fixed,)


@wrong("9.4", "modified in place")
def unchanged_loss_of(lib):
    def loss_of(x):
        y = x.sigmoid()
        y.mul_(2)
        return y.sum()
    return (loss_of,)


@wrong("9.4", "keep its value", "2 * sigmoid(x)")
def drops_the_doubling(lib):
    return (lambda x: x.sigmoid().sum(),)


@wrong("9.4", "not connected to x")
def detaches_the_loss(lib):
    return (lambda x: (2 * x.sigmoid()).detach().sum(),)


@wrong("9.4", "one-number tensor")
def returns_a_python_float(lib):
    return (lambda x: (2 * x.sigmoid()).sum().item(),)


@wrong("9.4", "not the gradient of the sum of 2 * sigmoid(x)")
def doubles_through_data(lib):
    def loss_fixed(x):
        y = x.sigmoid() + 0
        y.data.mul_(2)
        return y.sum()
    return (loss_fixed,)


# --- 9.5 which op made the NaN? -----------------------------------------------------------------


def _mystery(lib, culprit):
    def mystery(x):
        a = x.exp()
        b = lib.where(x.abs() < 1, x.asin(), x.sign() * 1.5)
        return (a * b + x.pow(2)).sum()

    x = lib.tensor([0.5, 2.0, -3.0], requires_grad=True)
    mystery(x).backward()
    return culprit, mystery, x


@right("9.5")
def the_node_name_from_the_error(lib):
    return _mystery(lib, "AsinBackward0")


@right("9.5")
def the_op_name(lib):
    return _mystery(lib, "torch.asin")


@wrong("9.5", "where's backward", "creates no NaN")
def blames_where(lib):
    return _mystery(lib, "WhereBackward0")


@wrong("9.5", "is not the node detect_anomaly names")
def blames_exp(lib):
    return _mystery(lib, "ExpBackward0")


@wrong("9.5", "is not the node detect_anomaly names")
def blames_the_last_node(lib):
    return _mystery(lib, "SumBackward0")


@wrong("9.5", "must be a name (a string)")
def left_blank_95(lib):
    return _mystery(lib, None)


@wrong("9.5", "must be a name (a string)")
def passes_the_error_object(lib):
    return _mystery(lib, RuntimeError("Function 'AsinBackward0' returned nan values"))


# --- 9.6 measure what a graph keeps -------------------------------------------------------------


def _saved_bytes(lib, size=lambda t: t.numel() * t.element_size(), inside=True, distinct=False):
    def saved_bytes(fn, *args):
        sizes, seen = [], set()

        def pack(t):
            if not (distinct and id(t) in seen):
                sizes.append(size(t))
            seen.add(id(t))
            return t

        if not inside:
            fn(*args)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            if inside:
                fn(*args)
        return sum(sizes)
    return (saved_bytes,)


@right("9.6")
def numel_times_element_size_inside_the_hooks(lib):
    return _saved_bytes(lib)


@right("9.6")
def nbytes_of_each_packing(lib):
    return _saved_bytes(lib, size=lambda t: t.nelement() * t.element_size())


@wrong("9.6", "number of tensors saved", "add up their bytes")
def counts_tensors(lib):
    return _saved_bytes(lib, size=lambda t: 1)


@wrong("9.6", "count of elements", "t.element_size()")
def counts_elements(lib):
    return _saved_bytes(lib, size=lambda t: t.numel())


@wrong("9.6", "0 bytes", "INSIDE")
def calls_fn_outside_the_hooks(lib):
    return _saved_bytes(lib, inside=False)


@wrong("9.6", "returns None")
def forgets_to_return(lib):
    def saved_bytes(fn, *args):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            fn(*args)
    return (saved_bytes,)


@wrong("9.6", "the hooks see")
def counts_each_tensor_once(lib):
    return _saved_bytes(lib, distinct=True)
