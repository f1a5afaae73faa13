"""Typical answers to the exercises of lesson 13 · Forward mode and function transforms."""
from . import right, wrong


def _forward_ad(lib):
    return lib.autograd.forward_ad


# --- 13.1 primal and tangent by dual numbers ------------------------------------------------------


@right("13.1")
def dual_level_make_dual_unpack_dual(lib):
    fwAD = _forward_ad(lib)

    def primal_and_tangent(f, x, v):
        with fwAD.dual_level():
            out = f(fwAD.make_dual(x, v))
            primal, tangent = fwAD.unpack_dual(out)
        return primal, tangent
    return (primal_and_tangent,)


@right("13.1")
def torch_func_jvp(lib):
    def primal_and_tangent(f, x, v):
        return lib.func.jvp(f, (x,), (v,))
    return (primal_and_tangent,)


@wrong("13.1", "tangent is None", "INSIDE")
def unpacks_after_leaving_the_dual_level(lib):
    fwAD = _forward_ad(lib)

    def primal_and_tangent(f, x, v):
        with fwAD.dual_level():
            out = f(fwAD.make_dual(x, v))
        return tuple(fwAD.unpack_dual(out))
    return (primal_and_tangent,)


@wrong("13.1", "input's", "vjp", "Jᵀ·u")
def backward_instead_of_forward(lib):
    def primal_and_tangent(f, x, v):
        x = x.detach().requires_grad_()
        out = f(x)
        (g,) = lib.autograd.grad(out, x, lib.ones_like(out))
        return out.detach(), g
    return (primal_and_tangent,)


@wrong("13.1", "v itself", "OUTPUT's tangent")
def returns_the_input_tangent(lib):
    fwAD = _forward_ad(lib)

    def primal_and_tangent(f, x, v):
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, v)
            primal = fwAD.unpack_dual(f(dual)).primal
            tangent = fwAD.unpack_dual(dual).tangent
        return primal, tangent
    return (primal_and_tangent,)


@wrong("13.1", "vector of ones", "direction v")
def tangent_of_ones(lib):
    fwAD = _forward_ad(lib)

    def primal_and_tangent(f, x, v):
        with fwAD.dual_level():
            return tuple(fwAD.unpack_dual(f(fwAD.make_dual(x, lib.ones_like(x)))))
    return (primal_and_tangent,)


@wrong("13.1", "swapped")
def primal_and_tangent_swapped(lib):
    def primal_and_tangent(f, x, v):
        primal, tangent = lib.func.jvp(f, (x,), (v,))
        return tangent, primal
    return (primal_and_tangent,)


# --- 13.2 one column of the Jacobian from one jvp --------------------------------------------------


def _one_hot(lib, x, j):
    e = lib.zeros_like(x)
    e[j] = 1.0
    return e


@right("13.2")
def jvp_with_a_one_hot_tangent(lib):
    def jacobian_column(f, x, j):
        return lib.func.jvp(f, (x,), (_one_hot(lib, x, j),))[1]
    return (jacobian_column,)


@right("13.2")
def forward_ad_with_a_row_of_eye(lib):
    fwAD = _forward_ad(lib)

    def jacobian_column(f, x, j):
        with fwAD.dual_level():
            return fwAD.unpack_dual(f(fwAD.make_dual(x, lib.eye(x.numel(), dtype=x.dtype)[j]))).tangent
    return (jacobian_column,)


@wrong("13.2", "ROW of the Jacobian", "vjp")
def a_row_by_vjp(lib):
    def jacobian_column(f, x, j):
        out, vjp_fn = lib.func.vjp(f, x)
        return vjp_fn(_one_hot(lib, out, j))[0]
    return (jacobian_column,)


@wrong("13.2", "ROW of the Jacobian", "jacfwd(f)(x)[j]")
def indexes_the_jacobian_by_row(lib):
    def jacobian_column(f, x, j):
        return lib.func.jacfwd(f)(x)[j]
    return (jacobian_column,)


@wrong("13.2", "sum of all columns", "one-hot")
def tangent_of_ones_for_a_column(lib):
    def jacobian_column(f, x, j):
        return lib.func.jvp(f, (x,), (lib.ones_like(x),))[1]
    return (jacobian_column,)


@wrong("13.2", "indices start at 0")
def one_hot_off_by_one(lib):
    def jacobian_column(f, x, j):
        return lib.func.jvp(f, (x,), (_one_hot(lib, x, (j + 1) % x.numel()),))[1]
    return (jacobian_column,)


@wrong("13.2", "tangent has another shape than the primal", "INPUT space")
def one_hot_of_the_output_size(lib):
    def jacobian_column(f, x, j):
        e_j = lib.zeros(f(x).numel(), dtype=x.dtype)  # the output's size, not the input's
        e_j[j % e_j.numel()] = 1.0
        return lib.func.jvp(f, (x,), (e_j,))[1]
    return (jacobian_column,)


@wrong("13.2", "the primal", "take the tangent")
def returns_the_primal(lib):
    def jacobian_column(f, x, j):
        return lib.func.jvp(f, (x,), (_one_hot(lib, x, j),))[0]
    return (jacobian_column,)


@wrong("13.2", "the whole Jacobian")
def returns_the_whole_jacobian(lib):
    def jacobian_column(f, x, j):
        return lib.func.jacfwd(f)(x)
    return (jacobian_column,)


# --- 13.3 the cheaper of jacrev and jacfwd ---------------------------------------------------------


