"""Protobuf message tables of the networking.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's networking/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "networking.v1.HTTPIngressPath": {
        1: ("path", "string"),
        2: ("backend", "networking.v1.IngressBackend"),
        3: ("pathType", "*string"),
    },
    "networking.v1.HTTPIngressRuleValue": {
        1: ("paths", "[]networking.v1.HTTPIngressPath"),
    },
    "networking.v1.IPAddress": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "networking.v1.IPAddressSpec"),
    },
    "networking.v1.IPAddressList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]networking.v1.IPAddress"),
    },
    "networking.v1.IPAddressSpec": {
        1: ("parentRef", "networking.v1.ParentReference"),
    },
    "networking.v1.IPBlock": {
        1: ("cidr", "*string"),
        2: ("except", "[]string"),
    },
    "networking.v1.Ingress": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "networking.v1.IngressSpec"),
        3: ("status", "networking.v1.IngressStatus"),
    },
    "networking.v1.IngressBackend": {
        3: ("resource", "core.v1.TypedLocalObjectReference"),
        4: ("service", "networking.v1.IngressServiceBackend"),
    },
    "networking.v1.IngressClass": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "networking.v1.IngressClassSpec"),
    },
    "networking.v1.IngressClassList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]networking.v1.IngressClass"),
    },
    "networking.v1.IngressClassParametersReference": {
        1: ("apiGroup", "*string"),
        2: ("kind", "*string"),
        3: ("name", "*string"),
        4: ("scope", "*string"),
        5: ("namespace", "*string"),
    },
    "networking.v1.IngressClassSpec": {
        1: ("controller", "string"),
        2: ("parameters", "networking.v1.IngressClassParametersReference"),
    },
    "networking.v1.IngressList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]networking.v1.Ingress"),
    },
    "networking.v1.IngressLoadBalancerIngress": {
        1: ("ip", "string"),
        2: ("hostname", "string"),
        4: ("ports", "[]networking.v1.IngressPortStatus"),
    },
    "networking.v1.IngressLoadBalancerStatus": {
        1: ("ingress", "[]networking.v1.IngressLoadBalancerIngress"),
    },
    "networking.v1.IngressPortStatus": {
        1: ("port", "*int32"),
        2: ("protocol", "*string"),
        3: ("error", "*string"),
    },
    "networking.v1.IngressRule": {
        1: ("host", "string"),
        2: ("", "networking.v1.IngressRuleValue"),
    },
    "networking.v1.IngressRuleValue": {
        1: ("http", "networking.v1.HTTPIngressRuleValue"),
    },
    "networking.v1.IngressServiceBackend": {
        1: ("name", "*string"),
        2: ("port", "networking.v1.ServiceBackendPort"),
    },
    "networking.v1.IngressSpec": {
        1: ("defaultBackend", "networking.v1.IngressBackend"),
        2: ("tls", "[]networking.v1.IngressTLS"),
        3: ("rules", "[]networking.v1.IngressRule"),
        4: ("ingressClassName", "*string"),
    },
    "networking.v1.IngressStatus": {
        1: ("loadBalancer", "networking.v1.IngressLoadBalancerStatus"),
    },
    "networking.v1.IngressTLS": {
        1: ("hosts", "[]string"),
        2: ("secretName", "string"),
    },
    "networking.v1.NetworkPolicy": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "networking.v1.NetworkPolicySpec"),
    },
    "networking.v1.NetworkPolicyEgressRule": {
        1: ("ports", "[]networking.v1.NetworkPolicyPort"),
        2: ("to", "[]networking.v1.NetworkPolicyPeer"),
    },
    "networking.v1.NetworkPolicyIngressRule": {
        1: ("ports", "[]networking.v1.NetworkPolicyPort"),
        2: ("from", "[]networking.v1.NetworkPolicyPeer"),
    },
    "networking.v1.NetworkPolicyList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]networking.v1.NetworkPolicy"),
    },
    "networking.v1.NetworkPolicyPeer": {
        1: ("podSelector", "meta.v1.LabelSelector"),
        2: ("namespaceSelector", "meta.v1.LabelSelector"),
        3: ("ipBlock", "networking.v1.IPBlock"),
    },
    "networking.v1.NetworkPolicyPort": {
        1: ("protocol", "*string"),
        2: ("port", "intstr.IntOrString"),
        3: ("endPort", "*int32"),
    },
    "networking.v1.NetworkPolicySpec": {
        1: ("podSelector", "meta.v1.LabelSelector"),
        2: ("ingress", "[]networking.v1.NetworkPolicyIngressRule"),
        3: ("egress", "[]networking.v1.NetworkPolicyEgressRule"),
        4: ("policyTypes", "[]string"),
    },
    "networking.v1.ParentReference": {
        1: ("group", "string"),
        2: ("resource", "string"),
        3: ("namespace", "string"),
        4: ("name", "string"),
    },
    "networking.v1.ServiceBackendPort": {
        1: ("name", "string"),
        2: ("number", "int32"),
    },
    "networking.v1.ServiceCIDR": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "networking.v1.ServiceCIDRSpec"),
        3: ("status", "networking.v1.ServiceCIDRStatus"),
    },
    "networking.v1.ServiceCIDRList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]networking.v1.ServiceCIDR"),
    },
    "networking.v1.ServiceCIDRSpec": {
        1: ("cidrs", "[]string"),
    },
    "networking.v1.ServiceCIDRStatus": {
        1: ("conditions", "[]meta.v1.Condition"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "networking.k8s.io/v1": (
        "networking.v1",
        (
            "IPAddress",
            "IPAddressList",
            "Ingress",
            "IngressClass",
            "IngressClassList",
            "IngressList",
            "NetworkPolicy",
            "NetworkPolicyList",
            "ServiceCIDR",
            "ServiceCIDRList",
        ),
    ),
}
