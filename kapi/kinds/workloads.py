"""Workloads: Pod, Deployment, ReplicaSet, StatefulSet, DaemonSet,
ReplicationController, Job and CronJob.

Nothing runs them here; kube's defaults come from ``defaulters`` (on every
write, as kube's decoding); the strategies enforce the rules users hit first (the selector must
match the template's labels, containers need a name and an image, ports are in
range) and print the columns kubectl prints, with what kube shows for an empty
status.
"""

from __future__ import annotations

import re
from datetime import UTC
from typing import Any

from kapi.errors import Cause
from kapi.kinds.scale import selector_string
from kapi.registry.strategy import Column, Object, Strategy, human_duration, parse_time
from kapi.selectors import label_selector_matches

__all__ = [
    "CronJobStrategy",
    "DaemonSetStrategy",
    "DeploymentStrategy",
    "JobStrategy",
    "PodStrategy",
    "ReplicaSetStrategy",
    "ReplicationControllerStrategy",
    "StatefulSetStrategy",
    "print_bool_ptr",
    "selector_matches",
    "validate_pod_spec",
]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def print_bool_ptr(value: Any) -> str:
    """kube's printBoolPtr: ``True``/``False`` as words, ``<unset>`` for nil."""
    if value is None:
        return "<unset>"
    return "True" if value else "False"


def selector_matches(selector: dict, labels: dict) -> bool:
    """Whether a LabelSelector selects ``labels``."""
    return label_selector_matches(selector, labels)


def _port_range(value: Any, path: str) -> list[Cause]:
    if isinstance(value, int) and not 1 <= value <= 65535:
        return [
            Cause(
                "FieldValueInvalid",
                f"Invalid value: {value}: must be between 1 and 65535, inclusive",
                path,
            )
        ]
    return []


def _volume_causes(volumes: Any, path: str, causes: list[Cause]) -> set[str]:
    """Volume names are required and unique (kube's validateVolumes); the names."""
    seen: set[str] = set()
    for i, volume in enumerate(volumes or ()):
        name = volume.get("name") if isinstance(volume, dict) else None
        if not name:
            causes.append(
                Cause("FieldValueRequired", "Required value", f"{path}[{i}].name")
            )
        elif name in seen:
            causes.append(
                Cause(
                    "FieldValueDuplicate",
                    f'Duplicate value: "{name}"',
                    f"{path}[{i}].name",
                )
            )
        seen.add(name or "")
    return seen


def _mount_causes(mounts: Any, volumes: set[str], path: str) -> list[Cause]:
    """Mounts name a volume of the pod, each mount path once (validateVolumeMounts)."""
    causes: list[Cause] = []
    paths: set[str] = set()
    for i, mount in enumerate(mounts or ()):
        if not isinstance(mount, dict):
            continue
        at = f"{path}[{i}]"
        name = mount.get("name") or ""
        if not name:
            causes.append(Cause("FieldValueRequired", "Required value", f"{at}.name"))
        if name not in volumes:
            causes.append(
                Cause("FieldValueNotFound", f'Not found: "{name}"', f"{at}.name")
            )
        mount_path = mount.get("mountPath") or ""
        if not mount_path:
            causes.append(
                Cause("FieldValueRequired", "Required value", f"{at}.mountPath")
            )
        elif mount_path in paths:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{mount_path}": must be unique',
                    f"{at}.mountPath",
                )
            )
        paths.add(mount_path)
    return causes


