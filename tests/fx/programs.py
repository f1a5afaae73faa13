"""Programs from PyTorch's torch.fx documentation, as functions of the ``torch`` module.

Each returns what a reader of the docs looks at (generated code, node lists,
values), so that tests can compare edutorch's results with PyTorch's.
"""


def neg_sigmoid_swap(torch, base):
    """The docs' ``NegSigmoidSwap`` methods on ``base`` (``Interpreter`` or ``Transformer``)."""
    class NegSigmoidSwap(base):
        def call_function(self, target, args, kwargs):
            if target == torch.sigmoid:
                return torch.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *args_tail = args
                return call_self.sigmoid(*args_tail, **kwargs)
            return super().call_method(target, args, kwargs)

    return NegSigmoidSwap


def neg_sigmoid_interpreter(torch, x):
    """The ``Interpreter`` docs: swap ``torch.sigmoid`` and ``Tensor.neg`` while running."""
    from torch.fx import Interpreter

    NegSigmoidSwapInterpreter = neg_sigmoid_swap(torch, Interpreter)

    def fn(x):
        return torch.sigmoid(x).neg()

    gm = torch.fx.symbolic_trace(fn)
    input = torch.tensor(x)
    result = NegSigmoidSwapInterpreter(gm).run(input)
    torch.testing.assert_close(result, torch.neg(input).sigmoid())
    return result


def neg_sigmoid_transformer(torch, x):
    """The ``Transformer`` docs: the same swap, recorded as a new GraphModule."""
    from torch.fx import Transformer

    NegSigmoidSwapXformer = neg_sigmoid_swap(torch, Transformer)

    def fn(x):
        return torch.sigmoid(x).neg()

    gm = torch.fx.symbolic_trace(fn)
    transformed = NegSigmoidSwapXformer(gm).transform()
    input = torch.tensor(x)
    torch.testing.assert_close(transformed(input), torch.neg(input).sigmoid())
    return transformed.code, transformed(input)


def shape_prop(torch, x):
    """The docs' shape propagation: an Interpreter recording each node's shape and dtype."""
    from torch.fx import Interpreter

    class ShapeProp(Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            if isinstance(result, torch.Tensor):
                n.meta["shape"] = result.shape
                n.meta["dtype"] = result.dtype
            return result

    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Flatten(0))
    gm = torch.fx.symbolic_trace(model)
    ShapeProp(gm).run(torch.tensor(x))
    return [(n.name, tuple(n.meta.get("shape", ())), str(n.meta.get("dtype"))) for n in gm.graph.nodes]


def replace_cat_by_stack(torch):
    """The ``replace_pattern`` docs example."""
    from torch.fx import symbolic_trace, subgraph_rewriter

    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()

        def forward(self, x, w1, w2):
            m1 = torch.cat([w1, w2]).sum()
            m2 = torch.cat([w1, w2]).sum()
            return x + torch.max(m1) + torch.max(m2)

    def pattern(w1, w2):
        return torch.cat([w1, w2])

    def replacement(w1, w2):
        return torch.stack([w1, w2])

    traced_module = symbolic_trace(M())
    matches = subgraph_rewriter.replace_pattern(traced_module, pattern, replacement)
    return traced_module.code, [(m.anchor.name, sorted((p.name, g.name) for p, g in m.nodes_map.items()))
                                for m in matches]


def filtered_rewrite(torch):
    """``replace_pattern_with_filters``: only the ``x + 1`` followed by relu is replaced."""
    from torch.fx import subgraph_rewriter, symbolic_trace

    class M(torch.nn.Module):
        def forward(self, x, y):
            a = torch.relu(x + 1)
            b = (y + 1) * 2
            c = torch.relu(x + 2)
            return a + b + c

    def pattern(x):
        return x + 1

    def replacement(x):
        return torch.add(x, 1)

    def followed_by_relu(match, original_graph, pattern_graph):
        return all(user.target is torch.relu for n in match.returning_nodes for user in n.users)

    gm = symbolic_trace(M())
    replaced = subgraph_rewriter.replace_pattern_with_filters(gm, pattern, replacement, [followed_by_relu])
    literal = symbolic_trace(M())
    ignoring = subgraph_rewriter.replace_pattern_with_filters(literal, pattern, replacement, ignore_literals=True)
    return (gm.code, [(r.anchor.name, [n.name for n in r.replacements]) for r in replaced],
            literal.code, len(ignoring))


def rewrite_with_modules(torch):
    """A pattern over two functions replaced by one call; the replacement's literal args too."""
    from torch.fx import replace_pattern, symbolic_trace

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            y = torch.sigmoid(self.lin(x)) * self.lin(x)
            return torch.sigmoid(y) * y + torch.sigmoid(x)

    def pattern(a):
        return torch.sigmoid(a) * a

    def replacement(a):
        return torch.mul(a, torch.sigmoid(a))

    gm = symbolic_trace(M())
    matches = replace_pattern(gm, pattern, replacement)
    return gm.code, len(matches)
