"""The built-in resource types kapi serves, declared as data (one ``_kind``
call per kind).

Every standard kind of the stable (GA) group-versions that kube-apiserver 1.34
serves by default, with kube's scope, short names, categories and
subresources. Each is stored through the one generic registry with its type's
strategy wrapped in a ``SchemaStrategy`` (the published definition validates and
prunes it). The virtual reviews are in ``kapi.kinds.virtual``; Binding,
ComponentStatus and the like are left out until they work. The catalog gets
them from ``resource_types()`` (``KAPI_RESOURCE_TYPE_PROVIDERS``).
"""

from __future__ import annotations

from kapi.kinds import cluster, networking, printers, workloads
from kapi.kinds import clusterprinters as plumbing
from kapi.kinds.configmaps import ConfigMapStrategy
from kapi.kinds.customresourcedefinitions import (
    CustomResourceDefinitionStrategy,
)
from kapi.kinds.events import EventStrategy, EventsV1Strategy
from kapi.kinds.hpav1 import HorizontalPodAutoscalerV1Strategy
from kapi.kinds.leases import LeaseStrategy
from kapi.kinds.namespaces import NamespaceStrategy
from kapi.kinds.scale import ScalePaths
from kapi.kinds.schema import SchemaStrategy
from kapi.kinds.secrets import SecretStrategy
from kapi.kinds.serviceaccounts import ServiceAccountStrategy
from kapi.kinds.virtual import TOKEN_SUBRESOURCE
from kapi.registry.definitions import definition_name
from kapi.registry.resource import ResourceType, Subresource
from kapi.registry.strategy import Strategy

__all__ = ["BUILTIN_TYPES", "resource_types"]

_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

def _schema(rt: ResourceType, scale: bool = False) -> ResourceType:
    """Wrap the strategy with the kind's published schema."""
    has_status = rt.subresource("status") is not None
    paths = ScalePaths(default_replicas=1) if scale else None
    strategy = SchemaStrategy(
        rt.strategy, definition_name(rt.group, rt.version, rt.kind), has_status, paths
    )
    extra = {**rt.extra, "schema_name": definition_name(rt.group, rt.version, rt.kind)}
    return ResourceType(**{**rt.__dict__, "strategy": strategy, "extra": extra})


def _kind(
    group: str,
    version: str,
    kind: str,
    plural: str,
    namespaced: bool,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    status: bool = False,
    scale: bool = False,
    strategy: Strategy | None = None,
    **more,
) -> ResourceType:
    subs = []
    if status:
        subs.append(Subresource("status", kind))
    if scale:
        subs.append(Subresource("scale", "Scale", group="autoscaling", version="v1"))
    rt = ResourceType(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        strategy=strategy or Strategy(),
        short_names=short,
        categories=categories,
        subresources=tuple(subs) + tuple(more.pop("subresources", ())),
        **more,
    )
    return _schema(rt, scale)


_ALL = ("all",)
_EXT = ("api-extensions",)
_NET = "networking.k8s.io"
_RBAC = "rbac.authorization.k8s.io"
_ADM = "admissionregistration.k8s.io"
_STORAGE = "storage.k8s.io"
_RESOURCE = "resource.k8s.io"

