"""Only storage speaks SQL to the object and change-log tables: every other
module reads and writes them through ``kapi.storage`` (the ``Storage``
interface, ``kapi.storage.browse`` for the admin's reads), so the rows' layout
can change in one place.

The controller runtime (``kapi.controllers``) reads the change log through
storage's feeds; the lifecycle's controllers and the sync find objects through
``Storage``'s summaries (``kapi.storage.summaries``) and ask for a namespace's
deletes with ``kapi.storage.purge`` (issue #18). No module is exempt.
"""

from __future__ import annotations

import re
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]

#: SQL naming the tables (or their sequence), and ORM access to their models.
_TABLE_SQL = re.compile(
    r"\b(?:from|join|into|update|table)\s+kapi_(?:object|change)\b"
    r"|\bkapi_(?:resource_version|next_rv|rv_horizon)\b"
    r"|\b(?:Change|StoredObject)\.objects\b",
    re.IGNORECASE,
)

#: Where these statements may be: storage and the schemas' migrations.
_OWNERS = ("kapi/storage/", "kapi/migrations/", "kapi/models.py", "sync/migrations/")



def _offenders() -> list[str]:
    found = []
    for top in ("kapi", "sync"):
        for path in sorted((_REPO / top).rglob("*.py")):
            name = path.relative_to(_REPO).as_posix()
            if name.startswith(_OWNERS):
                continue
            if _TABLE_SQL.search(path.read_text(encoding="utf-8")):
                found.append(name)
    return found


def test_no_module_outside_storage_speaks_sql_to_the_object_tables() -> None:
    """The admin, the metrics, the API, the handlers and the registry included."""
    assert _offenders() == []


def test_the_pattern_finds_what_it_looks_for() -> None:
    """A check that matches nothing would pass forever."""
    assert _TABLE_SQL.search('execute("SELECT data FROM kapi_object WHERE uid = %s")')
    assert _TABLE_SQL.search("SELECT max(resource_version) FROM kapi_change")
    assert _TABLE_SQL.search("Change.objects.filter(uid=uid)")
    assert not _TABLE_SQL.search('path(obj, view, name="kapi_object")')
    assert not _TABLE_SQL.search("kapi_change_log_rows")
