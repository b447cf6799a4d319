"""Protobuf message tables of the flowcontrol.apiserver.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's flowcontrol/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "flowcontrol.v1.ExemptPriorityLevelConfiguration": {
        1: ("nominalConcurrencyShares", "*int32"),
        2: ("lendablePercent", "*int32"),
    },
    "flowcontrol.v1.FlowDistinguisherMethod": {
        1: ("type", "*string"),
    },
    "flowcontrol.v1.FlowSchema": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "flowcontrol.v1.FlowSchemaSpec"),
        3: ("status", "flowcontrol.v1.FlowSchemaStatus"),
    },
    "flowcontrol.v1.FlowSchemaCondition": {
        1: ("type", "string"),
        2: ("status", "string"),
        3: ("lastTransitionTime", "meta.v1.Time"),
        4: ("reason", "string"),
        5: ("message", "string"),
    },
    "flowcontrol.v1.FlowSchemaList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]flowcontrol.v1.FlowSchema"),
    },
    "flowcontrol.v1.FlowSchemaSpec": {
        1: (
            "priorityLevelConfiguration",
            "flowcontrol.v1.PriorityLevelConfigurationReference",
        ),
        2: ("matchingPrecedence", "*int32"),
        3: ("distinguisherMethod", "flowcontrol.v1.FlowDistinguisherMethod"),
        4: ("rules", "[]flowcontrol.v1.PolicyRulesWithSubjects"),
    },
    "flowcontrol.v1.FlowSchemaStatus": {
        1: ("conditions", "[]flowcontrol.v1.FlowSchemaCondition"),
    },
    "flowcontrol.v1.GroupSubject": {
        1: ("name", "*string"),
    },
    "flowcontrol.v1.LimitResponse": {
        1: ("type", "*string"),
        2: ("queuing", "flowcontrol.v1.QueuingConfiguration"),
    },
    "flowcontrol.v1.LimitedPriorityLevelConfiguration": {
        1: ("nominalConcurrencyShares", "*int32"),
        2: ("limitResponse", "flowcontrol.v1.LimitResponse"),
        3: ("lendablePercent", "*int32"),
        4: ("borrowingLimitPercent", "*int32"),
    },
    "flowcontrol.v1.NonResourcePolicyRule": {
        1: ("verbs", "[]string"),
        6: ("nonResourceURLs", "[]string"),
    },
    "flowcontrol.v1.PolicyRulesWithSubjects": {
        1: ("subjects", "[]flowcontrol.v1.Subject"),
        2: ("resourceRules", "[]flowcontrol.v1.ResourcePolicyRule"),
        3: ("nonResourceRules", "[]flowcontrol.v1.NonResourcePolicyRule"),
    },
    "flowcontrol.v1.PriorityLevelConfiguration": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "flowcontrol.v1.PriorityLevelConfigurationSpec"),
        3: ("status", "flowcontrol.v1.PriorityLevelConfigurationStatus"),
    },
    "flowcontrol.v1.PriorityLevelConfigurationCondition": {
        1: ("type", "string"),
        2: ("status", "string"),
        3: ("lastTransitionTime", "meta.v1.Time"),
        4: ("reason", "string"),
        5: ("message", "string"),
    },
    "flowcontrol.v1.PriorityLevelConfigurationList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]flowcontrol.v1.PriorityLevelConfiguration"),
    },
    "flowcontrol.v1.PriorityLevelConfigurationReference": {
        1: ("name", "*string"),
    },
    "flowcontrol.v1.PriorityLevelConfigurationSpec": {
        1: ("type", "*string"),
        2: ("limited", "flowcontrol.v1.LimitedPriorityLevelConfiguration"),
        3: ("exempt", "flowcontrol.v1.ExemptPriorityLevelConfiguration"),
    },
    "flowcontrol.v1.PriorityLevelConfigurationStatus": {
        1: ("conditions", "[]flowcontrol.v1.PriorityLevelConfigurationCondition"),
    },
    "flowcontrol.v1.QueuingConfiguration": {
        1: ("queues", "*int32"),
        2: ("handSize", "*int32"),
        3: ("queueLengthLimit", "*int32"),
    },
    "flowcontrol.v1.ResourcePolicyRule": {
        1: ("verbs", "[]string"),
        2: ("apiGroups", "[]string"),
        3: ("resources", "[]string"),
        4: ("clusterScope", "bool"),
        5: ("namespaces", "[]string"),
    },
    "flowcontrol.v1.ServiceAccountSubject": {
        1: ("namespace", "*string"),
        2: ("name", "*string"),
    },
    "flowcontrol.v1.Subject": {
        1: ("kind", "*string"),
        2: ("user", "flowcontrol.v1.UserSubject"),
        3: ("group", "flowcontrol.v1.GroupSubject"),
        4: ("serviceAccount", "flowcontrol.v1.ServiceAccountSubject"),
    },
    "flowcontrol.v1.UserSubject": {
        1: ("name", "*string"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "flowcontrol.apiserver.k8s.io/v1": (
        "flowcontrol.v1",
        (
            "FlowSchema",
            "FlowSchemaList",
            "PriorityLevelConfiguration",
            "PriorityLevelConfigurationList",
        ),
    ),
}
