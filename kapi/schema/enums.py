"""The supported values of the built-in enum fields users hit first.

The published definitions carry no ``enum`` (none in 1.34..1.37), so kube's
``validation.go`` files are the source: ``pkg/apis/core/validation/validation.go``
(``supportedPullPolicies``, ``supportedPortProtocols``, ``supportedServiceType``,
``validateRestartPolicy``, ``validateDNSPolicy``, ``validateTaintEffect``, ...),
``pkg/apis/apps/validation``, ``pkg/apis/batch/validation``,
``pkg/apis/networking/validation``, ``pkg/apis/autoscaling/validation`` and
``pkg/apis/policy/validation``. Values are in the order kube prints them in
``Unsupported value: "X": supported values: ...`` (sorted where kube uses a set).

Data only: ``kapi.schema.builtin`` puts each list into its definition as
``enum`` (on ``items`` for a list field), so the schema validator checks every
place the type is used (pod templates inside workloads included) and OpenAPI
publishes the values as kube does.
"""

from __future__ import annotations

__all__ = ["ENUMS"]

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_PULL = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE = ("File", "FallbackToLogsOnError")
_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")
_TRAFFIC = ("Cluster", "Local")
_UPDATE_STRATEGY = ("OnDelete", "RollingUpdate")
_RETENTION = ("Delete", "Retain")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_HONOR = ("Honor", "Ignore")

#: definition name -> property -> supported values
ENUMS: dict[str, dict[str, tuple[str, ...]]] = {
    # core/v1: pods and containers (also every pod template in a workload)
    "io.k8s.api.core.v1.Container": {
        "imagePullPolicy": _PULL,
        "terminationMessagePolicy": _TERMINATION_MESSAGE,
    },
    "io.k8s.api.core.v1.EphemeralContainer": {
        "imagePullPolicy": _PULL,
        "terminationMessagePolicy": _TERMINATION_MESSAGE,
    },
    "io.k8s.api.core.v1.ContainerPort": {"protocol": _PROTOCOLS},
    "io.k8s.api.core.v1.PodSpec": {
        "restartPolicy": ("Always", "OnFailure", "Never"),
        "dnsPolicy": ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"),
        "preemptionPolicy": ("Never", "PreemptLowerPriority"),
    },
    "io.k8s.api.core.v1.HTTPGetAction": {"scheme": ("HTTP", "HTTPS")},
    "io.k8s.api.core.v1.Toleration": {
        "operator": ("Equal", "Exists"),
        "effect": _TAINT_EFFECTS,
    },
    "io.k8s.api.core.v1.Taint": {"effect": _TAINT_EFFECTS},
    "io.k8s.api.core.v1.NodeSelectorRequirement": {
        "operator": ("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"),
    },
    "io.k8s.api.core.v1.TopologySpreadConstraint": {
        "whenUnsatisfiable": ("DoNotSchedule", "ScheduleAnyway"),
        "nodeAffinityPolicy": _HONOR,
        "nodeTaintsPolicy": _HONOR,
    },
    "io.k8s.api.core.v1.HostPathVolumeSource": {
        "type": (
            "",
            "BlockDevice",
            "CharDevice",
            "Directory",
            "DirectoryOrCreate",
            "File",
            "FileOrCreate",
            "Socket",
        ),
    },
    # core/v1: services and endpoints
    "io.k8s.api.core.v1.ServicePort": {"protocol": _PROTOCOLS},
    "io.k8s.api.core.v1.ServiceSpec": {
        "type": ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"),
        "externalTrafficPolicy": _TRAFFIC,
        "internalTrafficPolicy": _TRAFFIC,
        "sessionAffinity": ("ClientIP", "None"),
        "ipFamilyPolicy": ("PreferDualStack", "RequireDualStack", "SingleStack"),
        "ipFamilies": ("IPv4", "IPv6"),
    },
    "io.k8s.api.core.v1.EndpointPort": {"protocol": _PROTOCOLS},
    "io.k8s.api.discovery.v1.EndpointPort": {"protocol": _PROTOCOLS},
    # core/v1: storage
    "io.k8s.api.core.v1.PersistentVolumeClaimSpec": {
        "accessModes": _ACCESS_MODES,
        "volumeMode": _VOLUME_MODES,
    },
    "io.k8s.api.core.v1.PersistentVolumeSpec": {
        "accessModes": _ACCESS_MODES,
        "volumeMode": _VOLUME_MODES,
        "persistentVolumeReclaimPolicy": ("Delete", "Recycle", "Retain"),
    },
    # apps/v1
    "io.k8s.api.apps.v1.DeploymentStrategy": {"type": ("Recreate", "RollingUpdate")},
    "io.k8s.api.apps.v1.StatefulSetSpec": {
        "podManagementPolicy": ("OrderedReady", "Parallel")
    },
    "io.k8s.api.apps.v1.StatefulSetUpdateStrategy": {"type": _UPDATE_STRATEGY},
    "io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy": {
        "whenDeleted": _RETENTION,
        "whenScaled": _RETENTION,
    },
    "io.k8s.api.apps.v1.DaemonSetUpdateStrategy": {"type": _UPDATE_STRATEGY},
    # batch/v1
    "io.k8s.api.batch.v1.JobSpec": {
        "completionMode": ("Indexed", "NonIndexed"),
        "podReplacementPolicy": ("Failed", "TerminatingOrFailed"),
    },
    "io.k8s.api.batch.v1.PodFailurePolicyRule": {
        "action": ("Count", "FailIndex", "FailJob", "Ignore"),
    },
    "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement": {
        "operator": ("In", "NotIn")
    },
    "io.k8s.api.batch.v1.CronJobSpec": {
        "concurrencyPolicy": ("Allow", "Forbid", "Replace")
    },
    # networking.k8s.io/v1
    "io.k8s.api.networking.v1.HTTPIngressPath": {
        "pathType": ("Exact", "ImplementationSpecific", "Prefix"),
    },
    "io.k8s.api.networking.v1.NetworkPolicySpec": {
        "policyTypes": ("Egress", "Ingress")
    },
    "io.k8s.api.networking.v1.NetworkPolicyPort": {"protocol": _PROTOCOLS},
    # autoscaling/v2
    "io.k8s.api.autoscaling.v2.MetricSpec": {
        "type": ("ContainerResource", "External", "Object", "Pods", "Resource"),
    },
    "io.k8s.api.autoscaling.v2.MetricTarget": {
        "type": ("AverageValue", "Utilization", "Value")
    },
    "io.k8s.api.autoscaling.v2.HPAScalingRules": {
        "selectPolicy": ("Disabled", "Max", "Min")
    },
    "io.k8s.api.autoscaling.v2.HPAScalingPolicy": {"type": ("Percent", "Pods")},
    # policy/v1
    "io.k8s.api.policy.v1.PodDisruptionBudgetSpec": {
        "unhealthyPodEvictionPolicy": ("AlwaysAllow", "IfHealthyBudget"),
    },
}
