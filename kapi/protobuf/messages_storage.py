"""Protobuf message tables of the storage.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's storage/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "storage.v1.CSIDriver": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "storage.v1.CSIDriverSpec"),
    },
    "storage.v1.CSIDriverList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]storage.v1.CSIDriver"),
    },
    "storage.v1.CSIDriverSpec": {
        1: ("attachRequired", "*bool"),
        2: ("podInfoOnMount", "*bool"),
        3: ("volumeLifecycleModes", "[]string"),
        4: ("storageCapacity", "*bool"),
        5: ("fsGroupPolicy", "*string"),
        6: ("tokenRequests", "[]storage.v1.TokenRequest"),
        7: ("requiresRepublish", "*bool"),
        8: ("seLinuxMount", "*bool"),
        9: ("nodeAllocatableUpdatePeriodSeconds", "*int64"),
        10: ("serviceAccountTokenInSecrets", "*bool"),
        11: ("preventPodSchedulingIfMissing", "*bool"),
    },
    "storage.v1.CSINode": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "storage.v1.CSINodeSpec"),
        3: ("status", "storage.v1.CSINodeStatus"),
    },
    "storage.v1.CSINodeDriver": {
        1: ("name", "*string"),
        2: ("nodeID", "*string"),
        3: ("topologyKeys", "[]string"),
        4: ("allocatable", "storage.v1.VolumeNodeResources"),
    },
    "storage.v1.CSINodeList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]storage.v1.CSINode"),
    },
    "storage.v1.CSINodeSpec": {
        1: ("drivers", "[]storage.v1.CSINodeDriver"),
    },
    "storage.v1.CSINodeStatus": {
        1: ("storageHealth", "[]storage.v1.StorageHealth"),
    },
    "storage.v1.CSIStorageCapacity": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("nodeTopology", "meta.v1.LabelSelector"),
        3: ("storageClassName", "*string"),
        4: ("capacity", "resource.Quantity"),
        5: ("maximumVolumeSize", "resource.Quantity"),
    },
    "storage.v1.CSIStorageCapacityList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]storage.v1.CSIStorageCapacity"),
    },
    "storage.v1.StorageClass": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("provisioner", "*string"),
        3: ("parameters", "map[string]string"),
        4: ("reclaimPolicy", "*string"),
        5: ("mountOptions", "[]string"),
        6: ("allowVolumeExpansion", "*bool"),
        7: ("volumeBindingMode", "*string"),
        8: ("allowedTopologies", "[]core.v1.TopologySelectorTerm"),
    },
    "storage.v1.StorageClassList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]storage.v1.StorageClass"),
    },
    "storage.v1.StorageHealth": {
        1: ("name", "*string"),
        2: ("healthConditions", "[]storage.v1.StorageHealthCondition"),
    },
    "storage.v1.StorageHealthCondition": {
        1: ("status", "*string"),
        2: ("reason", "*string"),
        3: ("message", "string"),
        4: ("accessMode", "*string"),
        5: ("volumeMode", "*string"),
        6: ("lastTransitionTime", "meta.v1.Time"),
    },
    "storage.v1.TokenRequest": {
        1: ("audience", "*string"),
        2: ("expirationSeconds", "*int64"),
    },
    "storage.v1.VolumeAttachment": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "storage.v1.VolumeAttachmentSpec"),
        3: ("status", "storage.v1.VolumeAttachmentStatus"),
    },
    "storage.v1.VolumeAttachmentList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]storage.v1.VolumeAttachment"),
    },
    "storage.v1.VolumeAttachmentSource": {
        1: ("persistentVolumeName", "*string"),
        2: ("inlineVolumeSpec", "core.v1.PersistentVolumeSpec"),
    },
    "storage.v1.VolumeAttachmentSpec": {
        1: ("attacher", "*string"),
        2: ("source", "storage.v1.VolumeAttachmentSource"),
        3: ("nodeName", "*string"),
    },
    "storage.v1.VolumeAttachmentStatus": {
        1: ("attached", "*bool"),
        2: ("attachmentMetadata", "map[string]string"),
        3: ("attachError", "storage.v1.VolumeError"),
        4: ("detachError", "storage.v1.VolumeError"),
    },
    "storage.v1.VolumeAttributesClass": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("driverName", "*string"),
        3: ("parameters", "map[string]string"),
    },
    "storage.v1.VolumeAttributesClassList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]storage.v1.VolumeAttributesClass"),
    },
    "storage.v1.VolumeError": {
        1: ("time", "meta.v1.Time"),
        2: ("message", "string"),
        3: ("errorCode", "*int32"),
    },
    "storage.v1.VolumeNodeResources": {
        1: ("count", "*int32"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "storage.k8s.io/v1": (
        "storage.v1",
        (
            "CSIDriver",
            "CSIDriverList",
            "CSINode",
            "CSINodeList",
            "CSIStorageCapacity",
            "CSIStorageCapacityList",
            "StorageClass",
            "StorageClassList",
            "VolumeAttachment",
            "VolumeAttachmentList",
            "VolumeAttributesClass",
            "VolumeAttributesClassList",
        ),
    ),
}
