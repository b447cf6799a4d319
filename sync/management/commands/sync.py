"""``manage.py sync``: reconcile a Sync and follow it, and git's pre-receive hook.

``sync reconcile NAMESPACE/NAME`` sets ``sync.kapi.dev/requestedAt`` (as the
admin UI's button and Flux's ``reconcile.fluxcd.io/requestedAt``) and prints
the Sync's progress until the workers have handled that request.
``sync pre-receive NAMESPACE NAME`` validates a push for the hosted repositories' hook when
the push did not come through the API server (which otherwise does it itself).
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError

from kapi import errors
from kapi.management.database import require_database
from kapi.registry.options import UpdateOptions
from kapi.registry.store import Registry
from sync.api import REQUESTED_AT, sync_type


class Command(BaseCommand):
    help = "Reconcile a Sync now and show its progress (sync reconcile NAMESPACE/NAME)."

    def add_arguments(self, parser) -> None:
        data_dir_help = "Data directory of the kapi to talk to (applied by manage.py)."
        parser.add_argument("--data-dir", help=data_dir_help)
        sub = parser.add_subparsers(dest="action", required=True)
        rec = sub.add_parser("reconcile", help="request a reconcile and wait for it")
        rec.add_argument("target", help="NAMESPACE/NAME of the Sync")
        rec.add_argument("--timeout", type=float, default=300.0)
        rec.add_argument("--data-dir", help=data_dir_help)
        hook = sub.add_parser("pre-receive", help="git pre-receive hook (validate-on-push)")
        hook.add_argument("namespace")
        hook.add_argument("name")
        hook.add_argument("--data-dir", help=data_dir_help)

    def handle(self, *args, **options) -> None:
        require_database()
        if options["action"] == "pre-receive":
            from sync.prereceive import check_push

            accepted = check_push(options["namespace"], options["name"], sys.stdin, sys.stderr)
            sys.exit(0 if accepted else 1)
        self._reconcile(options["target"], options["timeout"])

    def _reconcile(self, target: str, timeout: float) -> None:
        namespace, _, name = target.partition("/")
        if not name:
            raise CommandError("give the Sync as NAMESPACE/NAME")
        registry = Registry()
        stamp = datetime.now(UTC).isoformat()

        def mutate(obj: dict) -> dict:
            obj["metadata"].setdefault("annotations", {})[REQUESTED_AT] = stamp
            return obj

        try:
            registry.update_with(sync_type(), namespace, name, mutate,
                                 UpdateOptions(field_manager="kapi-sync-cli"))
        except errors.StatusError as exc:
            raise CommandError(exc.status.get("message", str(exc))) from None
        self.stdout.write(f"► requested reconcile of Sync {namespace}/{name} at {stamp}")
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            obj = registry.get(sync_type(), namespace, name)
            status = obj.get("status") or {}
            if (obj.get("spec") or {}).get("suspend"):
                raise CommandError(f"Sync {namespace}/{name} is suspended: resume it first")
            conditions = {c.get("type"): c for c in status.get("conditions") or []}
            ready = conditions.get("Ready") or {}
            working = (conditions.get("Reconciling") or {}).get("status") == "True"
            shown = conditions["Reconciling"] if working else ready
            line = f"  {ready.get('status', 'Unknown')} {shown.get('reason', '')}: {shown.get('message', '')}"
            if line != last:
                self.stdout.write(line)
                last = line
            # Handled, and not still reconciling (spec.wait: health checks).
            if status.get("lastHandledReconcileAt") == stamp and not working:
                counts = ", ".join(f"{k} {status.get(k, 0)}" for k in ("applied", "unchanged", "pruned"))
                self.stdout.write(f"✔ revision {status.get('lastAppliedRevision', '')} ({counts})")
                if ready.get("status") != "True":
                    raise CommandError(f"reconcile failed: {ready.get('reason')}: {ready.get('message')}")
                return
            time.sleep(0.25)
        raise CommandError("timed out waiting for the reconcile")
