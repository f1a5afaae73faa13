# `./dev lab --solutions`: JupyterLab on lessons/ (the sources) with every change refused.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # teaching/
from read_only_contents import ReadOnlyContentsManager  # noqa: E402

c = get_config()  # noqa: F821
c.ServerApp.contents_manager_class = ReadOnlyContentsManager
