"""kube's scheme defaulting for the built-in kinds, as a table.

kube-apiserver defaults every object it decodes, on every write (create, update,
every patch type, apply, status), with the ``SetDefaults_*`` functions of
``pkg/apis/<group>/<version>/defaults.go`` and the ``+default`` markers of
``k8s.io/api``. Its generated ``SetObjectDefaults_*`` call the defaulter of a
type and then those of every nested type, wherever the type appears: a Probe is
defaulted in a Pod, a Deployment's template, a CronJob's job template.

``set_defaults(obj, definition)`` does the same here: ``DEFAULTERS`` maps a
published definition name to its defaulter, and the walk follows the
definitions' ``$ref``s, only down the properties that can reach a defaulter.
Running on every write is what makes a write of an object as the client first
sent it (``kubectl replace``, a client-side ``kubectl apply``) equal to the
stored one, so that it writes nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from kapi.registry.definitions import definitions

__all__ = ["DEFAULTERS", "set_defaults"]

Object = dict[str, Any]
_REF = "#/$defs/"
_CORE = "io.k8s.api.core.v1."
_RBAC_GROUP = "rbac.authorization.k8s.io"


# -- how a Go field reads an absent value ---------------------------------------------
def _pointer(obj: Object, key: str, value: Any) -> None:
    """A pointer field (``*int32``, ``*string``, a struct pointer): nil is unset."""
    if obj.get(key) is None:
        obj[key] = value


def _plain(obj: Object, key: str, value: Any) -> None:
    """A non-pointer string or integer: kube cannot tell "" or 0 from absent."""
    current = obj.get(key)
    if current is None or current == "" or (type(current) is int and current == 0):
        obj[key] = value


def _dict(obj: Object, key: str) -> Object | None:
    value = obj.get(key)
    return value if isinstance(value, dict) else None


def _struct(obj: Object, key: str) -> Object | None:
    """A non-pointer struct field: always there in Go, so defaulted when absent."""
    value = obj.get(key)
    if value is None:
        value = obj[key] = {}
    return value if isinstance(value, dict) else None


def _items(obj: Object, key: str) -> list[Object]:
    value = obj.get(key)
    return [i for i in value if isinstance(i, dict)] if isinstance(value, list) else []


def _template_labels(spec: Object) -> Any:
    template = spec.get("template")
    meta = template.get("metadata") if isinstance(template, dict) else None
    return meta.get("labels") if isinstance(meta, dict) else None


# -- core/v1 ------------------------------------------------------------------------
def _image_tag_latest(image: Any) -> bool:
    """kube's parsers.ParseImageName: no tag (and no digest) reads as ``latest``."""
    if not isinstance(image, str):
        return True
    if "@" in image:
        image = image.split("@", 1)[0]
        last = image.rsplit("/", 1)[-1]
        return ":" in last and last.rsplit(":", 1)[1] == "latest"
    last = image.rsplit("/", 1)[-1]
    return ":" not in last or last.rsplit(":", 1)[1] == "latest"


def _container(obj: Object) -> None:
    if obj.get("imagePullPolicy") in (None, ""):
        obj["imagePullPolicy"] = "Always" if _image_tag_latest(obj.get("image")) else "IfNotPresent"
    _plain(obj, "terminationMessagePath", "/dev/termination-log")
    _plain(obj, "terminationMessagePolicy", "File")
    _struct(obj, "resources")


def _pod_spec(obj: Object) -> None:
    _plain(obj, "dnsPolicy", "ClusterFirst")
    _plain(obj, "restartPolicy", "Always")
    _pointer(obj, "securityContext", {})
    _pointer(obj, "terminationGracePeriodSeconds", 30)
    _plain(obj, "schedulerName", "default-scheduler")


def _pod(obj: Object) -> None:
    spec = _dict(obj, "spec")
    if spec is None:
        return
    for group in ("containers", "initContainers"):
        for container in _items(spec, group):
            resources = _dict(container, "resources") or {}
            limits = resources.get("limits")
            if isinstance(limits, dict) and limits:
                requests = resources.get("requests")
                if not isinstance(requests, dict):
                    requests = resources["requests"] = {}
                for key, value in limits.items():
                    requests.setdefault(key, value)
    _pointer(spec, "enableServiceLinks", True)
    if spec.get("hostNetwork") is True:
        for group in ("containers", "initContainers"):
            for container in _items(spec, group):
                for port in _items(container, "ports"):
                    if not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")


