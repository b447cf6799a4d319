"""Protobuf message tables of the apps/v1 API.

Field numbers and types follow k8s.io/api's apps/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "apps.v1.ControllerRevision": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("data", "runtime.RawExtension"),
        3: ("revision", "*int64"),
    },
    "apps.v1.ControllerRevisionList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]apps.v1.ControllerRevision"),
    },
    "apps.v1.DaemonSet": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "apps.v1.DaemonSetSpec"),
        3: ("status", "apps.v1.DaemonSetStatus"),
    },
    "apps.v1.DaemonSetCondition": {
        1: ("type", "*string"),
        2: ("status", "*string"),
        3: ("lastTransitionTime", "meta.v1.Time"),
        4: ("reason", "string"),
        5: ("message", "string"),
    },
    "apps.v1.DaemonSetList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]apps.v1.DaemonSet"),
    },
    "apps.v1.DaemonSetSpec": {
        1: ("selector", "meta.v1.LabelSelector"),
        2: ("template", "core.v1.PodTemplateSpec"),
        3: ("updateStrategy", "apps.v1.DaemonSetUpdateStrategy"),
        4: ("minReadySeconds", "int32"),
        6: ("revisionHistoryLimit", "*int32"),
    },
    "apps.v1.DaemonSetStatus": {
        1: ("currentNumberScheduled", "*int32"),
        2: ("numberMisscheduled", "*int32"),
        3: ("desiredNumberScheduled", "*int32"),
        4: ("numberReady", "*int32"),
        5: ("observedGeneration", "int64"),
        6: ("updatedNumberScheduled", "int32"),
        7: ("numberAvailable", "int32"),
        8: ("numberUnavailable", "int32"),
        9: ("collisionCount", "*int32"),
        10: ("conditions", "[]apps.v1.DaemonSetCondition"),
    },
    "apps.v1.DaemonSetUpdateStrategy": {
        1: ("type", "string"),
        2: ("rollingUpdate", "apps.v1.RollingUpdateDaemonSet"),
    },
    "apps.v1.Deployment": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "apps.v1.DeploymentSpec"),
        3: ("status", "apps.v1.DeploymentStatus"),
    },
    "apps.v1.DeploymentCondition": {
        1: ("type", "*string"),
        2: ("status", "*string"),
        4: ("reason", "string"),
        5: ("message", "string"),
        6: ("lastUpdateTime", "meta.v1.Time"),
        7: ("lastTransitionTime", "meta.v1.Time"),
    },
    "apps.v1.DeploymentList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]apps.v1.Deployment"),
    },
    "apps.v1.DeploymentSpec": {
        1: ("replicas", "*int32"),
        2: ("selector", "meta.v1.LabelSelector"),
        3: ("template", "core.v1.PodTemplateSpec"),
        4: ("strategy", "apps.v1.DeploymentStrategy"),
        5: ("minReadySeconds", "int32"),
        6: ("revisionHistoryLimit", "*int32"),
        7: ("paused", "bool"),
        9: ("progressDeadlineSeconds", "*int32"),
    },
    "apps.v1.DeploymentStatus": {
        1: ("observedGeneration", "int64"),
        2: ("replicas", "int32"),
        3: ("updatedReplicas", "int32"),
        4: ("availableReplicas", "int32"),
        5: ("unavailableReplicas", "int32"),
        6: ("conditions", "[]apps.v1.DeploymentCondition"),
        7: ("readyReplicas", "int32"),
        8: ("collisionCount", "*int32"),
        9: ("terminatingReplicas", "*int32"),
    },
    "apps.v1.DeploymentStrategy": {
        1: ("type", "string"),
        2: ("rollingUpdate", "apps.v1.RollingUpdateDeployment"),
    },
    "apps.v1.ReplicaSet": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "apps.v1.ReplicaSetSpec"),
        3: ("status", "apps.v1.ReplicaSetStatus"),
    },
    "apps.v1.ReplicaSetCondition": {
        1: ("type", "*string"),
        2: ("status", "*string"),
        3: ("lastTransitionTime", "meta.v1.Time"),
        4: ("reason", "string"),
        5: ("message", "string"),
    },
    "apps.v1.ReplicaSetList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]apps.v1.ReplicaSet"),
    },
    "apps.v1.ReplicaSetSpec": {
        1: ("replicas", "*int32"),
        2: ("selector", "meta.v1.LabelSelector"),
        3: ("template", "core.v1.PodTemplateSpec"),
        4: ("minReadySeconds", "int32"),
    },
    "apps.v1.ReplicaSetStatus": {
        1: ("replicas", "*int32"),
        2: ("fullyLabeledReplicas", "int32"),
        3: ("observedGeneration", "int64"),
        4: ("readyReplicas", "int32"),
        5: ("availableReplicas", "int32"),
        6: ("conditions", "[]apps.v1.ReplicaSetCondition"),
        7: ("terminatingReplicas", "*int32"),
    },
    "apps.v1.RollingUpdateDaemonSet": {
        1: ("maxUnavailable", "intstr.IntOrString"),
        2: ("maxSurge", "intstr.IntOrString"),
    },
    "apps.v1.RollingUpdateDeployment": {
        1: ("maxUnavailable", "intstr.IntOrString"),
        2: ("maxSurge", "intstr.IntOrString"),
    },
    "apps.v1.RollingUpdateStatefulSetStrategy": {
        1: ("partition", "*int32"),
        2: ("maxUnavailable", "intstr.IntOrString"),
    },
    "apps.v1.StatefulSet": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "apps.v1.StatefulSetSpec"),
        3: ("status", "apps.v1.StatefulSetStatus"),
    },
    "apps.v1.StatefulSetCondition": {
        1: ("type", "*string"),
        2: ("status", "*string"),
        3: ("lastTransitionTime", "meta.v1.Time"),
        4: ("reason", "string"),
        5: ("message", "string"),
    },
    "apps.v1.StatefulSetList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]apps.v1.StatefulSet"),
    },
    "apps.v1.StatefulSetOrdinals": {
        1: ("start", "*int32"),
    },
    "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy": {
        1: ("whenDeleted", "string"),
        2: ("whenScaled", "string"),
    },
    "apps.v1.StatefulSetSpec": {
        1: ("replicas", "*int32"),
        2: ("selector", "meta.v1.LabelSelector"),
        3: ("template", "core.v1.PodTemplateSpec"),
        4: ("volumeClaimTemplates", "[]core.v1.PersistentVolumeClaim"),
        5: ("serviceName", "*string"),
        6: ("podManagementPolicy", "string"),
        7: ("updateStrategy", "apps.v1.StatefulSetUpdateStrategy"),
        8: ("revisionHistoryLimit", "*int32"),
        9: ("minReadySeconds", "int32"),
        10: (
            "persistentVolumeClaimRetentionPolicy",
            "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
        ),
        11: ("ordinals", "apps.v1.StatefulSetOrdinals"),
    },
    "apps.v1.StatefulSetStatus": {
        1: ("observedGeneration", "int64"),
        2: ("replicas", "*int32"),
        3: ("readyReplicas", "int32"),
        4: ("currentReplicas", "int32"),
        5: ("updatedReplicas", "int32"),
        6: ("currentRevision", "string"),
        7: ("updateRevision", "string"),
        9: ("collisionCount", "*int32"),
        10: ("conditions", "[]apps.v1.StatefulSetCondition"),
        11: ("availableReplicas", "*int32"),
    },
    "apps.v1.StatefulSetUpdateStrategy": {
        1: ("type", "string"),
        2: ("rollingUpdate", "apps.v1.RollingUpdateStatefulSetStrategy"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "apps/v1": (
        "apps.v1",
        (
            "ControllerRevision",
            "ControllerRevisionList",
            "DaemonSet",
            "DaemonSetList",
            "Deployment",
            "DeploymentList",
            "ReplicaSet",
            "ReplicaSetList",
            "StatefulSet",
            "StatefulSetList",
        ),
    ),
}
