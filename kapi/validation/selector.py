"""metav1.LabelSelector validation: field causes for a selector in an object's spec.

Port of ``ValidateLabelSelector`` / ``ValidateLabelSelectorRequirement`` in
apimachinery ``pkg/apis/meta/v1/validation``; use it where a selector is
stored (``spec.selector``), and ``kapi.selectors.label_selector_from_dict``
to turn a valid one into something that matches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kapi.errors import Cause
from kapi.validation.field import forbidden, index, invalid, required
from kapi.validation.metadata import validate_labels
from kapi.validation.names import is_qualified_name, is_valid_label_value

__all__ = ["validate_label_selector", "validate_label_selector_requirement"]


def validate_label_selector_requirement(
    requirement: Mapping[str, Any],
    field: str,
    *,
    allow_invalid_label_value: bool = False,
) -> list[Cause]:
    causes: list[Cause] = []
    operator = requirement.get("operator", "")
    values = list(requirement.get("values") or [])
    if operator in ("In", "NotIn"):
        if not values:
            causes.append(
                required(
                    f"{field}.values",
                    "must be specified when `operator` is 'In' or 'NotIn'",
                )
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            causes.append(
                forbidden(
                    f"{field}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    else:
        causes.append(
            invalid(f"{field}.operator", operator, "not a valid selector operator")
        )
    label_key = requirement.get("key", "")
    causes += [
        invalid(f"{field}.key", label_key, msg) for msg in is_qualified_name(label_key)
    ]
    if not allow_invalid_label_value:
        for i, value in enumerate(values):
            causes += [
                invalid(index(f"{field}.values", i), value, msg)
                for msg in is_valid_label_value(value)
            ]
    return causes


def validate_label_selector(
    selector: Mapping[str, Any] | None,
    field: str,
    *,
    allow_invalid_label_value: bool = False,
) -> list[Cause]:
    """Causes for ``matchLabels`` and ``matchExpressions`` under ``field``."""
    if selector is None:
        return []
    causes = validate_labels(selector.get("matchLabels"), f"{field}.matchLabels")
    for i, expression in enumerate(selector.get("matchExpressions") or []):
        causes += validate_label_selector_requirement(
            expression,
            index(f"{field}.matchExpressions", i),
            allow_invalid_label_value=allow_invalid_label_value,
        )
    return causes
