"""Protobuf message tables of the batch/v1 API.

Field numbers and types follow k8s.io/api's batch/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "batch.v1.CronJob": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "batch.v1.CronJobSpec"),
        3: ("status", "batch.v1.CronJobStatus"),
    },
    "batch.v1.CronJobList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]batch.v1.CronJob"),
    },
    "batch.v1.CronJobSpec": {
        1: ("schedule", "*string"),
        2: ("startingDeadlineSeconds", "*int64"),
        3: ("concurrencyPolicy", "string"),
        4: ("suspend", "*bool"),
        5: ("jobTemplate", "batch.v1.JobTemplateSpec"),
        6: ("successfulJobsHistoryLimit", "*int32"),
        7: ("failedJobsHistoryLimit", "*int32"),
        8: ("timeZone", "*string"),
    },
    "batch.v1.CronJobStatus": {
        1: ("active", "[]core.v1.ObjectReference"),
        4: ("lastScheduleTime", "meta.v1.Time"),
        5: ("lastSuccessfulTime", "meta.v1.Time"),
    },
    "batch.v1.Job": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "batch.v1.JobSpec"),
        3: ("status", "batch.v1.JobStatus"),
    },
    "batch.v1.JobCondition": {
        1: ("type", "*string"),
        2: ("status", "*string"),
        3: ("lastProbeTime", "meta.v1.Time"),
        4: ("lastTransitionTime", "meta.v1.Time"),
        5: ("reason", "string"),
        6: ("message", "string"),
    },
    "batch.v1.JobList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]batch.v1.Job"),
    },
    "batch.v1.JobSchedulingConfiguration": {
        1: ("schedulingPolicy", "scheduling.v1alpha3.WorkloadPodGroupSchedulingPolicy"),
        2: (
            "schedulingConstraints",
            "scheduling.v1alpha3.WorkloadPodGroupSchedulingConstraints",
        ),
        3: ("disruptionMode", "scheduling.v1alpha3.WorkloadPodGroupDisruptionMode"),
        4: ("resourceClaims", "[]scheduling.v1alpha3.WorkloadPodGroupResourceClaim"),
    },
    "batch.v1.JobSpec": {
        1: ("parallelism", "*int32"),
        2: ("completions", "*int32"),
        3: ("activeDeadlineSeconds", "*int64"),
        4: ("selector", "meta.v1.LabelSelector"),
        5: ("manualSelector", "*bool"),
        6: ("template", "core.v1.PodTemplateSpec"),
        7: ("backoffLimit", "*int32"),
        8: ("ttlSecondsAfterFinished", "*int32"),
        9: ("completionMode", "*string"),
        10: ("suspend", "*bool"),
        11: ("podFailurePolicy", "batch.v1.PodFailurePolicy"),
        12: ("backoffLimitPerIndex", "*int32"),
        13: ("maxFailedIndexes", "*int32"),
        14: ("podReplacementPolicy", "*string"),
        15: ("managedBy", "*string"),
        16: ("successPolicy", "batch.v1.SuccessPolicy"),
        17: ("scheduling", "batch.v1.JobSchedulingConfiguration"),
    },
    "batch.v1.JobStatus": {
        1: ("conditions", "[]batch.v1.JobCondition"),
        2: ("startTime", "meta.v1.Time"),
        3: ("completionTime", "meta.v1.Time"),
        4: ("active", "int32"),
        5: ("succeeded", "int32"),
        6: ("failed", "int32"),
        7: ("completedIndexes", "string"),
        8: ("uncountedTerminatedPods", "batch.v1.UncountedTerminatedPods"),
        9: ("ready", "*int32"),
        10: ("failedIndexes", "*string"),
        11: ("terminating", "*int32"),
    },
    "batch.v1.JobTemplateSpec": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "batch.v1.JobSpec"),
    },
    "batch.v1.PodFailurePolicy": {
        1: ("rules", "[]batch.v1.PodFailurePolicyRule"),
    },
    "batch.v1.PodFailurePolicyOnExitCodesRequirement": {
        1: ("containerName", "*string"),
        2: ("operator", "*string"),
        3: ("values", "[]int32"),
    },
    "batch.v1.PodFailurePolicyOnPodConditionsPattern": {
        1: ("type", "*string"),
        2: ("status", "*string"),
    },
    "batch.v1.PodFailurePolicyRule": {
        1: ("action", "*string"),
        2: ("onExitCodes", "batch.v1.PodFailurePolicyOnExitCodesRequirement"),
        3: ("onPodConditions", "[]batch.v1.PodFailurePolicyOnPodConditionsPattern"),
    },
    "batch.v1.SuccessPolicy": {
        1: ("rules", "[]batch.v1.SuccessPolicyRule"),
    },
    "batch.v1.SuccessPolicyRule": {
        1: ("succeededIndexes", "*string"),
        2: ("succeededCount", "*int32"),
    },
    "batch.v1.UncountedTerminatedPods": {
        1: ("succeeded", "[]string"),
        2: ("failed", "[]string"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "batch/v1": (
        "batch.v1",
        (
            "CronJob",
            "CronJobList",
            "Job",
            "JobList",
        ),
    ),
}
