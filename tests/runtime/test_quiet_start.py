"""What a new user sees when ``serve`` starts: no warnings that ask nothing of them.

Celery warns about a worker running as root, which is how ``serve`` runs in a
container (and in this test environment); kapi's workers accept JSON only (the
case Celery itself deems safe), so that warning is silenced.
"""

from __future__ import annotations


def test_no_celery_root_warning(kapi_server):
    """The start-up output has no Celery superuser warning; the workers run."""
    output = kapi_server.output()
    assert "kapi is ready at" in output
    assert "superuser privileges" not in output
    assert "SecurityWarning" not in output
