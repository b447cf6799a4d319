"""Protobuf message tables of the resource.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's resource/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "resource.v1.AllocatedDeviceStatus": {
        1: ("driver", "*string"),
        2: ("pool", "*string"),
        3: ("device", "*string"),
        4: ("conditions", "[]meta.v1.Condition"),
        5: ("data", "runtime.RawExtension"),
        6: ("networkData", "resource.v1.NetworkDeviceData"),
        7: ("shareID", "*string"),
    },
    "resource.v1.AllocationResult": {
        1: ("devices", "resource.v1.DeviceAllocationResult"),
        3: ("nodeSelector", "core.v1.NodeSelector"),
        5: ("allocationTimestamp", "meta.v1.Time"),
    },
    "resource.v1.CELDeviceSelector": {
        1: ("expression", "*string"),
    },
    "resource.v1.CapacityRequestPolicy": {
        1: ("default", "resource.Quantity"),
        3: ("validValues", "[]resource.Quantity"),
        4: ("validRange", "resource.v1.CapacityRequestPolicyRange"),
    },
    "resource.v1.CapacityRequestPolicyRange": {
        1: ("min", "resource.Quantity"),
        2: ("max", "resource.Quantity"),
        3: ("step", "resource.Quantity"),
    },
    "resource.v1.CapacityRequirements": {
        1: ("requests", "map[string]resource.Quantity"),
    },
    "resource.v1.Counter": {
        1: ("value", "resource.Quantity"),
    },
    "resource.v1.CounterSet": {
        1: ("name", "*string"),
        2: ("counters", "map[string]resource.v1.Counter"),
    },
    "resource.v1.Device": {
        1: ("name", "*string"),
        2: ("attributes", "map[string]resource.v1.DeviceAttribute"),
        3: ("capacity", "map[string]resource.v1.DeviceCapacity"),
        4: ("consumesCounters", "[]resource.v1.DeviceCounterConsumption"),
        5: ("nodeName", "*string"),
        6: ("nodeSelector", "core.v1.NodeSelector"),
        7: ("allNodes", "*bool"),
        8: ("taints", "[]resource.v1.DeviceTaint"),
        9: ("bindsToNode", "*bool"),
        10: ("bindingConditions", "[]string"),
        11: ("bindingFailureConditions", "[]string"),
        12: ("allowMultipleAllocations", "*bool"),
        14: (
            "nodeAllocatableResources",
            "map[string]resource.v1.NodeAllocatableResource",
        ),
    },
    "resource.v1.DeviceAllocationConfiguration": {
        1: ("source", "*string"),
        2: ("requests", "[]string"),
        3: ("", "resource.v1.DeviceConfiguration"),
    },
    "resource.v1.DeviceAllocationResult": {
        1: ("results", "[]resource.v1.DeviceRequestAllocationResult"),
        2: ("config", "[]resource.v1.DeviceAllocationConfiguration"),
    },
    "resource.v1.DeviceAttribute": {
        2: ("int", "*int64"),
        3: ("bool", "*bool"),
        4: ("string", "*string"),
        5: ("version", "*string"),
        6: ("ints", "[]int64"),
        7: ("bools", "[]bool"),
        8: ("strings", "[]string"),
        9: ("versions", "[]string"),
    },
    "resource.v1.DeviceCapacity": {
        1: ("value", "resource.Quantity"),
        2: ("requestPolicy", "resource.v1.CapacityRequestPolicy"),
    },
    "resource.v1.DeviceClaim": {
        1: ("requests", "[]resource.v1.DeviceRequest"),
        2: ("constraints", "[]resource.v1.DeviceConstraint"),
        3: ("config", "[]resource.v1.DeviceClaimConfiguration"),
    },
    "resource.v1.DeviceClaimConfiguration": {
        1: ("requests", "[]string"),
        2: ("", "resource.v1.DeviceConfiguration"),
    },
    "resource.v1.DeviceClass": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "resource.v1.DeviceClassSpec"),
    },
    "resource.v1.DeviceClassConfiguration": {
        1: ("", "resource.v1.DeviceConfiguration"),
    },
    "resource.v1.DeviceClassList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]resource.v1.DeviceClass"),
    },
    "resource.v1.DeviceClassSpec": {
        1: ("selectors", "[]resource.v1.DeviceSelector"),
        2: ("config", "[]resource.v1.DeviceClassConfiguration"),
        4: ("extendedResourceName", "*string"),
    },
    "resource.v1.DeviceConfiguration": {
        1: ("opaque", "resource.v1.OpaqueDeviceConfiguration"),
    },
    "resource.v1.DeviceConstraint": {
        1: ("requests", "[]string"),
        2: ("matchAttribute", "*string"),
        3: ("distinctAttribute", "*string"),
    },
    "resource.v1.DeviceCounterConsumption": {
        1: ("counterSet", "*string"),
        2: ("counters", "map[string]resource.v1.Counter"),
    },
    "resource.v1.DeviceRequest": {
        1: ("name", "*string"),
        2: ("exactly", "resource.v1.ExactDeviceRequest"),
        3: ("firstAvailable", "[]resource.v1.DeviceSubRequest"),
    },
    "resource.v1.DeviceRequestAllocationResult": {
        1: ("request", "*string"),
        2: ("driver", "*string"),
        3: ("pool", "*string"),
        4: ("device", "*string"),
        5: ("adminAccess", "*bool"),
        6: ("tolerations", "[]resource.v1.DeviceToleration"),
        7: ("bindingConditions", "[]string"),
        8: ("bindingFailureConditions", "[]string"),
        9: ("shareID", "*string"),
        10: ("consumedCapacity", "map[string]resource.Quantity"),
        11: ("skipNodeOperations", "[]string"),
    },
    "resource.v1.DeviceSelector": {
        1: ("cel", "resource.v1.CELDeviceSelector"),
    },
    "resource.v1.DeviceSubRequest": {
        1: ("name", "*string"),
        2: ("deviceClassName", "*string"),
        3: ("selectors", "[]resource.v1.DeviceSelector"),
        4: ("allocationMode", "string"),
        5: ("count", "int64"),
        6: ("tolerations", "[]resource.v1.DeviceToleration"),
        7: ("capacity", "resource.v1.CapacityRequirements"),
    },
    "resource.v1.DeviceTaint": {
        1: ("key", "*string"),
        2: ("value", "string"),
        3: ("effect", "*string"),
        4: ("timeAdded", "meta.v1.Time"),
    },
    "resource.v1.DeviceTaintRule": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "resource.v1.DeviceTaintRuleSpec"),
        3: ("status", "resource.v1.DeviceTaintRuleStatus"),
    },
    "resource.v1.DeviceTaintRuleList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]resource.v1.DeviceTaintRule"),
    },
    "resource.v1.DeviceTaintRuleSpec": {
        1: ("deviceSelector", "resource.v1.DeviceTaintSelector"),
        2: ("taint", "resource.v1.DeviceTaint"),
    },
    "resource.v1.DeviceTaintRuleStatus": {
        1: ("conditions", "[]meta.v1.Condition"),
    },
    "resource.v1.DeviceTaintSelector": {
        2: ("driver", "*string"),
        3: ("pool", "*string"),
        4: ("device", "*string"),
    },
    "resource.v1.DeviceToleration": {
        1: ("key", "string"),
        2: ("operator", "string"),
        3: ("value", "string"),
        4: ("effect", "string"),
        5: ("tolerationSeconds", "*int64"),
    },
    "resource.v1.ExactDeviceRequest": {
        1: ("deviceClassName", "*string"),
        2: ("selectors", "[]resource.v1.DeviceSelector"),
        3: ("allocationMode", "string"),
        4: ("count", "int64"),
        5: ("adminAccess", "*bool"),
        6: ("tolerations", "[]resource.v1.DeviceToleration"),
        7: ("capacity", "resource.v1.CapacityRequirements"),
    },
    "resource.v1.NetworkDeviceData": {
        1: ("interfaceName", "string"),
        2: ("ips", "[]string"),
        3: ("hardwareAddress", "string"),
    },
    "resource.v1.NodeAllocatableMapping": {
        1: ("capacityKey", "*string"),
        2: ("capacityMultiplier", "resource.Quantity"),
        3: ("deviceMultiplier", "resource.Quantity"),
    },
    "resource.v1.NodeAllocatableOverhead": {
        1: ("perPod", "resource.Quantity"),
        2: ("perContainer", "resource.Quantity"),
    },
    "resource.v1.NodeAllocatableResource": {
        3: ("mapping", "resource.v1.NodeAllocatableMapping"),
        4: ("overhead", "resource.v1.NodeAllocatableOverhead"),
    },
    "resource.v1.OpaqueDeviceConfiguration": {
        1: ("driver", "*string"),
        2: ("parameters", "runtime.RawExtension"),
    },
    "resource.v1.ResourceClaim": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "resource.v1.ResourceClaimSpec"),
        3: ("status", "resource.v1.ResourceClaimStatus"),
    },
    "resource.v1.ResourceClaimConsumerReference": {
        1: ("apiGroup", "string"),
        3: ("resource", "*string"),
        4: ("name", "*string"),
        5: ("uid", "*string"),
    },
    "resource.v1.ResourceClaimList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]resource.v1.ResourceClaim"),
    },
    "resource.v1.ResourceClaimSpec": {
        1: ("devices", "resource.v1.DeviceClaim"),
    },
    "resource.v1.ResourceClaimStatus": {
        1: ("allocation", "resource.v1.AllocationResult"),
        2: ("reservedFor", "[]resource.v1.ResourceClaimConsumerReference"),
        4: ("devices", "[]resource.v1.AllocatedDeviceStatus"),
    },
    "resource.v1.ResourceClaimTemplate": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "resource.v1.ResourceClaimTemplateSpec"),
    },
    "resource.v1.ResourceClaimTemplateList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]resource.v1.ResourceClaimTemplate"),
    },
    "resource.v1.ResourceClaimTemplateSpec": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "resource.v1.ResourceClaimSpec"),
    },
    "resource.v1.ResourcePool": {
        1: ("name", "*string"),
        2: ("generation", "*int64"),
        3: ("resourceSliceCount", "*int64"),
    },
    "resource.v1.ResourceSlice": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "resource.v1.ResourceSliceSpec"),
    },
    "resource.v1.ResourceSliceList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]resource.v1.ResourceSlice"),
    },
    "resource.v1.ResourceSliceSpec": {
        1: ("driver", "*string"),
        2: ("pool", "resource.v1.ResourcePool"),
        3: ("nodeName", "*string"),
        4: ("nodeSelector", "core.v1.NodeSelector"),
        5: ("allNodes", "*bool"),
        6: ("devices", "[]resource.v1.Device"),
        7: ("perDeviceNodeSelection", "*bool"),
        8: ("sharedCounters", "[]resource.v1.CounterSet"),
        9: ("partitionTypeAttribute", "*string"),
        10: ("skipNodeOperations", "[]string"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "resource.k8s.io/v1": (
        "resource.v1",
        (
            "DeviceClass",
            "DeviceClassList",
            "DeviceTaintRule",
            "DeviceTaintRuleList",
            "ResourceClaim",
            "ResourceClaimList",
            "ResourceClaimTemplate",
            "ResourceClaimTemplateList",
            "ResourceSlice",
            "ResourceSliceList",
        ),
    ),
}
