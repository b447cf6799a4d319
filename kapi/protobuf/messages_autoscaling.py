"""Protobuf message tables of the autoscaling/v1, autoscaling/v2 APIs.

Field numbers and types follow k8s.io/api's autoscaling/v1, autoscaling/v2 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "autoscaling.v1.ContainerResourceMetricSource": {
        1: ("name", "*string"),
        2: ("targetAverageUtilization", "*int32"),
        3: ("targetAverageValue", "resource.Quantity"),
        5: ("container", "*string"),
    },
    "autoscaling.v1.ContainerResourceMetricStatus": {
        1: ("name", "*string"),
        2: ("currentAverageUtilization", "*int32"),
        3: ("currentAverageValue", "resource.Quantity"),
        4: ("container", "*string"),
    },
    "autoscaling.v1.CrossVersionObjectReference": {
        1: ("kind", "*string"),
        2: ("name", "*string"),
        3: ("apiVersion", "string"),
    },
    "autoscaling.v1.ExternalMetricSource": {
        1: ("metricName", "*string"),
        2: ("metricSelector", "meta.v1.LabelSelector"),
        3: ("targetValue", "resource.Quantity"),
        4: ("targetAverageValue", "resource.Quantity"),
    },
    "autoscaling.v1.ExternalMetricStatus": {
        1: ("metricName", "*string"),
        2: ("metricSelector", "meta.v1.LabelSelector"),
        3: ("currentValue", "resource.Quantity"),
        4: ("currentAverageValue", "resource.Quantity"),
    },
    "autoscaling.v1.HorizontalPodAutoscaler": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "autoscaling.v1.HorizontalPodAutoscalerSpec"),
        3: ("status", "autoscaling.v1.HorizontalPodAutoscalerStatus"),
    },
    "autoscaling.v1.HorizontalPodAutoscalerCondition": {
        1: ("type", "*string"),
        2: ("status", "*string"),
        3: ("lastTransitionTime", "meta.v1.Time"),
        4: ("reason", "string"),
        5: ("message", "string"),
        6: ("observedGeneration", "*int64"),
    },
    "autoscaling.v1.HorizontalPodAutoscalerList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]autoscaling.v1.HorizontalPodAutoscaler"),
    },
    "autoscaling.v1.HorizontalPodAutoscalerSpec": {
        1: ("scaleTargetRef", "autoscaling.v1.CrossVersionObjectReference"),
        2: ("minReplicas", "*int32"),
        3: ("maxReplicas", "*int32"),
        4: ("targetCPUUtilizationPercentage", "*int32"),
    },
    "autoscaling.v1.HorizontalPodAutoscalerStatus": {
        1: ("observedGeneration", "*int64"),
        2: ("lastScaleTime", "meta.v1.Time"),
        3: ("currentReplicas", "*int32"),
        4: ("desiredReplicas", "*int32"),
        5: ("currentCPUUtilizationPercentage", "*int32"),
    },
    "autoscaling.v1.MetricSpec": {
        1: ("type", "*string"),
        2: ("object", "autoscaling.v1.ObjectMetricSource"),
        3: ("pods", "autoscaling.v1.PodsMetricSource"),
        4: ("resource", "autoscaling.v1.ResourceMetricSource"),
        5: ("external", "autoscaling.v1.ExternalMetricSource"),
        7: ("containerResource", "autoscaling.v1.ContainerResourceMetricSource"),
    },
    "autoscaling.v1.MetricStatus": {
        1: ("type", "*string"),
        2: ("object", "autoscaling.v1.ObjectMetricStatus"),
        3: ("pods", "autoscaling.v1.PodsMetricStatus"),
        4: ("resource", "autoscaling.v1.ResourceMetricStatus"),
        5: ("external", "autoscaling.v1.ExternalMetricStatus"),
        7: ("containerResource", "autoscaling.v1.ContainerResourceMetricStatus"),
    },
    "autoscaling.v1.ObjectMetricSource": {
        1: ("target", "autoscaling.v1.CrossVersionObjectReference"),
        2: ("metricName", "*string"),
        3: ("targetValue", "resource.Quantity"),
        4: ("selector", "meta.v1.LabelSelector"),
        5: ("averageValue", "resource.Quantity"),
    },
    "autoscaling.v1.ObjectMetricStatus": {
        1: ("target", "autoscaling.v1.CrossVersionObjectReference"),
        2: ("metricName", "*string"),
        3: ("currentValue", "resource.Quantity"),
        4: ("selector", "meta.v1.LabelSelector"),
        5: ("averageValue", "resource.Quantity"),
    },
    "autoscaling.v1.PodsMetricSource": {
        1: ("metricName", "*string"),
        2: ("targetAverageValue", "resource.Quantity"),
        3: ("selector", "meta.v1.LabelSelector"),
    },
    "autoscaling.v1.PodsMetricStatus": {
        1: ("metricName", "*string"),
        2: ("currentAverageValue", "resource.Quantity"),
        3: ("selector", "meta.v1.LabelSelector"),
    },
    "autoscaling.v1.ResourceMetricSource": {
        1: ("name", "*string"),
        2: ("targetAverageUtilization", "*int32"),
        3: ("targetAverageValue", "resource.Quantity"),
    },
    "autoscaling.v1.ResourceMetricStatus": {
        1: ("name", "*string"),
        2: ("currentAverageUtilization", "*int32"),
        3: ("currentAverageValue", "resource.Quantity"),
    },
    "autoscaling.v1.Scale": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "autoscaling.v1.ScaleSpec"),
        3: ("status", "autoscaling.v1.ScaleStatus"),
    },
    "autoscaling.v1.ScaleSpec": {
        1: ("replicas", "int32"),
    },
    "autoscaling.v1.ScaleStatus": {
        1: ("replicas", "*int32"),
        2: ("selector", "string"),
    },
    "autoscaling.v2.ContainerResourceMetricSource": {
        1: ("name", "*string"),
        2: ("target", "autoscaling.v2.MetricTarget"),
        3: ("container", "*string"),
    },
    "autoscaling.v2.ContainerResourceMetricStatus": {
        1: ("name", "*string"),
        2: ("current", "autoscaling.v2.MetricValueStatus"),
        3: ("container", "*string"),
    },
    "autoscaling.v2.CrossVersionObjectReference": {
        1: ("kind", "*string"),
        2: ("name", "*string"),
        3: ("apiVersion", "string"),
    },
    "autoscaling.v2.ExternalMetricSource": {
        1: ("metric", "autoscaling.v2.MetricIdentifier"),
        2: ("target", "autoscaling.v2.MetricTarget"),
    },
    "autoscaling.v2.ExternalMetricStatus": {
        1: ("metric", "autoscaling.v2.MetricIdentifier"),
        2: ("current", "autoscaling.v2.MetricValueStatus"),
    },
    "autoscaling.v2.HPAScalingPolicy": {
        1: ("type", "*string"),
        2: ("value", "*int32"),
        3: ("periodSeconds", "*int32"),
    },
    "autoscaling.v2.HPAScalingRules": {
        1: ("selectPolicy", "*string"),
        2: ("policies", "[]autoscaling.v2.HPAScalingPolicy"),
        3: ("stabilizationWindowSeconds", "*int32"),
        4: ("tolerance", "resource.Quantity"),
    },
    "autoscaling.v2.HorizontalPodAutoscaler": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "autoscaling.v2.HorizontalPodAutoscalerSpec"),
        3: ("status", "autoscaling.v2.HorizontalPodAutoscalerStatus"),
    },
    "autoscaling.v2.HorizontalPodAutoscalerBehavior": {
        1: ("scaleUp", "autoscaling.v2.HPAScalingRules"),
        2: ("scaleDown", "autoscaling.v2.HPAScalingRules"),
    },
    "autoscaling.v2.HorizontalPodAutoscalerCondition": {
        1: ("type", "*string"),
        2: ("status", "*string"),
        3: ("lastTransitionTime", "meta.v1.Time"),
        4: ("reason", "string"),
        5: ("message", "string"),
        6: ("observedGeneration", "*int64"),
    },
    "autoscaling.v2.HorizontalPodAutoscalerList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]autoscaling.v2.HorizontalPodAutoscaler"),
    },
    "autoscaling.v2.HorizontalPodAutoscalerSpec": {
        1: ("scaleTargetRef", "autoscaling.v2.CrossVersionObjectReference"),
        2: ("minReplicas", "*int32"),
        3: ("maxReplicas", "*int32"),
        4: ("metrics", "[]autoscaling.v2.MetricSpec"),
        5: ("behavior", "autoscaling.v2.HorizontalPodAutoscalerBehavior"),
    },
    "autoscaling.v2.HorizontalPodAutoscalerStatus": {
        1: ("observedGeneration", "*int64"),
        2: ("lastScaleTime", "meta.v1.Time"),
        3: ("currentReplicas", "int32"),
        4: ("desiredReplicas", "*int32"),
        5: ("currentMetrics", "[]autoscaling.v2.MetricStatus"),
        6: ("conditions", "[]autoscaling.v2.HorizontalPodAutoscalerCondition"),
    },
    "autoscaling.v2.MetricIdentifier": {
        1: ("name", "*string"),
        2: ("selector", "meta.v1.LabelSelector"),
    },
    "autoscaling.v2.MetricSpec": {
        1: ("type", "*string"),
        2: ("object", "autoscaling.v2.ObjectMetricSource"),
        3: ("pods", "autoscaling.v2.PodsMetricSource"),
        4: ("resource", "autoscaling.v2.ResourceMetricSource"),
        5: ("external", "autoscaling.v2.ExternalMetricSource"),
        7: ("containerResource", "autoscaling.v2.ContainerResourceMetricSource"),
    },
    "autoscaling.v2.MetricStatus": {
        1: ("type", "*string"),
        2: ("object", "autoscaling.v2.ObjectMetricStatus"),
        3: ("pods", "autoscaling.v2.PodsMetricStatus"),
        4: ("resource", "autoscaling.v2.ResourceMetricStatus"),
        5: ("external", "autoscaling.v2.ExternalMetricStatus"),
        7: ("containerResource", "autoscaling.v2.ContainerResourceMetricStatus"),
    },
    "autoscaling.v2.MetricTarget": {
        1: ("type", "*string"),
        2: ("value", "resource.Quantity"),
        3: ("averageValue", "resource.Quantity"),
        4: ("averageUtilization", "*int32"),
    },
    "autoscaling.v2.MetricValueStatus": {
        1: ("value", "resource.Quantity"),
        2: ("averageValue", "resource.Quantity"),
        3: ("averageUtilization", "*int32"),
    },
    "autoscaling.v2.ObjectMetricSource": {
        1: ("describedObject", "autoscaling.v2.CrossVersionObjectReference"),
        2: ("target", "autoscaling.v2.MetricTarget"),
        3: ("metric", "autoscaling.v2.MetricIdentifier"),
    },
    "autoscaling.v2.ObjectMetricStatus": {
        1: ("metric", "autoscaling.v2.MetricIdentifier"),
        2: ("current", "autoscaling.v2.MetricValueStatus"),
        3: ("describedObject", "autoscaling.v2.CrossVersionObjectReference"),
    },
    "autoscaling.v2.PodsMetricSource": {
        1: ("metric", "autoscaling.v2.MetricIdentifier"),
        2: ("target", "autoscaling.v2.MetricTarget"),
    },
    "autoscaling.v2.PodsMetricStatus": {
        1: ("metric", "autoscaling.v2.MetricIdentifier"),
        2: ("current", "autoscaling.v2.MetricValueStatus"),
    },
    "autoscaling.v2.ResourceMetricSource": {
        1: ("name", "*string"),
        2: ("target", "autoscaling.v2.MetricTarget"),
    },
    "autoscaling.v2.ResourceMetricStatus": {
        1: ("name", "*string"),
        2: ("current", "autoscaling.v2.MetricValueStatus"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "autoscaling/v1": (
        "autoscaling.v1",
        (
            "HorizontalPodAutoscaler",
            "HorizontalPodAutoscalerList",
            "Scale",
        ),
    ),
    "autoscaling/v2": (
        "autoscaling.v2",
        (
            "HorizontalPodAutoscaler",
            "HorizontalPodAutoscalerList",
        ),
    ),
}