def validate_pod_spec(spec: Any, path: str) -> list[Cause]:
    """kube's ValidatePodSpec, for the fields users get wrong first."""
    if not isinstance(spec, dict):
        return [Cause("FieldValueRequired", "Required value", path)]
    causes: list[Cause] = []
    containers = spec.get("containers")
    if not containers:
        causes.append(
            Cause("FieldValueRequired", "Required value", f"{path}.containers")
        )
    volumes = _volume_causes(spec.get("volumes"), f"{path}.volumes", causes)
    names: set[str] = set()
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or ()):
            at = f"{path}.{group}[{i}]"
            name = c.get("name")
            if not name:
                causes.append(
                    Cause("FieldValueRequired", "Required value", f"{at}.name")
                )
            elif not _DNS_LABEL.match(name) or len(name) > 63:
                causes.append(
                    Cause(
                        "FieldValueInvalid",
                        f'Invalid value: "{name}": a lowercase RFC 1123 label must consist of lower case '
                        "alphanumeric characters or '-', and must start and end with an alphanumeric "
                        "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                        f"{at}.name",
                    )
                )
            elif name in names:
                causes.append(
                    Cause(
                        "FieldValueDuplicate",
                        f'Duplicate value: "{name}"',
                        f"{at}.name",
                    )
                )
            names.add(name or "")
            if not c.get("image"):
                causes.append(
                    Cause("FieldValueRequired", "Required value", f"{at}.image")
                )
            causes += _mount_causes(
                c.get("volumeMounts"), volumes, f"{at}.volumeMounts"
            )
            port_names: set[str] = set()
            for j, port in enumerate(c.get("ports") or ()):
                port_name = port.get("name")
                if port_name and port_name in port_names:
                    causes.append(
                        Cause(
                            "FieldValueDuplicate",
                            f'Duplicate value: "{port_name}"',
                            f"{at}.ports[{j}].name",
                        )
                    )
                port_names.add(port_name or "")
                if "containerPort" not in port:
                    causes.append(
                        Cause(
                            "FieldValueRequired",
                            "Required value",
                            f"{at}.ports[{j}].containerPort",
                        )
                    )
                causes += _port_range(
                    port.get("containerPort"), f"{at}.ports[{j}].containerPort"
                )
    # Enum fields (imagePullPolicy, restartPolicy, ...) are checked by the schema
    # (kapi.schema.enums).
    return causes


def _validate_workload(
    obj: Object, selector_required: bool = True, template_required: bool = True
) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [Cause("FieldValueRequired", "Required value", "spec")]
    causes: list[Cause] = []
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        causes.append(
            Cause(
                "FieldValueInvalid",
                f"Invalid value: {replicas}: must be greater than or equal to 0",
                "spec.replicas",
            )
        )
    selector = spec.get("selector")
    template = spec.get("template")
    if selector_required and not selector:
        causes.append(Cause("FieldValueRequired", "Required value", "spec.selector"))
    elif isinstance(selector, dict) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        causes.append(
            Cause(
                "FieldValueInvalid",
                "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
                "spec.selector",
            )
        )
    if not isinstance(template, dict):
        if template_required:
            causes.append(
                Cause("FieldValueRequired", "Required value", "spec.template")
            )
        return causes
    labels = (template.get("metadata") or {}).get("labels") or {}
    if isinstance(selector, dict) and (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        if not selector_matches(selector, labels):
            shown = ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: map[string]string{{{shown}}}: `selector` does not match template `labels`",
                    "spec.template.metadata.labels",
                )
            )
    causes += validate_pod_spec(template.get("spec"), "spec.template.spec")
    return causes


def _status(obj: Object, key: str) -> int:
    value = (obj.get("status") or {}).get(key)
    return value if isinstance(value, int) else 0


def _containers(obj: Object) -> list[dict]:
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [c for c in spec.get("containers") or () if isinstance(c, dict)]


_WIDE = [
    Column(
        "Containers", priority=1, description="Names of each container in the template."
    ),
    Column(
        "Images",
        priority=1,
        description="Images referenced by each container in the template.",
    ),
    Column("Selector", priority=1, description="Label selector for pods."),
]


def _wide(obj: Object) -> list[Any]:
    containers = _containers(obj)
    return [
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
        selector_string((obj.get("spec") or {}).get("selector")) or "<none>",
    ]


class _Workload(Strategy):
    status_subresource = True

    def prepare_for_create(self, obj: Object) -> None:
        """Status starts empty (defaults: ``defaulters``). MUTATES ``obj``."""
        obj.pop("status", None)

    def validate(self, obj: Object) -> list[Cause]:
        return _validate_workload(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        causes = self.validate(obj)
        new_sel = (obj.get("spec") or {}).get("selector")
        old_sel = (old.get("spec") or {}).get("selector")
        if old_sel and new_sel != old_sel:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {new_sel!r}: field is immutable",
                    "spec.selector",
                )
            )
        return causes


