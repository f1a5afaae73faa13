"""A Jupyter server that cannot change the lesson sources: what ``./dev lab --solutions`` runs.

``ReadOnlyContentsManager`` is the server's file access (``ServerApp.contents_manager_class``):
every file shows as read-only in JupyterLab, and saving, renaming, deleting or
restoring a checkpoint is refused with HTTP 403, whoever runs the server (file
permissions do not stop root). The kernels still run every cell.
"""
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from tornado.web import HTTPError


def _refuse(what):
    raise HTTPError(403, f"read-only: these are the lesson sources ({what} refused). "
                         "Your own copy of the lessons opens with ./dev lab")


class ReadOnlyContentsManager(AsyncLargeFileManager):
    """Jupyter's file manager with every change refused."""

    def is_writable(self, path):
        return False

    async def save(self, model, path=""):
        _refuse(f"saving {path}")

    async def delete_file(self, path):
        _refuse(f"deleting {path}")

    async def rename_file(self, old_path, new_path):
        _refuse(f"renaming {old_path}")

    async def create_checkpoint(self, path):
        _refuse(f"a checkpoint of {path}")

    async def restore_checkpoint(self, checkpoint_id, path):
        _refuse(f"restoring {path}")
