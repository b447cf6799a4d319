"""Expired admin UI sessions do not pile up in django_session.

Run through the real beat task (``kapi.clear_expired_sessions``, sent to the
session server's broker with ``celery call``).
"""

from __future__ import annotations

import os
import subprocess
import sys

from kapi_testserver import ROOT
from sync_gitops import unique, wait_for

from kapi.runtime import config


def test_expired_admin_sessions_are_cleared(kapi_server):
    """The beat task kapi.clear_expired_sessions deletes expired rows of
    django_session (Django leaves them for ever) and keeps live ones."""
    import psycopg

    url = config._embedded_postgres_url(kapi_server.data_dir / "postgres")
    expired, live = unique("expired"), unique("live")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("INSERT INTO django_session (session_key, session_data, expire_date) VALUES"
                   " (%s, 'x', now() - interval '1 day'), (%s, 'x', now() + interval '1 day')",
                   [expired, live])
    data = kapi_server.data_dir
    env = {**os.environ, "KAPI_DATA_DIR": str(data),
           "CELERY_BROKER_URL": f"redis+socket://{data / 'redis' / 'redis.sock'}",
           "DATABASE_URL": url}
    done = subprocess.run([sys.executable, "-m", "celery", "-A", "kapi", "call",
                           "kapi.clear_expired_sessions"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    def keys():
        with psycopg.connect(url) as db:
            return {k for (k,) in db.execute(
                "SELECT session_key FROM django_session WHERE session_key = ANY(%s)",
                [[expired, live]]).fetchall()}

    wait_for(lambda: keys() == {live}, timeout=60, what="the expired session to go")
