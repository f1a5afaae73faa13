"""nbgrader's collect for a class of real users (``./dev hub --system-users``): a submission
counts as the submission of the user who owns it.

Every student may write into the exchange's ``inbound/`` (that is how they hand in), so a
student can put a folder there named after another student, with a later time in its
name. nbgrader's own collect takes that folder as the other student's latest submission
and only warns (``check_owner``). ``OwnedCollect`` collects it as its owner's: the student
it names keeps their own submission. The instructor's nbgrader uses it
(``teaching/hub/instructor/nbgrader_config.py``: ``ExchangeFactory.collect``).
"""
from __future__ import annotations

import os
import pwd

from nbgrader.exchange.default import ExchangeCollect


class OwnedCollect(ExchangeCollect):
    """nbgrader's ``ExchangeCollect``; a submission's student is the owner of its folder."""

    def _path_to_record(self, path):
        record = super()._path_to_record(path)
        uid = os.stat(path).st_uid
        try:
            owner = pwd.getpwuid(uid).pw_name
        except KeyError:
            owner = f"uid {uid}"
        if owner != record["username"]:
            self.log.warning("%s is named after %s but owned by %s: collected as %s's (cheating attempt?)",
                             path, record["username"], owner, owner)
            record["username"] = owner
        return record