class DeploymentStrategy(_Workload):
    #: kube's deploymentStatusStrategy keeps the new metadata but labels: its
    #: controller writes the revision annotation with the status.
    status_metadata = ("annotations",)

    def table_columns(self) -> list[Column]:
        return [
            Column("Ready", description="Number of the pod with ready state"),
            Column(
                "Up-to-date",
                type="integer",
                description="Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
            ),
            Column(
                "Available",
                type="integer",
                description="Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
            ),
        ]

    def table_definition(self) -> list[Column]:
        return [*super().table_definition(), *_WIDE]

    def table_cells(self, obj: Object) -> list[Any]:
        desired = (obj.get("spec") or {}).get("replicas", 1)
        return [
            f"{_status(obj, 'readyReplicas')}/{desired}",
            _status(obj, "updatedReplicas"),
            _status(obj, "availableReplicas"),
        ]

    def table_row_cells(self, obj: Object) -> list[Any]:
        return [*super().table_row_cells(obj), *_wide(obj)]


class ReplicaSetStrategy(_Workload):
    def table_columns(self) -> list[Column]:
        return [
            Column("Desired", type="integer", description="Number of desired pods."),
            Column("Current", type="integer", description="Number of actual replicas."),
            Column(
                "Ready",
                type="integer",
                description="The number of ready replicas for this replica set.",
            ),
        ]

    def table_definition(self) -> list[Column]:
        return [*super().table_definition(), *_WIDE]

    def table_cells(self, obj: Object) -> list[Any]:
        desired = (obj.get("spec") or {}).get("replicas", 1)
        return [desired, _status(obj, "replicas"), _status(obj, "readyReplicas")]

    def table_row_cells(self, obj: Object) -> list[Any]:
        return [*super().table_row_cells(obj), *_wide(obj)]


class ReplicationControllerStrategy(ReplicaSetStrategy):
    orphan_by_default = True

    def validate(self, obj: Object) -> list[Cause]:
        spec = obj.get("spec") or {}
        selector = spec.get("selector")
        causes: list[Cause] = []
        template = spec.get("template")
        if isinstance(template, dict):
            labels = (template.get("metadata") or {}).get("labels") or {}
            if selector and any(labels.get(k) != v for k, v in selector.items()):
                causes.append(
                    Cause(
                        "FieldValueInvalid",
                        "Invalid value: `selector` does not match template `labels`",
                        "spec.template.metadata.labels",
                    )
                )
            causes += validate_pod_spec(template.get("spec"), "spec.template.spec")
        return causes

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return self.validate(obj)

    def table_row_cells(self, obj: Object) -> list[Any]:
        cells = Strategy.table_row_cells(self, obj)
        containers = _containers(obj)
        sel = (obj.get("spec") or {}).get("selector") or {}
        return [
            *cells,
            ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers),
            ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>",
        ]


class StatefulSetStrategy(_Workload):
    def table_columns(self) -> list[Column]:
        return [Column("Ready", description="Number of the pod with ready state")]

    def table_definition(self) -> list[Column]:
        return [*super().table_definition(), *_WIDE[:2]]

    def table_cells(self, obj: Object) -> list[Any]:
        return [
            f"{_status(obj, 'readyReplicas')}/{(obj.get('spec') or {}).get('replicas', 1)}"
        ]

    def table_row_cells(self, obj: Object) -> list[Any]:
        return [*super().table_row_cells(obj), *_wide(obj)[:2]]


class DaemonSetStrategy(_Workload):
    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Desired",
                type="integer",
                description="The total number of nodes that should be running the daemon pod.",
            ),
            Column(
                "Current",
                type="integer",
                description="The number of nodes that are running at least 1 daemon pod.",
            ),
            Column(
                "Ready",
                type="integer",
                description="The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
            ),
            Column(
                "Up-to-date",
                type="integer",
                description="The total number of nodes that are running updated daemon pod",
            ),
            Column(
                "Available",
                type="integer",
                description="The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.",
            ),
            Column(
                "Node Selector", description="The node selector for the daemon pod."
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        node_selector = (
            ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        ).get("nodeSelector") or {}
        return [
            _status(obj, "desiredNumberScheduled"),
            _status(obj, "currentNumberScheduled"),
            _status(obj, "numberReady"),
            _status(obj, "updatedNumberScheduled"),
            _status(obj, "numberAvailable"),
            ",".join(f"{k}={v}" for k, v in sorted(node_selector.items())) or "<none>",
        ]


_POD_UPDATE_FORBIDDEN = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
    "set to 1 if it was previously negative)"
)


