"""``manage.py kubeconfig``: print a kubeconfig for the kapi of a data directory.

The server URL is the one ``serve`` recorded in ``<data dir>/server.json``
(``--server`` overrides it; before the first ``serve`` it defaults to
``https://127.0.0.1:6443``). The CA is embedded as
``certificate-authority-data``; the user authenticates with a bearer token from
the token file for the admin; ``--user NAME`` is a Django user (the admin UI's
accounts), created without rights if absent, with a signed API token
(``kapi.auth.djangousers``): its name is the username, its groups its Django
groups plus ``system:authenticated`` (superusers also ``system:masters``).
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kapi.management.database import require_database
from kapi.runtime import certs, config, endpoint, tokens

__all__ = ["Command", "build_kubeconfig"]

CONTEXT = "kapi"


def build_kubeconfig(
    server: str, user: str, token: str, ca_pem: bytes | None = None
) -> dict:
    """The kubeconfig document (cluster, user and a current context ``kapi``)."""
    cluster: dict = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": user}}],
        "current-context": CONTEXT,
        "preferences": {},
    }


class Command(BaseCommand):
    help = "Print a kubeconfig for the kapi server that uses this data directory."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", default=tokens.ADMIN_USER)
        parser.add_argument("--data-dir", help="Data directory (applied by manage.py).")
        parser.add_argument("--server", help="Server URL (default: what serve used).")

    def handle(self, *args: object, **options: object) -> None:
        data_dir = config.data_dir()
        wanted = options.get("data_dir")
        if wanted and Path(str(wanted)).resolve() != data_dir:
            raise CommandError(f"--data-dir {wanted} does not match {data_dir}")
        if str(options["user"]) != tokens.ADMIN_USER:
            # A Django user lives in the database: say at once if there is none,
            # before anything is written into a mistyped data directory.
            require_database()
        recorded = endpoint.read_endpoint(data_dir)
        server = str(options.get("server") or "")
        if not server:
            server = (recorded or endpoint.parse_bind(endpoint.DEFAULT_BIND)).url

        ca_pem = None
        if server.startswith("https:"):
            # Creating the CA here is harmless (serve keeps an existing one) and
            # makes the kubeconfig valid before the first start.
            data_dir.mkdir(parents=True, exist_ok=True)
            host = recorded.host if recorded else ""
            ca_pem = certs.ensure_tls(data_dir, host).ca_cert.read_bytes()

        user = str(options["user"])
        if user == tokens.ADMIN_USER:
            token = tokens.ensure_token_file()
        else:
            from kapi.auth import djangousers

            tokens.ensure_token_file()
            token = djangousers.mint_token(djangousers.ensure_user(user))
        doc = build_kubeconfig(server, user, token, ca_pem)
        self.stdout.write(yaml.safe_dump(doc, sort_keys=False), ending="")
