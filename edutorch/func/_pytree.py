"""Pytrees: nested tuples, lists and dicts of tensors, as ``torch.utils._pytree`` sees them.

``torch.func`` takes and returns such nests (``f(x, (y, z))``, a dict of
parameters) and walks them by flattening: ``tree_flatten`` gives the leaves
in order plus a ``TreeSpec`` that ``tree_unflatten`` uses to rebuild the
same nest around new leaves.  Tuples, lists and dicts are containers;
everything else (a tensor, a number, None) is a leaf.
"""


class TreeSpec:
    """The shape of a nest: its container type, dict keys and children (a leaf has no type)."""

    def __init__(self, type_=None, context=None, children=()):
        self.type = type_
        self.context = context          # dict keys, in order; None for tuples and lists
        self.children = list(children)

    def is_leaf(self):
        return self.type is None

    @property
    def num_leaves(self):
        return 1 if self.is_leaf() else sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type == other.type and self.context == other.context
                and self.children == other.children)

    def __repr__(self, indent=0):
        """PyTorch's layout: ``TreeSpec(tuple, None, [*,\\n  *])``, ``*`` for a leaf."""
        if self.is_leaf():
            return "*"
        inner = indent + 2
        parts = [c.__repr__(inner) for c in self.children]
        body = (",\n" + " " * inner).join(parts)
        return f"TreeSpec({self.type.__name__}, {self.context}, [{body}])"


LEAF = TreeSpec()


def _children(tree):
    """``(type, context, children)`` of a container, or None for a leaf."""
    if isinstance(tree, (tuple, list)) and not hasattr(tree, "_fields"):
        return type(tree), None, list(tree)
    if isinstance(tree, dict):
        keys = list(tree)
        return dict, keys, [tree[k] for k in keys]
    return None


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves left to right and the nest's shape."""
    split = _children(tree)
    if split is None:
        return [tree], LEAF
    type_, context, children = split
    leaves, specs = [], []
    for child in children:
        child_leaves, child_spec = tree_flatten(child)
        leaves += child_leaves
        specs.append(child_spec)
    return leaves, TreeSpec(type_, context, specs)


def tree_unflatten(leaves, spec):
    """The nest of shape ``spec`` holding ``leaves`` (the inverse of ``tree_flatten``)."""
    leaves = iter(leaves)

    def build(s):
        if s.is_leaf():
            return next(leaves)
        children = [build(c) for c in s.children]
        if s.type is dict:
            return dict(zip(s.context, children))
        return s.type(children)

    return build(spec)


def tree_map(fn, tree):
    """The same nest with ``fn`` applied to each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix, tree, is_leaf_prefix):
    """Expand ``prefix`` (``in_dims``, ``out_dims``) to one entry per leaf of ``tree``.

    A leaf of the prefix (an int or None) applies to the whole subtree under it,
    as ``in_dims=(0, None)`` gives 0 to every tensor of the first argument.
    Returns None when the prefix's containers do not match the tree's.
    """
    if is_leaf_prefix(prefix):
        return [prefix] * tree_flatten(tree)[1].num_leaves
    split_prefix, split_tree = _children(prefix), _children(tree)
    if split_prefix is None or split_tree is None:
        return None
    if split_prefix[0] is not split_tree[0] and not (  # a list prefix may describe a tuple, as in PyTorch
            issubclass(split_prefix[0], (tuple, list)) and issubclass(split_tree[0], (tuple, list))):
        return None
    if split_prefix[1] is not None and sorted(split_prefix[1]) != sorted(split_tree[1]):
        return None
    if split_prefix[1] is not None:  # dicts: follow the tree's key order
        pairs = [(prefix[k], tree[k]) for k in split_tree[1]]
    elif len(split_prefix[2]) != len(split_tree[2]):
        return None
    else:
        pairs = zip(split_prefix[2], split_tree[2])
    result = []
    for p, t in pairs:
        expanded = broadcast_prefix(p, t, is_leaf_prefix)
        if expanded is None:
            return None
        result += expanded
    return result
