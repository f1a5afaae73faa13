"""Typical answers to the exercises of lesson 02 · Modules, parameters and buffers."""
import copy
import io

from . import right, wrong

# --- 2.1 register parameters --------------------------------------------------------------------


def _affine(lib, make=None, forward=lambda self, x: x * self.weight + self.bias):
    nn = lib.nn
    make = make or (lambda self, n: (nn.Parameter(lib.ones(n)), nn.Parameter(lib.zeros(n))))

    class Affine(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight, self.bias = make(self, n)

        def forward(self, x):
            return forward(self, x)

    return (Affine,)


@right("2.1")
def two_parameters_weight_first(lib):
    return _affine(lib)


@right("2.1")
def register_parameter_and_torch_addcmul(lib):
    nn = lib.nn

    class Affine(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_parameter("weight", nn.Parameter(lib.ones(n)))
            self.register_parameter("bias", nn.Parameter(lib.zeros(n)))

        def forward(self, x):
            return lib.addcmul(self.bias, x, self.weight)

    return (Affine,)


@wrong("2.1", "named_parameters() gives []", "nn.Parameter")
def plain_tensors(lib):
    return _affine(lib, make=lambda self, n: (lib.ones(n), lib.zeros(n)))


@wrong("2.1", "expected ['weight', 'bias']")
def bias_registered_first(lib):
    nn = lib.nn

    class Affine(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.bias = nn.Parameter(lib.zeros(n))
            self.weight = nn.Parameter(lib.ones(n))

        def forward(self, x):
            return x * self.weight + self.bias

    return (Affine,)


@wrong("2.1", "ones", "zeros")
def random_start(lib):
    return _affine(lib, make=lambda self, n: (lib.nn.Parameter(lib.randn(n)), lib.nn.Parameter(lib.zeros(n))))


@wrong("2.1", "shape (3,)")
def one_number_each(lib):
    return _affine(lib, make=lambda self, n: (lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.zeros(1))))


@wrong("2.1", "x * self.weight + self.bias")
def forgets_the_bias_in_forward(lib):
    return _affine(lib, forward=lambda self, x: x * self.weight)


@wrong("2.1", "gradient does not reach self.weight")
def forward_through_detached_weight(lib):
    return _affine(lib, forward=lambda self, x: x * self.weight.detach() + self.bias)


# --- 2.2 predict the names ----------------------------------------------------------------------

KEYS = ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
        "1.num_batches_tracked", "3.gain", "3.step", "3.encoder.weight", "3.encoder.bias"]


@right("2.2", libs=("edutorch",))
def the_keys_in_order(lib):
    return (list(KEYS),)


@right("2.2", libs=("edutorch",))
def the_state_dict_keys_themselves(lib):
    import checks
    return (checks.exercise_2_2_model().state_dict().keys(),)


@wrong("2.2", "'3.scratch' is a non-persistent buffer", libs=("edutorch",))
def includes_the_non_persistent_buffer(lib):
    return (KEYS[:9] + ["3.scratch"] + KEYS[9:],)


@wrong("2.2", "no key starts with '2.'", libs=("edutorch",))
def a_key_for_the_relu(lib):
    return (KEYS[:7] + ["2.weight"] + KEYS[7:],)


@wrong("2.2", "the wrong order", "only then its children", libs=("edutorch",))
def children_before_own_tensors(lib):
    return (KEYS[:7] + ["3.encoder.weight", "3.encoder.bias", "3.gain", "3.step"],)


@wrong("2.2", "missing", "num_batches_tracked", libs=("edutorch",))
def forgets_num_batches_tracked(lib):
    return ([k for k in KEYS if "num_batches" not in k],)


@wrong("2.2", "the list is empty", libs=("edutorch",))
def left_blank_22(lib):
    return ([],)


@wrong("2.2", "pass a list of strings", libs=("edutorch",))
def passes_the_state_dict(lib):
    import checks
    return (checks.exercise_2_2_model().state_dict(),)


# --- 2.3 save and restore -----------------------------------------------------------------------


def _source(lib):
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2))


def _same_shape(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2))


@right("2.3")
def save_then_load_through_a_file(lib):
    source, buffer = _source(lib), io.BytesIO()
    lib.save(source.state_dict(), buffer)
    buffer.seek(0)
    copy_ = _same_shape(lib)
    copy_.load_state_dict(lib.load(buffer))
    return source, copy_


@right("2.3")
def deepcopy_of_the_source(lib):
    source = _source(lib)
    return source, copy.deepcopy(source)


@wrong("2.3", "differs", "load_state_dict")
def a_new_model_never_loaded(lib):
    return _source(lib), _same_shape(lib)


@wrong("2.3", "two different models")
def the_same_object(lib):
    source = _source(lib)
    return source, source


@wrong("2.3", "same Parameter object", "build a new model")
def shares_the_layers(lib):
    source = _source(lib)
    return source, lib.nn.Sequential(*source)


@wrong("2.3", "different keys")
def another_architecture(lib):
    nn = lib.nn
    source = _source(lib)
    return source, nn.Sequential(nn.Linear(5, 4), nn.Linear(4, 2))


@wrong("2.3", "different outputs", "architecture")
def relu_instead_of_tanh(lib):
    nn = lib.nn
    source = _source(lib)
    copy_ = nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 2))
    copy_.load_state_dict(source.state_dict())
    return source, copy_


@wrong("2.3", "copy is not a model yet")
def left_blank_23(lib):
    return _source(lib), None


# --- 2.4 a buffer and a mode --------------------------------------------------------------------


def _running_max(lib, last_persistent=False, start=float("-inf"), only_training=True, last_always=True,
                 as_parameter=False):
    nn = lib.nn

    class RunningMax(nn.Module):
        def __init__(self):
            super().__init__()
            if as_parameter:
                self.max_seen = nn.Parameter(lib.tensor(start), requires_grad=False)
            else:
                self.register_buffer("max_seen", lib.tensor(start))
            self.register_buffer("last", lib.zeros(0), persistent=last_persistent)

        def forward(self, x):
            if self.training or not only_training:
                new = lib.maximum(self.max_seen, x.max().detach())
                if as_parameter:
                    self.max_seen.data = new
                else:
                    self.max_seen = new
            if self.training or last_always:
                self.last = x.detach()
            return x

    return (RunningMax,)


@right("2.4")
def buffers_registered_and_replaced(lib):
    return _running_max(lib)


@right("2.4")
def in_place_updates(lib):
    nn = lib.nn

    class RunningMax(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("max_seen", lib.tensor(float("-inf")))
            self.register_buffer("last", lib.zeros(0), persistent=False)

        def forward(self, x):
            with lib.no_grad():
                if self.training:
                    self.max_seen.fill_(max(self.max_seen.item(), x.max().item()))
                self.last = x.clone()
            return x

    return (RunningMax,)


@wrong("2.4", "persistent=False")
def last_is_persistent(lib):
    return _running_max(lib, last_persistent=True)


@wrong("2.4", "must start at -inf")
def starts_at_zero(lib):
    return _running_max(lib, start=0.0)


@wrong("2.4", "in eval mode", "must not change")
def updates_in_eval_mode(lib):
    return _running_max(lib, only_training=False)


@wrong("2.4", "'last' must hold the last input, in both modes")
def last_only_in_training(lib):
    return _running_max(lib, last_always=False)


@wrong("2.4", "named_buffers() gives ['last']")
def max_seen_as_a_parameter(lib):
    return _running_max(lib, as_parameter=True)
