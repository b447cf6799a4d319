"""Label and field selectors: parse kube's syntax, match objects.

``parse_label_selector`` / ``label_selector_from_dict`` build a
:class:`LabelSelector`; ``parse_field_selector`` builds a :class:`FieldSelector`.
Both match in Python (``matches``); storage renders them as SQL
(``kapi.storage.selection``). Both raise :class:`SelectorError` carrying kube's
message.
"""

from kapi.selectors.errors import SelectorError
from kapi.selectors.fields import FieldRequirement, FieldSelector, parse_field_selector
from kapi.selectors.labels import (
    LabelSelector,
    Requirement,
    label_selector_from_dict,
    label_selector_matches,
    new_requirement,
    parse_label_selector,
)

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "label_selector_from_dict",
    "label_selector_matches",
    "new_requirement",
    "parse_field_selector",
    "parse_label_selector",
]
