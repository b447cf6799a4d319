"""Parsed request options the generic registry acts on (decoded in ``kapi.handlers``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kapi.storage.interface import Preconditions

if TYPE_CHECKING:
    from kapi.selectors import FieldSelector, LabelSelector

__all__ = ["CreateOptions", "DeleteOptions", "ListOptions", "PatchOptions", "UpdateOptions"]


@dataclass
class CreateOptions:
    """``duplicate_fields`` come from decoding the body (their paths; and
    ``yaml_duplicates``, the YAML decoder's words for them, for a YAML or apply
    body); ``warnings`` is filled by the registry (unknown and duplicate fields
    under ``fieldValidation=Warn``)."""

    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = "Warn"
    duplicate_fields: list[str] = field(default_factory=list)
    yaml_duplicates: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class UpdateOptions(CreateOptions):
    subresource: str = ""


@dataclass
class PatchOptions(UpdateOptions):
    """``force`` only for apply (``application/apply-patch+yaml``)."""

    force: bool = False


@dataclass
class DeleteOptions:
    dry_run: bool = False
    preconditions: Preconditions | None = None
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    #: The deprecated ``orphanDependents`` as sent (already folded into the policy).
    orphan_dependents: bool | None = None


@dataclass
class ListOptions:
    """The parsed selectors (storage turns them into its query; watch events
    and cached lists are matched in Python with the same objects)."""

    label_selector: LabelSelector | None = None
    field_selector: FieldSelector | None = None
    limit: int | None = None
    after: tuple[str, str] | None = None
    at_revision: int | None = None
    min_revision: int | None = None
    count_remaining: bool = False
    #: What the page before said remained after it (its continue token), at
    #: the same revision: this page's count is that less its items.
    remaining_before: int | None = None
