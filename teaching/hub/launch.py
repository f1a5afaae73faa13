"""Start the class's JupyterHub (``launch.py hub ARGS``) or an account's server
(``launch.py server ARGS``) as ``jupyterhub`` and ``jupyterhub-singleuser`` do, minus
2 CPU seconds each.

Both import ``jupyter_events``, which imports ``jsonschema``, which imports every
optional format checker it finds. One of them, ``rfc3987_syntax`` (the "iri" format,
brought by ``jsonschema[format-nongpl]``), builds 35 Lark parsers when imported: about
2 CPU seconds per process, as much as the rest of a server's imports together
(python-jsonschema/jsonschema#1428, jupyter-server/jupyter_server#1559). No schema of
JupyterHub, Jupyter Server or JupyterLab uses the "iri" format, so these two processes
leave it out: ``sys.modules[name] = None`` makes ``import name`` fail, and jsonschema then
skips that one checker, as it does when the package is not installed. The kernels,
started by the server as processes of their own, are not touched.
"""
import sys

sys.modules["rfc3987_syntax"] = None  # what jsonschema sees when the package is absent


def main(argv):
    role, sys.argv = argv[1], [argv[0], *argv[2:]]
    if role == "hub":
        from jupyterhub.app import main as start
    elif role == "server":
        from jupyterhub.singleuser import main as start
    else:
        sys.exit(f"usage: {argv[0]} hub|server [ARGS]")
    return start()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