def _mutable_masked(spec: dict, old: dict) -> dict:
    """``spec`` with what an update may change taken from ``old``."""
    masked = dict(spec)
    for key in ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates"):
        masked.pop(key, None)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        containers, before = masked.get(key), old.get(key) or []
        if isinstance(containers, list):
            masked[key] = [
                {**c, "image": before[i].get("image")}
                if isinstance(c, dict) and i < len(before) and isinstance(before[i], dict) else c
                for i, c in enumerate(containers)
            ]
    return masked


class PodStrategy(Strategy):
    status_subresource = True

    def prepare_for_create(self, obj: Object) -> None:
        """Status starts as a Pending pod. MUTATES ``obj``."""
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}

    def validate(self, obj: Object) -> list[Cause]:
        return validate_pod_spec(obj.get("spec"), "spec")

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        """kube's ValidatePodUpdate: a Pod's spec is immutable but for its
        images, ``activeDeadlineSeconds``, added tolerations and removed
        scheduling gates (its resources too: a quota's charge stays true)."""
        causes = self.validate(obj)
        new_spec, old_spec = obj.get("spec"), old.get("spec")
        if isinstance(new_spec, dict) and isinstance(old_spec, dict):
            if _mutable_masked(new_spec, old_spec) != _mutable_masked(old_spec, old_spec):
                causes.append(Cause("FieldValueForbidden", _POD_UPDATE_FORBIDDEN, "spec"))
        return causes

    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Ready",
                description="The aggregate readiness state of this pod for accepting traffic.",
            ),
            Column(
                "Status",
                description="The aggregate status of the containers in this pod.",
            ),
            Column(
                "Restarts",
                description="The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            ),
        ]

    def table_definition(self) -> list[Column]:
        return [
            *super().table_definition(),
            Column(
                "IP",
                priority=1,
                description="IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
            ),
            Column(
                "Node",
                priority=1,
                description="NodeName is a request to schedule this pod onto a specific node.",
            ),
            Column(
                "Nominated Node",
                priority=1,
                description="nominatedNodeName is set only when this pod preempts other pods on the node.",
            ),
            Column(
                "Readiness Gates",
                priority=1,
                description="If specified, all readiness gates will be evaluated for pod readiness.",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        status = obj.get("status") or {}
        statuses = status.get("containerStatuses") or []
        total = len((obj.get("spec") or {}).get("containers") or [])
        ready = sum(1 for s in statuses if s.get("ready"))
        restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
        phase = status.get("reason") or status.get("phase") or "Pending"
        if (obj.get("metadata") or {}).get("deletionTimestamp"):
            phase = "Terminating"
        return [f"{ready}/{total}", phase, str(restarts)]

    def table_row_cells(self, obj: Object) -> list[Any]:
        status = obj.get("status") or {}
        spec = obj.get("spec") or {}
        gates = spec.get("readinessGates") or []
        return [
            *super().table_row_cells(obj),
            status.get("podIP") or "<none>",
            spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>",
            f"0/{len(gates)}" if gates else "<none>",
        ]


def _generate_job_selector(meta: Object, spec: Object) -> None:
    """kube's job ``generateSelector``: the job-name and controller-uid labels
    (legacy and ``batch.kubernetes.io/`` ones) on the template, and the
    controller-uid one in the selector. MUTATES ``spec``."""
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    tmeta = template.setdefault("metadata", {})
    if not isinstance(tmeta, dict):
        return
    labels = tmeta.get("labels")
    if not isinstance(labels, dict):
        labels = tmeta["labels"] = {}
    for key in ("job-name", "batch.kubernetes.io/job-name"):
        labels.setdefault(key, meta.get("name", ""))
    for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
        labels.setdefault(key, meta.get("uid", ""))
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match = selector.get("matchLabels")
    if not isinstance(match, dict):
        match = selector["matchLabels"] = {}
    match.setdefault("batch.kubernetes.io/controller-uid", meta.get("uid", ""))


class JobStrategy(Strategy):
    status_subresource = True

    def prepare_for_create(self, obj: Object) -> None:
        """Status starts empty (defaults: ``defaulters``); without
        ``manualSelector`` the selector and the template's labels are generated
        from the Job's uid and name (kube's ``generateSelector``). MUTATES ``obj``."""
        obj.pop("status", None)
        spec = obj.get("spec")
        if isinstance(spec, dict) and not spec.get("manualSelector"):
            _generate_job_selector(obj["metadata"], spec)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        """As any kind; and the generated selector and labels are kept when a
        write sends the Job as its author wrote it (kube would refuse such a
        PUT as changing immutable fields; here it writes nothing). MUTATES ``obj``."""
        super().prepare_for_update(obj, old)
        spec = obj.get("spec")
        if isinstance(spec, dict) and not spec.get("manualSelector"):
            _generate_job_selector(old["metadata"], spec)

    def validate(self, obj: Object) -> list[Cause]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [Cause("FieldValueRequired", "Required value", "spec")]
        template = spec.get("template")
        if not isinstance(template, dict):
            return [Cause("FieldValueRequired", "Required value", "spec.template")]
        causes = validate_pod_spec(template.get("spec"), "spec.template.spec")
        policy = (template.get("spec") or {}).get("restartPolicy")
        if policy not in ("OnFailure", "Never"):
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{policy or "Always"}": supported values: "OnFailure", "Never"',
                    "spec.template.spec.restartPolicy",
                )
            )
        return causes

    def table_columns(self) -> list[Column]:
        return [
            Column("Status", description="Status of the job."),
            Column("Completions", description="The completion status of the job"),
            Column("Duration", description="Time required to complete the job."),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        conditions = {
            c.get("type"): c.get("status") for c in status.get("conditions") or ()
        }
        if conditions.get("Complete") == "True":
            state = "Complete"
        elif conditions.get("Failed") == "True":
            state = "Failed"
        elif spec.get("suspend"):
            state = "Suspended"
        else:
            state = "Running"
        completions = spec.get("completions")
        done = _status(obj, "succeeded")
        shown = (
            f"{done}/{completions}"
            if completions is not None
            else f"{done}/1 of {spec.get('parallelism', 1)}"
        )
        start, end = (
            parse_time(status.get("startTime")),
            parse_time(status.get("completionTime")),
        )
        duration = (
            human_duration((end - start).total_seconds()) if start and end else ""
        )
        return [state, shown, duration]


_CRON_FIELD = re.compile(r"^[\d*/,\-?LW#A-Za-z]+$")


class CronJobStrategy(Strategy):
    status_subresource = True

    def prepare_for_create(self, obj: Object) -> None:
        obj.pop("status", None)

    def validate(self, obj: Object) -> list[Cause]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [Cause("FieldValueRequired", "Required value", "spec")]
        causes: list[Cause] = []
        schedule = spec.get("schedule")
        if not schedule:
            causes.append(
                Cause("FieldValueRequired", "Required value", "spec.schedule")
            )
        elif not schedule.startswith("@") and (
            len(schedule.split()) != 5
            or not all(_CRON_FIELD.match(f) for f in schedule.split())
        ):
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{schedule}": expected exactly 5 fields, found {len(schedule.split())}: {schedule}',
                    "spec.schedule",
                )
            )
        template = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template")
        if not isinstance(template, dict):
            causes.append(
                Cause(
                    "FieldValueRequired",
                    "Required value",
                    "spec.jobTemplate.spec.template",
                )
            )
        else:
            causes += validate_pod_spec(
                template.get("spec"), "spec.jobTemplate.spec.template.spec"
            )
        return causes

    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Schedule",
                description="The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
            ),
            Column(
                "Timezone", description="The time zone name for the given schedule."
            ),
            Column(
                "Suspend",
                type="boolean",
                description="This flag tells the controller to suspend subsequent executions.",
            ),
            Column(
                "Active",
                type="integer",
                description="A list of pointers to currently running jobs.",
            ),
            Column(
                "Last Schedule",
                description="Information when was the last time the job was successfully scheduled.",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        last = parse_time(status.get("lastScheduleTime"))
        from datetime import datetime

        return [
            spec.get("schedule", ""),
            spec.get("timeZone") or "<none>",
            print_bool_ptr(spec.get("suspend")),
            len(status.get("active") or []),
            human_duration((datetime.now(UTC) - last).total_seconds())
            if last
            else "<none>",
        ]