def _probe(obj: Object) -> None:
    _plain(obj, "timeoutSeconds", 1)
    _plain(obj, "periodSeconds", 10)
    _plain(obj, "successThreshold", 1)
    _plain(obj, "failureThreshold", 3)


def _http_get(obj: Object) -> None:
    _plain(obj, "path", "/")
    _plain(obj, "scheme", "HTTP")


_VOLUME_SOURCES = frozenset(
    "hostPath emptyDir gcePersistentDisk awsElasticBlockStore gitRepo secret nfs iscsi"
    " glusterfs persistentVolumeClaim rbd flexVolume cinder cephfs flocker downwardAPI fc"
    " azureFile configMap vsphereVolume quobyte azureDisk photonPersistentDisk projected"
    " portworxVolume scaleIO storageos csi ephemeral image".split()
)


def _volume(obj: Object) -> None:
    if not any(obj.get(source) is not None for source in _VOLUME_SOURCES):
        obj["emptyDir"] = {}


def _service(obj: Object) -> None:
    spec = _struct(obj, "spec")
    if spec is None:
        return
    _plain(spec, "sessionAffinity", "None")
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    kind = spec["type"] if spec.get("type") else "ClusterIP"
    spec["type"] = kind
    for port in _items(spec, "ports"):
        _plain(port, "protocol", "TCP")
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    externally = kind in ("NodePort", "LoadBalancer") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )
    if externally:
        _plain(spec, "externalTrafficPolicy", "Cluster")
    if kind in ("NodePort", "LoadBalancer", "ClusterIP"):
        _pointer(spec, "internalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        _pointer(spec, "allocateLoadBalancerNodePorts", True)


def _namespace(obj: Object) -> None:
    meta = _dict(obj, "metadata")
    if meta and meta.get("name"):
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels["kubernetes.io/metadata.name"] = meta["name"]


def _phase(value: str) -> Callable[[Object], None]:
    def default(obj: Object) -> None:
        status = _struct(obj, "status")
        if status is not None:
            _plain(status, "phase", value)

    return default


def _persistent_volume(obj: Object) -> None:
    _phase("Pending")(obj)
    spec = _dict(obj, "spec")
    if spec is not None:
        _plain(spec, "persistentVolumeReclaimPolicy", "Retain")
        _pointer(spec, "volumeMode", "Filesystem")


def _replication_controller(obj: Object) -> None:
    spec = _dict(obj, "spec")
    if spec is None:
        return
    labels = _template_labels(spec)
    if isinstance(labels, dict) and labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.setdefault("metadata", {})
        if isinstance(meta, dict) and not meta.get("labels"):
            meta["labels"] = dict(labels)
    _pointer(spec, "replicas", 1)


def _limit_range_item(obj: Object) -> None:
    if obj.get("type") != "Container":
        return
    default = obj.get("default") if isinstance(obj.get("default"), dict) else {}
    request = obj.get("defaultRequest") if isinstance(obj.get("defaultRequest"), dict) else {}
    for key, value in (_dict(obj, "max") or {}).items():
        default.setdefault(key, value)
    for key, value in default.items():
        request.setdefault(key, value)
    for key, value in (_dict(obj, "min") or {}).items():
        request.setdefault(key, value)
    obj["default"], obj["defaultRequest"] = default, request


def _mode(key: str, value: Any) -> Callable[[Object], None]:
    return lambda obj: _pointer(obj, key, value)


def _fields(**values: Any) -> Callable[[Object], None]:
    """Plain (non-pointer) fields with their defaults."""

    def default(obj: Object) -> None:
        for key, value in values.items():
            _plain(obj, key, value)

    return default


def _pointers(**values: Any) -> Callable[[Object], None]:
    def default(obj: Object) -> None:
        for key, value in values.items():
            _pointer(obj, key, value)

    return default


# -- apps/v1 ---------------------------------------------------------------------------
def _deployment(obj: Object) -> None:
    spec = _struct(obj, "spec")
    if spec is None:
        return
    _pointer(spec, "replicas", 1)
    strategy = _struct(spec, "strategy")
    if strategy is not None:
        _plain(strategy, "type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = _struct(strategy, "rollingUpdate")
            if rolling is not None:
                _pointer(rolling, "maxUnavailable", "25%")
                _pointer(rolling, "maxSurge", "25%")
    _pointer(spec, "revisionHistoryLimit", 10)
    _pointer(spec, "progressDeadlineSeconds", 600)


def _daemon_set(obj: Object) -> None:
    spec = _struct(obj, "spec")
    if spec is None:
        return
    strategy = _struct(spec, "updateStrategy")
    if strategy is not None:
        _plain(strategy, "type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = _struct(strategy, "rollingUpdate")
            if rolling is not None:
                _pointer(rolling, "maxUnavailable", 1)
                _pointer(rolling, "maxSurge", 0)
    _pointer(spec, "revisionHistoryLimit", 10)


def _stateful_set(obj: Object) -> None:
    spec = _struct(obj, "spec")
    if spec is None:
        return
    _plain(spec, "podManagementPolicy", "OrderedReady")
    strategy = _struct(spec, "updateStrategy")
    if strategy is not None:
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            _pointer(strategy, "rollingUpdate", {})
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
            _pointer(rolling, "partition", 0)
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if retention is None:
        retention = spec["persistentVolumeClaimRetentionPolicy"] = {}
    if isinstance(retention, dict):
        _plain(retention, "whenDeleted", "Retain")
        _plain(retention, "whenScaled", "Retain")
    _pointer(spec, "replicas", 1)
    _pointer(spec, "revisionHistoryLimit", 10)
    # apps/v1's conversion names the claim templates' type on every write.
    for claim in _items(spec, "volumeClaimTemplates"):
        _plain(claim, "apiVersion", "v1")
        _plain(claim, "kind", "PersistentVolumeClaim")


def _replica_set(obj: Object) -> None:
    spec = _struct(obj, "spec")
    if spec is not None:
        _pointer(spec, "replicas", 1)


# -- batch/v1 ----------------------------------------------------------------------------
def _job(obj: Object) -> None:
    spec = _struct(obj, "spec")
    if spec is None:
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    _pointer(spec, "parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    labels = _template_labels(spec)
    meta = obj.get("metadata")
    if isinstance(labels, dict) and labels and isinstance(meta, dict) and not meta.get("labels"):
        meta["labels"] = dict(labels)
    _pointer(spec, "completionMode", "NonIndexed")
    _pointer(spec, "suspend", False)
    _pointer(
        spec,
        "podReplacementPolicy",
        "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed",
    )


def _cron_job(obj: Object) -> None:
    spec = _struct(obj, "spec")
    if spec is None:
        return
    _plain(spec, "concurrencyPolicy", "Allow")
    _pointer(spec, "suspend", False)
    _pointer(spec, "successfulJobsHistoryLimit", 3)
    _pointer(spec, "failedJobsHistoryLimit", 1)


# -- networking, rbac, the rest ------------------------------------------------------------
def _network_policy(obj: Object) -> None:
    spec = _struct(obj, "spec")
    if spec is None or spec.get("policyTypes"):
        return
    types = ["Ingress"]
    if spec.get("egress"):
        types.append("Egress")
    spec["policyTypes"] = types


def _subject(obj: Object) -> None:
    """A User or Group is an RBAC subject; a ServiceAccount keeps ``""`` (which
    kube's omitempty leaves out)."""
    if not obj.get("apiGroup") and obj.get("kind") in ("User", "Group"):
        obj["apiGroup"] = _RBAC_GROUP


def _role_binding(obj: Object) -> None:
    ref = _dict(obj, "roleRef")
    if ref is not None:
        _plain(ref, "apiGroup", _RBAC_GROUP)


def _webhook(mutating: bool) -> Callable[[Object], None]:
    def default(obj: Object) -> None:
        _pointer(obj, "failurePolicy", "Fail")
        _pointer(obj, "matchPolicy", "Equivalent")
        _pointer(obj, "namespaceSelector", {})
        _pointer(obj, "objectSelector", {})
        _pointer(obj, "timeoutSeconds", 10)
        if mutating:
            _pointer(obj, "reinvocationPolicy", "Never")

    return default


def _priority_level(obj: Object) -> None:
    spec = _dict(obj, "spec")
    if spec is None:
        return
    limited = _dict(spec, "limited")
    if limited is not None:
        _pointer(limited, "nominalConcurrencyShares", 30)
        _pointer(limited, "lendablePercent", 0)
    exempt = _dict(spec, "exempt")
    if exempt is not None:
        _pointer(exempt, "nominalConcurrencyShares", 0)
        _pointer(exempt, "lendablePercent", 0)


#: definition name -> defaulter (MUTATES its argument); kube's SetDefaults_* and
#: ``+default`` markers, per group: core, apps, batch, networking, rbac, storage,
#: scheduling, admissionregistration, flowcontrol, discovery.
DEFAULTERS: dict[str, Callable[[Object], None]] = {
    _CORE + "Container": _container,
    _CORE + "EphemeralContainer": _container,
    _CORE + "ContainerPort": _fields(protocol="TCP"),
    _CORE + "PodSpec": _pod_spec,
    _CORE + "Pod": _pod,
    _CORE + "Probe": _probe,
    _CORE + "HTTPGetAction": _http_get,
    _CORE + "GRPCAction": _pointers(service=""),
    _CORE + "Volume": _volume,
    _CORE + "SecretVolumeSource": _mode("defaultMode", 420),
    _CORE + "ConfigMapVolumeSource": _mode("defaultMode", 420),
    _CORE + "DownwardAPIVolumeSource": _mode("defaultMode", 420),
    _CORE + "ProjectedVolumeSource": _mode("defaultMode", 420),
    _CORE + "ServiceAccountTokenProjection": _mode("expirationSeconds", 3600),
    _CORE + "HostPathVolumeSource": _pointers(type=""),
    _CORE + "ISCSIVolumeSource": _fields(iscsiInterface="default"),
    _CORE + "ISCSIPersistentVolumeSource": _fields(iscsiInterface="default"),
    _CORE + "RBDVolumeSource": _fields(pool="rbd", user="admin", keyring="/etc/ceph/keyring"),
    _CORE + "RBDPersistentVolumeSource": _fields(
        pool="rbd", user="admin", keyring="/etc/ceph/keyring"
    ),
    _CORE + "AzureDiskVolumeSource": _pointers(
        cachingMode="ReadWrite", fsType="ext4", readOnly=False, kind="Shared"
    ),
    _CORE + "ScaleIOVolumeSource": _fields(storageMode="ThinProvisioned", fsType="xfs"),
    _CORE + "ScaleIOPersistentVolumeSource": _fields(
        storageMode="ThinProvisioned", fsType="xfs"
    ),
    _CORE + "ObjectFieldSelector": _fields(apiVersion="v1"),
    # ``divisor`` is a non-pointer resource.Quantity: kube serializes its zero as "0".
    _CORE + "ResourceFieldSelector": _pointers(divisor="0"),
    _CORE + "Service": _service,
    _CORE + "ServicePort": _fields(protocol="TCP"),
    _CORE + "EndpointPort": _fields(protocol="TCP"),
    _CORE + "Secret": _fields(type="Opaque"),
    _CORE + "Namespace": _namespace,
    _CORE + "NamespaceStatus": _fields(phase="Active"),
    _CORE + "PersistentVolume": _persistent_volume,
    _CORE + "PersistentVolumeClaim": _phase("Pending"),
    _CORE + "PersistentVolumeClaimSpec": _pointers(volumeMode="Filesystem"),
    _CORE + "ReplicationController": _replication_controller,
    _CORE + "LimitRangeItem": _limit_range_item,
    "io.k8s.api.apps.v1.Deployment": _deployment,
    "io.k8s.api.apps.v1.DaemonSet": _daemon_set,
    "io.k8s.api.apps.v1.StatefulSet": _stateful_set,
    "io.k8s.api.apps.v1.ReplicaSet": _replica_set,
    "io.k8s.api.batch.v1.Job": _job,
    "io.k8s.api.batch.v1.CronJob": _cron_job,
    "io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern": _fields(status="True"),
    "io.k8s.api.networking.v1.NetworkPolicy": _network_policy,
    "io.k8s.api.networking.v1.NetworkPolicyPort": _pointers(protocol="TCP"),
    "io.k8s.api.rbac.v1.Subject": _subject,
    "io.k8s.api.rbac.v1.RoleBinding": _role_binding,
    "io.k8s.api.rbac.v1.ClusterRoleBinding": _role_binding,
    "io.k8s.api.storage.v1.StorageClass": _pointers(
        reclaimPolicy="Delete", volumeBindingMode="Immediate"
    ),
    "io.k8s.api.storage.v1.CSIDriverSpec": _pointers(
        attachRequired=True,
        podInfoOnMount=False,
        storageCapacity=False,
        fsGroupPolicy="ReadWriteOnceWithFSType",
        requiresRepublish=False,
        seLinuxMount=False,
        volumeLifecycleModes=["Persistent"],
    ),
    "io.k8s.api.scheduling.v1.PriorityClass": _pointers(
        preemptionPolicy="PreemptLowerPriority"
    ),
    "io.k8s.api.admissionregistration.v1.ValidatingWebhook": _webhook(mutating=False),
    "io.k8s.api.admissionregistration.v1.MutatingWebhook": _webhook(mutating=True),
    "io.k8s.api.admissionregistration.v1.RuleWithOperations": _pointers(scope="*"),
    "io.k8s.api.admissionregistration.v1.ServiceReference": _pointers(port=443),
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec": _pointers(
        failurePolicy="Fail"
    ),
    "io.k8s.api.admissionregistration.v1.MatchResources": _pointers(
        matchPolicy="Equivalent", namespaceSelector={}, objectSelector={}
    ),
    "io.k8s.api.flowcontrol.v1.FlowSchemaSpec": _fields(matchingPrecedence=1000),
    "io.k8s.api.flowcontrol.v1.PriorityLevelConfiguration": _priority_level,
    "io.k8s.api.flowcontrol.v1.QueuingConfiguration": _fields(
        handSize=8, queues=64, queueLengthLimit=50
    ),
    "io.k8s.api.discovery.v1.EndpointPort": _pointers(name="", protocol="TCP"),
}


# -- the walk -------------------------------------------------------------------------------
def _target(schema: Any) -> tuple[str, str] | None:
    """(shape, definition) of a property: ``one`` object, ``list`` items, ``map`` values."""
    if not isinstance(schema, dict):
        return None
    for shape, node in (("one", schema), ("list", schema.get("items")), ("map", schema.get("additionalProperties"))):
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if ref is None:
            for sub in node.get("allOf") or ():
                if isinstance(sub, dict) and "$ref" in sub:
                    ref = sub["$ref"]
        if isinstance(ref, str) and ref.startswith(_REF):
            return shape, ref[len(_REF) :]
    return None


@functools.cache
def _plan(name: str) -> tuple[tuple[str, str, str], ...]:
    """The properties of ``name`` worth walking: (property, shape, definition)."""
    props = (definitions().get(name) or {}).get("properties") or {}
    out = []
    for prop, schema in props.items():
        target = _target(schema)
        if target is not None and _reaches(target[1]):
            out.append((prop, *target))
    return tuple(out)


def _reaches(name: str) -> bool:
    """Whether defaulting ``name`` can change anything (a defaulter at or below it)."""
    return _reach_cache().get(name, False)


@functools.cache
def _reach_cache() -> dict[str, bool]:
    """Every definition that has a defaulter at or below it, by a fixed point over
    the ``$ref`` graph (definitions can be recursive: JSONSchemaProps)."""
    defs = definitions()
    edges: dict[str, set[str]] = {}
    for name, schema in defs.items():
        targets = set()
        for prop in (schema.get("properties") or {}).values():
            target = _target(prop)
            if target is not None:
                targets.add(target[1])
        edges[name] = targets
    reach = {name: name in DEFAULTERS for name in defs}
    changed = True
    while changed:
        changed = False
        for name, targets in edges.items():
            if not reach[name] and any(reach.get(t, False) for t in targets):
                reach[name] = changed = True
    return reach


def set_defaults(obj: Any, definition: str | None) -> None:
    """Default ``obj`` (of the published ``definition``) and everything nested in
    it, parent before children as kube's generated defaulters do. MUTATES ``obj``."""
    if definition is None or not isinstance(obj, dict):
        return
    defaulter = DEFAULTERS.get(definition)
    if defaulter is not None:
        defaulter(obj)
    for prop, shape, target in _plan(definition):
        value = obj.get(prop)
        if shape == "one":
            set_defaults(value, target)
        elif shape == "list" and isinstance(value, list):
            for item in value:
                set_defaults(item, target)
        elif shape == "map" and isinstance(value, dict):
            for item in value.values():
                set_defaults(item, target)
