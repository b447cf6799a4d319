"""Validation of names, object metadata and selectors, as kube-apiserver does it.

Every validator returns ``list[kapi.errors.Cause]`` (empty when valid) with
kube's CauseType, field path and message, ready for ``kapi.errors.invalid``.
"""

from kapi.validation.metadata import validate_object_meta, validate_object_meta_update
from kapi.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_qualified_name,
    is_valid_label_value,
    validate_name,
)
from kapi.validation.selector import validate_label_selector

__all__ = [
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_path_segment_name",
    "is_qualified_name",
    "is_valid_label_value",
    "validate_label_selector",
    "validate_name",
    "validate_object_meta",
    "validate_object_meta_update",
]
