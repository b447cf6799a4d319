"""The first sign-in: a superuser ``admin`` with a generated password.

After every ``migrate`` (``serve`` runs one on each start), if no superuser
exists yet, one named ``admin`` is created and its password written to
``<data dir>/admin-password`` (mode 0600); ``serve`` prints where to find it.
Change it in the admin, or make other users with ``createsuperuser``.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.conf import settings

__all__ = ["ADMIN_USERNAME", "ensure_admin_user", "on_post_migrate", "password_file"]

ADMIN_USERNAME = "admin"


def password_file(data_dir: Path | None = None) -> Path:
    return Path(data_dir or settings.DATA_DIR) / "admin-password"


def ensure_admin_user(data_dir: Path | None = None) -> bool:
    """Create the first superuser unless there is one; True if created."""
    from django.contrib.auth import get_user_model

    users = get_user_model()
    if users.objects.filter(is_superuser=True).exists():
        return False
    password = secrets.token_urlsafe(18)
    path = password_file(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(password + "\n")
    users.objects.create_superuser(ADMIN_USERNAME, "", password)
    # The file appears only once the user exists: it is never a stale password.
    os.replace(tmp, path)
    return True


def on_post_migrate(sender, **kwargs) -> None:
    if os.environ.get("KAPI_ADMIN_BOOTSTRAP", "1") != "0":
        ensure_admin_user()
