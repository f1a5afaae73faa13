"""``torch.fx``: capture a module's ``forward`` as a graph you can read, change and run.

    gm = edutorch.fx.symbolic_trace(model)   # a GraphModule
    for node in gm.graph.nodes:              # placeholder, get_attr, call_*, output
        if node.op == "call_function":
            print(node.target)
    print(gm.code)                           # the forward generated from the graph

Files as in PyTorch: ``node.py`` (Node), ``graph.py`` (Graph, code generation),
``proxy.py`` (Proxy, TraceError), ``_symbolic_trace.py`` (Tracer,
symbolic_trace, wrap), ``graph_module.py`` (GraphModule), ``interpreter.py``
(Interpreter, Transformer: run or rebuild a graph node by node),
``subgraph_rewriter.py`` (replace_pattern and its filtered variant).
"""
from .graph import Graph, PythonCode
from .graph_module import GraphModule
from .node import Node, map_arg
from .proxy import Proxy
from ._symbolic_trace import Tracer, symbolic_trace, wrap
from .interpreter import Interpreter, Transformer
from .subgraph_rewriter import replace_pattern
from . import interpreter, proxy, subgraph_rewriter

__all__ = ["symbolic_trace", "Tracer", "Graph", "GraphModule", "Node", "Proxy", "map_arg",
           "wrap", "PythonCode", "Interpreter", "Transformer", "replace_pattern"]