BUILTIN_TYPES: tuple[ResourceType, ...] = (
    _kind(
        "",
        "v1",
        "Namespace",
        "namespaces",
        False,
        ("ns",),
        status=True,
        strategy=NamespaceStrategy(),
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        subresources=(Subresource("finalize", "Namespace", verbs=("update",)),),
        field_selectors=("status.phase",),
        name_rule="label",
    ),
    _kind(
        "", "v1", "ConfigMap", "configmaps", True, ("cm",), strategy=ConfigMapStrategy()
    ),
    _kind(
        "",
        "v1",
        "Secret",
        "secrets",
        True,
        strategy=SecretStrategy(),
        field_selectors=("type",),
    ),
    _kind(
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        True,
        ("sa",),
        strategy=ServiceAccountStrategy(),
        subresources=(TOKEN_SUBRESOURCE,),
    ),
    _kind(
        "",
        "v1",
        "Event",
        "events",
        True,
        ("ev",),
        strategy=EventStrategy(),
        field_selectors=_EVENT_FIELDS,
    ),
    _kind(
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        True,
        ("ev",),
        strategy=EventsV1Strategy(),
        storage_group="",
        storage_resource="events",
        field_selectors=(
            "reason",
            "type",
            "reportingController",
            "regarding.kind",
            "regarding.name",
            "regarding.namespace",
            "regarding.uid",
        ),
    ),
    _kind(
        "coordination.k8s.io",
        "v1",
        "Lease",
        "leases",
        True,
        strategy=LeaseStrategy(),
    ),
    # core/v1
    _kind(
        "",
        "v1",
        "Endpoints",
        "endpoints",
        True,
        ("ep",),
        strategy=networking.EndpointsStrategy(),
    ),
    _kind(
        "",
        "v1",
        "LimitRange",
        "limitranges",
        True,
        ("limits",),
        strategy=printers.LimitRangeStrategy(),
    ),
    _kind(
        "",
        "v1",
        "Node",
        "nodes",
        False,
        ("no",),
        status=True,
        strategy=cluster.NodeStrategy(),
        field_selectors=("spec.unschedulable",),
        field_defaults=(("spec.unschedulable", "false"),),
    ),
    _kind(
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        True,
        ("pvc",),
        status=True,
        strategy=cluster.PersistentVolumeClaimStrategy(),
    ),
    _kind(
        "",
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        False,
        ("pv",),
        status=True,
        strategy=cluster.PersistentVolumeStrategy(),
    ),
    _kind(
        "",
        "v1",
        "Pod",
        "pods",
        True,
        ("po",),
        _ALL,
        status=True,
        strategy=workloads.PodStrategy(),
        field_selectors=(
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ),
        field_defaults=(("spec.hostNetwork", "false"),),
    ),
    _kind(
        "",
        "v1",
        "PodTemplate",
        "podtemplates",
        True,
        strategy=printers.PodTemplateStrategy(),
    ),
    _kind(
        "",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        True,
        ("rc",),
        _ALL,
        status=True,
        scale=True,
        strategy=workloads.ReplicationControllerStrategy(),
    ),
    _kind(
        "",
        "v1",
        "ResourceQuota",
        "resourcequotas",
        True,
        ("quota",),
        status=True,
        strategy=plumbing.ResourceQuotaStrategy(),
    ),
    _kind(
        "",
        "v1",
        "Service",
        "services",
        True,
        ("svc",),
        _ALL,
        status=True,
        strategy=networking.ServiceStrategy(),
        name_rule="label",
    ),
    # admissionregistration.k8s.io/v1
    _kind(
        _ADM,
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        False,
        (),
        _EXT,
        strategy=printers.WebhookConfigurationStrategy(),
    ),
    _kind(
        _ADM,
        "v1",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        False,
        (),
        _EXT,
        status=True,
        strategy=plumbing.ValidatingAdmissionPolicyStrategy(),
    ),
    _kind(
        _ADM,
        "v1",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        False,
        (),
        _EXT,
        strategy=plumbing.ValidatingAdmissionPolicyBindingStrategy(),
    ),
    _kind(
        _ADM,
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        False,
        (),
        _EXT,
        strategy=printers.WebhookConfigurationStrategy(),
    ),
    # apiextensions.k8s.io/v1
    _kind(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        False,
        ("crd", "crds"),
        _EXT,
        status=True,
        strategy=CustomResourceDefinitionStrategy(),
    ),
    # apiregistration.k8s.io/v1
    _kind(
        "apiregistration.k8s.io",
        "v1",
        "APIService",
        "apiservices",
        False,
        (),
        _EXT,
        status=True,
        strategy=plumbing.APIServiceStrategy(),
    ),
    # apps/v1
    _kind(
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        True,
        strategy=printers.ControllerRevisionStrategy(),
    ),
    _kind(
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        True,
        ("ds",),
        _ALL,
        status=True,
        strategy=workloads.DaemonSetStrategy(),
    ),
    _kind(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        True,
        ("deploy",),
        _ALL,
        status=True,
        scale=True,
        strategy=workloads.DeploymentStrategy(),
    ),
    _kind(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        True,
        ("rs",),
        _ALL,
        status=True,
        scale=True,
        strategy=workloads.ReplicaSetStrategy(),
    ),
    _kind(
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        True,
        ("sts",),
        _ALL,
        status=True,
        scale=True,
        strategy=workloads.StatefulSetStrategy(),
    ),
    # autoscaling
    _kind(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        True,
        ("hpa",),
        _ALL,
        status=True,
        strategy=cluster.HorizontalPodAutoscalerStrategy(),
    ),
    # The same stored objects in autoscaling/v1 form (after v2: the preferred
    # version is the one lifecycle code reads stored rows as).
    _kind(
        "autoscaling",
        "v1",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        True,
        ("hpa",),
        _ALL,
        status=True,
        strategy=HorizontalPodAutoscalerV1Strategy(),
    ),
    # batch/v1
    _kind(
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        True,
        ("cj",),
        _ALL,
        status=True,
        strategy=workloads.CronJobStrategy(),
    ),
    _kind(
        "batch",
        "v1",
        "Job",
        "jobs",
        True,
        (),
        _ALL,
        status=True,
        strategy=workloads.JobStrategy(),
        field_selectors=("status.successful",),
    ),
    # certificates.k8s.io/v1
    _kind(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        False,
        ("csr",),
        status=True,
        subresources=(Subresource("approval", "CertificateSigningRequest"),),
        field_selectors=("spec.signerName",),
    ),
    # discovery.k8s.io/v1
    _kind(
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        True,
        strategy=printers.EndpointSliceStrategy(),
    ),
    # flowcontrol.apiserver.k8s.io/v1
    _kind(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "FlowSchema",
        "flowschemas",
        False,
        status=True,
        strategy=plumbing.FlowSchemaStrategy(),
    ),
    _kind(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        False,
        status=True,
        strategy=plumbing.PriorityLevelConfigurationStrategy(),
    ),
    # networking.k8s.io/v1
    _kind(
        _NET,
        "v1",
        "IngressClass",
        "ingressclasses",
        False,
        strategy=networking.IngressClassStrategy(),
    ),
    _kind(
        _NET,
        "v1",
        "Ingress",
        "ingresses",
        True,
        ("ing",),
        status=True,
        strategy=networking.IngressStrategy(),
    ),
    _kind(
        _NET,
        "v1",
        "IPAddress",
        "ipaddresses",
        False,
        ("ip",),
        strategy=plumbing.IPAddressStrategy(),
    ),
    _kind(
        _NET,
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        True,
        ("netpol",),
        strategy=networking.NetworkPolicyStrategy(),
    ),
    _kind(
        _NET,
        "v1",
        "ServiceCIDR",
        "servicecidrs",
        False,
        status=True,
        strategy=plumbing.ServiceCIDRStrategy(),
    ),
    # node.k8s.io/v1
    _kind(
        "node.k8s.io",
        "v1",
        "RuntimeClass",
        "runtimeclasses",
        False,
        strategy=printers.RuntimeClassStrategy(),
    ),
    # policy/v1
    _kind(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        True,
        ("pdb",),
        status=True,
        strategy=cluster.PodDisruptionBudgetStrategy(),
    ),
    # rbac.authorization.k8s.io/v1
    _kind(
        _RBAC,
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        False,
        strategy=cluster.RoleBindingStrategy(),
        name_rule="path-segment",
    ),
    _kind(
        _RBAC,
        "v1",
        "ClusterRole",
        "clusterroles",
        False,
        strategy=cluster.ClusterRoleStrategy(),
        name_rule="path-segment",
    ),
    _kind(
        _RBAC,
        "v1",
        "RoleBinding",
        "rolebindings",
        True,
        strategy=cluster.RoleBindingStrategy(),
        name_rule="path-segment",
    ),
    _kind(
        _RBAC,
        "v1",
        "Role",
        "roles",
        True,
        strategy=cluster.RoleStrategy(),
        name_rule="path-segment",
    ),
    # resource.k8s.io/v1
    _kind(_RESOURCE, "v1", "DeviceClass", "deviceclasses", False),
    _kind(
        _RESOURCE,
        "v1",
        "ResourceClaim",
        "resourceclaims",
        True,
        status=True,
        strategy=plumbing.ResourceClaimStrategy(),
    ),
    _kind(_RESOURCE, "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True),
    _kind(
        _RESOURCE,
        "v1",
        "ResourceSlice",
        "resourceslices",
        False,
        strategy=plumbing.ResourceSliceStrategy(),
    ),
    # scheduling.k8s.io/v1
    _kind(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        False,
        ("pc",),
        strategy=cluster.PriorityClassStrategy(),
    ),
    # storage.k8s.io/v1
    _kind(
        _STORAGE,
        "v1",
        "CSIDriver",
        "csidrivers",
        False,
        strategy=plumbing.CSIDriverStrategy(),
    ),
    _kind(
        _STORAGE,
        "v1",
        "CSINode",
        "csinodes",
        False,
        strategy=plumbing.CSINodeStrategy(),
    ),
    _kind(_STORAGE, "v1", "CSIStorageCapacity", "csistoragecapacities", True),
    _kind(
        _STORAGE,
        "v1",
        "StorageClass",
        "storageclasses",
        False,
        ("sc",),
        strategy=cluster.StorageClassStrategy(),
    ),
    _kind(
        _STORAGE,
        "v1",
        "VolumeAttachment",
        "volumeattachments",
        False,
        status=True,
        strategy=plumbing.VolumeAttachmentStrategy(),
    ),
    _kind(
        _STORAGE,
        "v1",
        "VolumeAttributesClass",
        "volumeattributesclasses",
        False,
        ("vac",),
    ),
)


def resource_types() -> tuple[ResourceType, ...]:
    """The built-in types, for the catalog (``KAPI_RESOURCE_TYPE_PROVIDERS``)."""
    return BUILTIN_TYPES