def _cheaply(lib, choose, transpose=False, name_only=False):
    def jacobian_cheaply(f, x):
        name = choose(f(x).numel(), x.numel())
        jacobian = getattr(lib.func, name)(f)(x)
        if name_only:
            return jacobian
        return (jacobian.T if transpose else jacobian), name
    return (jacobian_cheaply,)


@right("13.3")
def fewer_outputs_means_jacrev(lib):
    return _cheaply(lib, lambda m, n: "jacrev" if m < n else "jacfwd")


@right("13.3")
def more_outputs_means_jacfwd(lib):
    def jacobian_cheaply(f, x):
        if f(x).numel() > x.numel():  # tall: few inputs, one jvp each
            return lib.func.jacfwd(f)(x), "jacfwd"
        return lib.func.jacrev(f)(x), "jacrev"
    return (jacobian_cheaply,)


@wrong("13.3", "wide function", "jacfwd costs 30 jvps", "choose by which is smaller")
def the_rule_inverted(lib):
    return _cheaply(lib, lambda m, n: "jacfwd" if m < n else "jacrev")


@wrong("13.3", "tall function", "jacrev costs 30 vjps")
def always_jacrev(lib):
    return _cheaply(lib, lambda m, n: "jacrev")


@wrong("13.3", "wide function", "jacfwd costs")
def always_jacfwd(lib):
    return _cheaply(lib, lambda m, n: "jacfwd")


@wrong("13.3", "transposed", "one row per output")
def the_jacobian_transposed(lib):
    return _cheaply(lib, lambda m, n: "jacrev" if m < n else "jacfwd", transpose=True)


@wrong("13.3", "return two things")
def returns_only_the_jacobian(lib):
    return _cheaply(lib, lambda m, n: "jacrev" if m < n else "jacfwd", name_only=True)


# --- 13.4 functional_call --------------------------------------------------------------------------


def _model(lib):
    lib.manual_seed(4)
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))


@right("13.4")
def functional_call_with_the_dict(lib):
    model = _model(lib)
    return (lambda params, x: lib.func.functional_call(model, params, (x,))), model


@right("13.4")
def functional_call_with_a_bare_tensor(lib):
    model = _model(lib)

    def predict(params, x):
        return lib.func.functional_call(model, params, x)
    return predict, model


@wrong("13.4", "ignores params")
def calls_the_model_itself(lib):
    model = _model(lib)
    return (lambda params, x: model(x)), model


@wrong("13.4", "changed the model's own parameters")
def loads_params_into_the_model(lib):
    model = _model(lib)

    def predict(params, x):
        with lib.no_grad():
            for name, p in model.named_parameters():
                p.copy_(params[name])
        return model(x)
    return predict, model


@wrong("13.4", "no gradient reaches params")
def detaches_the_params(lib):
    model = _model(lib)

    def predict(params, x):
        return lib.func.functional_call(model, {k: v.detach() for k, v in params.items()}, (x,))
    return predict, model


@wrong("13.4", "params['2.bias'] was not used")
def passes_only_some_params(lib):
    model = _model(lib)

    def predict(params, x):
        some = {k: v for k, v in params.items() if k != "2.bias"}
        return lib.func.functional_call(model, some, (x,))
    return predict, model


# --- 13.5 per-sample gradients ---------------------------------------------------------------------


def _sample_loss(lib, model, scale=1.0):
    def loss(params, x, y):
        out = lib.func.functional_call(model, params, (x,))
        return ((out - y) ** 2).mean() * scale
    return loss


@right("13.5")
def vmap_of_grad_with_in_dims_none(lib):
    model = _model(lib)
    loss = _sample_loss(lib, model)
    return (lambda params, x, y: lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y),
            model)


@right("13.5")
def a_loop_of_autograd_grad(lib):
    model = _model(lib)

    def per_sample_grads(params, x, y):
        rows = []
        for i in range(x.shape[0]):
            leaves = {k: v.detach().requires_grad_() for k, v in params.items()}
            loss = _sample_loss(lib, model)(leaves, x[i], y[i])
            rows.append(lib.autograd.grad(loss, list(leaves.values())))
        return {name: lib.stack([row[k] for row in rows]) for k, name in enumerate(params)}
    return per_sample_grads, model


@wrong("13.5", "in_dims is None", "in_dims=(None, 0, 0)")
def forgets_in_dims_none_for_params(lib):
    model = _model(lib)
    loss = _sample_loss(lib, model)
    return (lambda params, x, y: lib.func.vmap(lib.func.grad(loss))(params, x, y)), model


@wrong("13.5", "the SUM over the batch")
def sums_the_per_sample_gradients(lib):
    model = _model(lib)
    loss = _sample_loss(lib, model)

    def per_sample_grads(params, x, y):
        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        return {k: g.sum(0) for k, g in grads.items()}
    return per_sample_grads, model


@wrong("13.5", "the batch's mean gradient")
def the_batch_gradient(lib):
    model = _model(lib)

    def per_sample_grads(params, x, y):
        return lib.func.grad(_sample_loss(lib, model))(params, x, y)
    return per_sample_grads, model


@wrong("13.5", "divided by the batch size")
def each_sample_a_share_of_the_batch_loss(lib):
    model = _model(lib)

    def per_sample_grads(params, x, y):
        loss = _sample_loss(lib, model, scale=1.0 / x.shape[0])
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    return per_sample_grads, model
