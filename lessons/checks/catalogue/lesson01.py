"""Typical answers to the exercises of lesson 01 · Tensors and autograd."""
from . import right, wrong

# --- 1.1 your first gradient --------------------------------------------------------------------


def _leaf(lib, value=2.0, backwards=1, f=lambda x: x ** 3 - 3 * x, **kwargs):
    x = lib.tensor(value, **{"requires_grad": True, **kwargs})
    for _ in range(backwards):
        f(x).backward()
    return x


@right("1.1")
def the_leaf_after_one_backward(lib):
    return (_leaf(lib),)


@right("1.1")
def autograd_grad_stored_by_hand(lib):
    x = lib.tensor(2.0, requires_grad=True)
    (grad,) = lib.autograd.grad(x ** 3 - 3 * x, x)
    x.grad = grad
    return (x,)


@wrong("1.1", "ACCUMULATE", "backward ran 2 times")
def backward_twice(lib):
    return (_leaf(lib, backwards=2),)


@wrong("1.1", "does not require grad", "Pass x itself")
def passes_the_gradient(lib):
    return (_leaf(lib).grad,)


@wrong("1.1", "x.grad is None", "f.backward()")
def forgets_backward(lib):
    return (_leaf(lib, backwards=0),)


@wrong("1.1", "d/dx (x**3 - 3*x)")
def another_function(lib):
    return (_leaf(lib, f=lambda x: x ** 3),)


@wrong("1.1", "x is None")
def left_blank_11(lib):
    return (None,)


@wrong("1.1", "must be a leaf")
def a_non_leaf(lib):
    x = lib.tensor(1.0, requires_grad=True) * 2
    x.retain_grad()
    (x ** 3 - 3 * x).backward()
    return (x,)


# --- 1.2 read the graph -------------------------------------------------------------------------

PATH = ["SumBackward0", "ExpBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"]


def _walk(lib):
    a, b, c = (lib.tensor(v, requires_grad=True) for v in ([1.0, 2.0], [3.0, 4.0], [0.5, 0.5]))
    node, names = ((a * b) + c).exp().sum().grad_fn, []
    while node is not None:
        names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@right("1.2", libs=("edutorch",))
def written_by_reasoning(lib):
    return (list(PATH),)


@right("1.2")
def walked_in_code(lib):
    return (_walk(lib),)


@wrong("1.2", "AccumulateGrad", libs=("edutorch",))
def stops_before_the_leaf(lib):
    return (PATH[:-1],)


@wrong("1.2", "start at loss.grad_fn", libs=("edutorch",))
def starts_at_the_leaf(lib):
    return (PATH[::-1],)


@wrong("1.2", "step 2", "next_functions[0][0]", libs=("edutorch",))
def skips_the_add(lib):
    return (["SumBackward0", "ExpBackward0", "MulBackward0", "AccumulateGrad"],)


@wrong("1.2", "pass a list of names", libs=("edutorch",))
def one_string(lib):
    return (" -> ".join(PATH),)


@wrong("1.2", "start at loss.grad_fn", libs=("edutorch",))
def the_operation_names(lib):
    return (["sum", "exp", "add", "mul", "a"],)


# --- 1.3 a clean gradient -----------------------------------------------------------------------


def _w(lib, backwards_before=3, reset=True, reset_with="none"):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for _ in range(backwards_before):
        (w ** 2).sum().backward()
    if reset and reset_with == "none":
        w.grad = None
    elif reset:
        w.grad.zero_()
    (w ** 2).sum().backward()
    return (w,)


@right("1.3")
def grad_set_to_none(lib):
    return _w(lib)


@right("1.3")
def grad_zeroed_in_place(lib):
    return _w(lib, reset_with="zero_")


@wrong("1.3", "4×", "BEFORE calling backward")
def never_resets(lib):
    return _w(lib, reset=False)


@wrong("1.3", "w.grad is None")
def resets_after_backward(lib):
    w = _w(lib)[0]
    w.grad = None
    return (w,)


@wrong("1.3", "but the gradient of (w**2).sum()")
def another_loss(lib):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w.sum().backward()
    return (w,)


@wrong("1.3", "w.grad is None")
def passes_a_fresh_tensor(lib):
    return (lib.tensor([1.0, 2.0, 3.0], requires_grad=True),)


@wrong("1.3", "2×")
def backward_once_more_without_reset(lib):
    return _w(lib, backwards_before=1, reset=False)


# --- 1.4 write a Function -----------------------------------------------------------------------


def _sigmoid(lib, forward=lambda x: 1 / (1 + (-x).exp()), grad=lambda g, y: g * y * (1 - y)):
    class MySigmoid(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = forward(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            (y,) = ctx.saved_tensors
            return grad(grad_output, y)

    return MySigmoid


@right("1.4")
def saves_the_output(lib):
    return (_sigmoid(lib),)


@right("1.4")
def saves_the_input_and_recomputes(lib):
    class MySigmoid(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return lib.sigmoid(x)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            s = 1 / (1 + lib.exp(-x))
            return grad_output * s * (1 - s)

    return (MySigmoid,)


@wrong("1.4", "gradcheck failed", "grad_output * y * (1 - y)")
def forgets_grad_output(lib):
    return (_sigmoid(lib, grad=lambda g, y: y * (1 - y)),)


@wrong("1.4", "gradcheck failed")
def derivative_of_the_wrong_function(lib):
    return (_sigmoid(lib, grad=lambda g, y: g * (1 - y)),)


@wrong("1.4", "does not compute the sigmoid")
def tanh_instead(lib):
    return (_sigmoid(lib, forward=lambda x: x.tanh()),)


@wrong("1.4", "pass the class itself")
def passes_apply(lib):
    return (_sigmoid(lib).apply,)


@wrong("1.4", "backward raised")
def unpacks_saved_tensors_wrongly(lib):
    return (_sigmoid(lib, grad=lambda g, y: g * y[5] * (1 - y)),)
