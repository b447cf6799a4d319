"""Protobuf message tables of the admissionregistration.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's admissionregistration/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "admissionregistration.v1.ApplyConfiguration": {
        1: ("expression", "string"),
    },
    "admissionregistration.v1.AuditAnnotation": {
        1: ("key", "*string"),
        2: ("valueExpression", "*string"),
    },
    "admissionregistration.v1.ExpressionWarning": {
        2: ("fieldRef", "*string"),
        3: ("warning", "*string"),
    },
    "admissionregistration.v1.JSONPatch": {
        1: ("expression", "string"),
    },
    "admissionregistration.v1.MatchCondition": {
        1: ("name", "*string"),
        2: ("expression", "*string"),
    },
    "admissionregistration.v1.MatchResources": {
        1: ("namespaceSelector", "meta.v1.LabelSelector"),
        2: ("objectSelector", "meta.v1.LabelSelector"),
        3: ("resourceRules", "[]admissionregistration.v1.NamedRuleWithOperations"),
        4: (
            "excludeResourceRules",
            "[]admissionregistration.v1.NamedRuleWithOperations",
        ),
        7: ("matchPolicy", "*string"),
    },
    "admissionregistration.v1.MutatingAdmissionPolicy": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "admissionregistration.v1.MutatingAdmissionPolicySpec"),
    },
    "admissionregistration.v1.MutatingAdmissionPolicyBinding": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "admissionregistration.v1.MutatingAdmissionPolicyBindingSpec"),
    },
    "admissionregistration.v1.MutatingAdmissionPolicyBindingList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]admissionregistration.v1.MutatingAdmissionPolicyBinding"),
    },
    "admissionregistration.v1.MutatingAdmissionPolicyBindingSpec": {
        1: ("policyName", "string"),
        2: ("paramRef", "admissionregistration.v1.ParamRef"),
        3: ("matchResources", "admissionregistration.v1.MatchResources"),
    },
    "admissionregistration.v1.MutatingAdmissionPolicyList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]admissionregistration.v1.MutatingAdmissionPolicy"),
    },
    "admissionregistration.v1.MutatingAdmissionPolicySpec": {
        1: ("paramKind", "admissionregistration.v1.ParamKind"),
        2: ("matchConstraints", "admissionregistration.v1.MatchResources"),
        3: ("variables", "[]admissionregistration.v1.Variable"),
        4: ("mutations", "[]admissionregistration.v1.Mutation"),
        5: ("failurePolicy", "*string"),
        6: ("matchConditions", "[]admissionregistration.v1.MatchCondition"),
        7: ("reinvocationPolicy", "string"),
    },
    "admissionregistration.v1.MutatingWebhook": {
        1: ("name", "*string"),
        2: ("clientConfig", "admissionregistration.v1.WebhookClientConfig"),
        3: ("rules", "[]admissionregistration.v1.RuleWithOperations"),
        4: ("failurePolicy", "*string"),
        5: ("namespaceSelector", "meta.v1.LabelSelector"),
        6: ("sideEffects", "*string"),
        7: ("timeoutSeconds", "*int32"),
        8: ("admissionReviewVersions", "[]string"),
        9: ("matchPolicy", "*string"),
        10: ("reinvocationPolicy", "*string"),
        11: ("objectSelector", "meta.v1.LabelSelector"),
        12: ("matchConditions", "[]admissionregistration.v1.MatchCondition"),
    },
    "admissionregistration.v1.MutatingWebhookConfiguration": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("webhooks", "[]admissionregistration.v1.MutatingWebhook"),
    },
    "admissionregistration.v1.MutatingWebhookConfigurationList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]admissionregistration.v1.MutatingWebhookConfiguration"),
    },
    "admissionregistration.v1.Mutation": {
        2: ("patchType", "*string"),
        3: ("applyConfiguration", "admissionregistration.v1.ApplyConfiguration"),
        4: ("jsonPatch", "admissionregistration.v1.JSONPatch"),
    },
    "admissionregistration.v1.NamedRuleWithOperations": {
        1: ("resourceNames", "[]string"),
        2: ("", "admissionregistration.v1.RuleWithOperations"),
    },
    "admissionregistration.v1.ParamKind": {
        1: ("apiVersion", "string"),
        2: ("kind", "string"),
    },
    "admissionregistration.v1.ParamRef": {
        1: ("name", "string"),
        2: ("namespace", "string"),
        3: ("selector", "meta.v1.LabelSelector"),
        4: ("parameterNotFoundAction", "*string"),
    },
    "admissionregistration.v1.Rule": {
        1: ("apiGroups", "[]string"),
        2: ("apiVersions", "[]string"),
        3: ("resources", "[]string"),
        4: ("scope", "*string"),
    },
    "admissionregistration.v1.RuleWithOperations": {
        1: ("operations", "[]string"),
        2: ("", "admissionregistration.v1.Rule"),
    },
    "admissionregistration.v1.ServiceReference": {
        1: ("namespace", "*string"),
        2: ("name", "*string"),
        3: ("path", "*string"),
        4: ("port", "*int32"),
    },
    "admissionregistration.v1.TypeChecking": {
        1: ("expressionWarnings", "[]admissionregistration.v1.ExpressionWarning"),
    },
    "admissionregistration.v1.ValidatingAdmissionPolicy": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "admissionregistration.v1.ValidatingAdmissionPolicySpec"),
        3: ("status", "admissionregistration.v1.ValidatingAdmissionPolicyStatus"),
    },
    "admissionregistration.v1.ValidatingAdmissionPolicyBinding": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec"),
    },
    "admissionregistration.v1.ValidatingAdmissionPolicyBindingList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]admissionregistration.v1.ValidatingAdmissionPolicyBinding"),
    },
    "admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec": {
        1: ("policyName", "string"),
        2: ("paramRef", "admissionregistration.v1.ParamRef"),
        3: ("matchResources", "admissionregistration.v1.MatchResources"),
        4: ("validationActions", "[]string"),
    },
    "admissionregistration.v1.ValidatingAdmissionPolicyList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]admissionregistration.v1.ValidatingAdmissionPolicy"),
    },
    "admissionregistration.v1.ValidatingAdmissionPolicySpec": {
        1: ("paramKind", "admissionregistration.v1.ParamKind"),
        2: ("matchConstraints", "admissionregistration.v1.MatchResources"),
        3: ("validations", "[]admissionregistration.v1.Validation"),
        4: ("failurePolicy", "*string"),
        5: ("auditAnnotations", "[]admissionregistration.v1.AuditAnnotation"),
        6: ("matchConditions", "[]admissionregistration.v1.MatchCondition"),
        7: ("variables", "[]admissionregistration.v1.Variable"),
    },
    "admissionregistration.v1.ValidatingAdmissionPolicyStatus": {
        1: ("observedGeneration", "int64"),
        2: ("typeChecking", "admissionregistration.v1.TypeChecking"),
        3: ("conditions", "[]meta.v1.Condition"),
    },
    "admissionregistration.v1.ValidatingWebhook": {
        1: ("name", "*string"),
        2: ("clientConfig", "admissionregistration.v1.WebhookClientConfig"),
        3: ("rules", "[]admissionregistration.v1.RuleWithOperations"),
        4: ("failurePolicy", "*string"),
        5: ("namespaceSelector", "meta.v1.LabelSelector"),
        6: ("sideEffects", "*string"),
        7: ("timeoutSeconds", "*int32"),
        8: ("admissionReviewVersions", "[]string"),
        9: ("matchPolicy", "*string"),
        10: ("objectSelector", "meta.v1.LabelSelector"),
        11: ("matchConditions", "[]admissionregistration.v1.MatchCondition"),
    },
    "admissionregistration.v1.ValidatingWebhookConfiguration": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("webhooks", "[]admissionregistration.v1.ValidatingWebhook"),
    },
    "admissionregistration.v1.ValidatingWebhookConfigurationList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]admissionregistration.v1.ValidatingWebhookConfiguration"),
    },
    "admissionregistration.v1.Validation": {
        1: ("expression", "*string"),
        2: ("message", "string"),
        3: ("reason", "*string"),
        4: ("messageExpression", "string"),
    },
    "admissionregistration.v1.Variable": {
        1: ("name", "*string"),
        2: ("expression", "*string"),
    },
    "admissionregistration.v1.WebhookClientConfig": {
        1: ("service", "admissionregistration.v1.ServiceReference"),
        2: ("caBundle", "bytes"),
        3: ("url", "*string"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "admissionregistration.k8s.io/v1": (
        "admissionregistration.v1",
        (
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicyBindingList",
            "MutatingAdmissionPolicyList",
            "MutatingWebhookConfiguration",
            "MutatingWebhookConfigurationList",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingAdmissionPolicyBindingList",
            "ValidatingAdmissionPolicyList",
            "ValidatingWebhookConfiguration",
            "ValidatingWebhookConfigurationList",
        ),
    ),
}
