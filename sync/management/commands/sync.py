"""``manage.py sync``: reconcile a Sync and follow it, and git's pre-receive hook.

``sync reconcile NAMESPACE/NAME`` sets ``sync.kapi.dev/requestedAt`` (as the
admin UI's button and Flux's ``reconcile.fluxcd.io/requestedAt``) and prints
the Sync's progress until the workers have handled that request.
``sync rollback NAMESPACE/NAME [REVISION]`` pins the Sync to an earlier
commit (default: the newest successfully applied revision of
``status.history`` before the current one) and waits for it to be applied;
``sync unpin NAMESPACE/NAME`` follows the source again (``sync.history``).
``sync pre-receive NAMESPACE NAME`` validates a push for the hosted repositories' hook when
the push did not come through the API server (which otherwise does it itself).
``sync retained [NAMESPACE]`` lists the hosted repositories kept after their
GitRepository was deleted, and ``sync restore NAMESPACE/NAME [--deleted-at STAMP]``
puts one back under a GitRepository of that name created again (``sync.retention``).
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
from sync.kinds import REQUESTED_AT, sync_type


class Command(BaseCommand):
    help = ("Reconcile a Sync now and show its progress (sync reconcile NAMESPACE/NAME), "
            "roll it back to an earlier revision (sync rollback NAMESPACE/NAME [REVISION]) or unpin it.")

    def add_arguments(self, parser) -> None:
        data_dir_help = "Data directory of the kapi to talk to (applied by manage.py)."
        parser.add_argument("--data-dir", help=data_dir_help)
        sub = parser.add_subparsers(dest="action", required=True)
        rec = sub.add_parser("reconcile", help="request a reconcile and wait for it")
        rec.add_argument("--data-dir", help=data_dir_help)
        rec.add_argument("target", help="NAMESPACE/NAME of the Sync")
        rec.add_argument("--timeout", type=float, default=300.0)
        back = sub.add_parser("rollback", help="pin the Sync to an earlier revision and wait for it")
        back.add_argument("--data-dir", help=data_dir_help)
        back.add_argument("target", help="NAMESPACE/NAME of the Sync")
        back.add_argument("revision", nargs="?", help="commit (sha or prefix); default: the previous one")
        back.add_argument("--timeout", type=float, default=300.0)
        unpin = sub.add_parser("unpin", help="follow the source's revision again")
        unpin.add_argument("--data-dir", help=data_dir_help)
        unpin.add_argument("target", help="NAMESPACE/NAME of the Sync")
        unpin.add_argument("--timeout", type=float, default=300.0)
        hook = sub.add_parser("pre-receive", help="git pre-receive hook (validate-on-push)")
        hook.add_argument("--data-dir", help=data_dir_help)
        hook.add_argument("namespace")
        hook.add_argument("name")
        kept = sub.add_parser("retained", help="list retained hosted repositories of deleted GitRepositories")
        kept.add_argument("--data-dir", help=data_dir_help)
        kept.add_argument("namespace", nargs="?")
        res = sub.add_parser("restore", help="restore a retained hosted repository")
        res.add_argument("--data-dir", help=data_dir_help)
        res.add_argument("target", help="NAMESPACE/NAME of the GitRepository, created again without spec.url")
        res.add_argument("--deleted-at", default=None, help="which copy (a STAMP of `sync retained`); default newest")

    def handle(self, *args, **options) -> None:
        require_database()
        if options["action"] == "pre-receive":
            sys.exit(0 if self._pre_receive(options["namespace"], options["name"]) else 1)
        if options["action"] == "retained":
            return self._retained(options["namespace"])
        if options["action"] == "restore":
            return self._restore(options["target"], options["deleted_at"])
        pin: str | None = None
        if options["action"] == "rollback":
            pin = self._rollback_target(options["target"], options["revision"])
        elif options["action"] == "unpin":
            pin = ""
        self._reconcile(options["target"], options["timeout"], pin)

    def _pre_receive(self, namespace: str, name: str) -> bool:
        """git's hook: any failure refuses the push with one line, no traceback."""
        from sync.hookerrors import refusal_line
        from sync.prereceive import check_push

        try:
            return check_push(namespace, name, sys.stdin, sys.stderr)
        except Exception as exc:  # noqa: BLE001 - the pusher gets a line, the log the traceback
            sys.stderr.write(refusal_line(exc)[1] + "\n")
            return False

    def _retained(self, namespace: str | None) -> None:
        from sync.retention import retained

        self.stdout.write("NAMESPACE\tNAME\tDELETED-AT")
        for copy in retained(namespace):
            self.stdout.write(f"{copy.namespace}\t{copy.name}\t{copy.stamp}")

    def _restore(self, target: str, stamp: str | None) -> None:
        from sync import controllers
        from sync.kinds import repository_type
        from sync.retention import RestoreError, restore

        namespace, _, name = target.partition("/")
        if not name:
            raise CommandError("give the GitRepository as NAMESPACE/NAME")
        try:
            repo = Registry().get(repository_type(), namespace, name)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise CommandError(exc.status.get("message", str(exc))) from None
            raise CommandError(
                f"GitRepository {namespace}/{name} not found: create it again (without spec.url), then restore"
            ) from None
        if (repo.get("spec") or {}).get("url") or repo["metadata"].get("deletionTimestamp"):
            raise CommandError(f"GitRepository {namespace}/{name} is not a hosted repository (it has spec.url)"
                               if (repo.get("spec") or {}).get("url") else
                               f"GitRepository {namespace}/{name} is being deleted")
        try:
            copy = restore(namespace, name, stamp)
        except RestoreError as exc:
            raise CommandError(str(exc)) from None
        import kapi.celery  # noqa: F401 - the app (and broker) the request is enqueued on

        controllers.request(controllers.REPOSITORY, namespace, name, "restore")
        self.stdout.write(f"restored {namespace}/{name} as deleted at {copy.stamp}")

    def _rollback_target(self, target: str, revision: str | None) -> str:
        from sync.history import rollback_target

        namespace, _, name = target.partition("/")
        try:
            status = Registry().get(sync_type(), namespace, name).get("status") or {}
            return rollback_target(status, revision)
        except errors.StatusError as exc:
            raise CommandError(exc.status.get("message", str(exc))) from None
        except ValueError as exc:
            raise CommandError(f"cannot roll back Sync {target}: {exc}") from None

    def _reconcile(self, target: str, timeout: float, pin: str | None = None) -> None:
        """Request a reconcile (``pin``: also set the pin, or "" to remove it)."""
        from sync.history import PIN_ANNOTATION

        namespace, _, name = target.partition("/")
        if not name:
            raise CommandError("give the Sync as NAMESPACE/NAME")
        registry = Registry()
        stamp = datetime.now(UTC).isoformat()

        def mutate(obj: dict) -> dict:
            annotations = obj["metadata"].setdefault("annotations", {})
            annotations[REQUESTED_AT] = stamp
            if pin:
                annotations[PIN_ANNOTATION] = pin
            elif pin == "":
                annotations.pop(PIN_ANNOTATION, None)
            return obj

        try:
            registry.update_with(sync_type(), namespace, name, mutate,
                                 UpdateOptions(field_manager="kapi-sync-cli"))
        except errors.StatusError as exc:
            raise CommandError(exc.status.get("message", str(exc))) from None
        if pin:
            self.stdout.write(f"► pinned Sync {namespace}/{name} to {pin}")
        elif pin == "":
            self.stdout.write(f"► unpinned Sync {namespace}/{name}")
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
