"""``manage.py rotate_signing_key [--retire]``: add a new token signing key.

New tokens are signed with it at once in every process; tokens signed with the
older keys keep working until ``--retire`` removes those keys.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from kapi.auth import signing

__all__ = ["Command"]


class Command(BaseCommand):
    help = (
        "Add a new ServiceAccount/user token signing key (--retire drops the old ones)."
    )
    requires_system_checks: list = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--retire", action="store_true", help="Remove the older keys."
        )
        parser.add_argument("--data-dir", help="Data directory (applied by manage.py).")

    def handle(self, *args: object, **options: object) -> None:
        kid = signing.rotate(retire=bool(options.get("retire")))
        self.stdout.write(f"signing key {kid}\n")
