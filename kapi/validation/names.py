"""Name syntax: DNS-1123 labels and subdomains, path segments, qualified names.

Ports of apimachinery ``pkg/api/validate/content`` (``dns.go``, ``kube.go``,
``path.go``) and ``pkg/api/validation/generic.go``. Each ``is_*`` check returns
kube's list of detail strings (empty when valid); ``validate_name`` wraps them
into ``Invalid`` causes for one field. Lengths are measured in UTF-8 bytes, as
Go's ``len`` does, and regexes must match the whole string (Go's ``^...$``
has no trailing-newline loophole, so we use ``fullmatch``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kapi.errors import Cause
from kapi.validation.field import invalid

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "LABEL_VALUE_MAX_LENGTH",
    "NAME_RULES",
    "QUALIFIED_NAME_MAX_LENGTH",
    "empty_error",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_path_segment_name",
    "is_path_segment_prefix",
    "is_qualified_name",
    "is_valid_label_value",
    "max_len_error",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "name_is_path_segment",
    "regex_error",
    "validate_name",
]

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)

# re.ASCII keeps [a-z0-9] from meaning anything wider; Go's regexp is byte-exact here.
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT, re.ASCII)
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT, re.ASCII)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT, re.ASCII)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT, re.ASCII)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT, re.ASCII)


def _byte_len(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def max_len_error(length: int, unit: str = "characters") -> str:
    """kube words DNS limits in characters but label key/value limits in bytes."""
    return f"must be no more than {length} {unit}"


def empty_error() -> str:
    return "must be non-empty"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def is_dns1123_label(value: str) -> list[str]:
    errs: list[str] = []
    if _byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            # A valid subdomain but not a label: length was checked, so it is the dots.
            errs.append("must not contain dots")
        else:
            errs.append(
                regex_error(
                    _DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"
                )
            )
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """An RFC 1035 label: starts with a letter (kube's ``IsDNS1035Label``)."""
    errs: list[str] = []
    if _byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(
            regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123")
        )
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if _byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(
            regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com")
        )
    return errs


def is_path_segment_prefix(name: str) -> list[str]:
    """Safe as the start of a URL path segment (no ``/`` or ``%``)."""
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def is_path_segment_name(name: str) -> list[str]:
    """``path.ValidatePathSegmentName``: not ``.``/``..``, no ``/`` or ``%``.

    Like kube, this neither rejects the empty string nor limits the length.
    """
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return is_path_segment_prefix(name)


def is_qualified_name(value: str) -> list[str]:
    """A label key: ``[prefix/]name``, prefix a DNS subdomain, name <= 63 bytes."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(
                _LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"
            )
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif _byte_len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH, "bytes"))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(
            "name part "
            + regex_error(
                _LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"
            )
        )
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs: list[str] = []
    if _byte_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH, "bytes"))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(
            regex_error(
                _LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"
            )
        )
    return errs


def _mask_trailing_dash(name: str) -> str:
    # generateName gets random characters appended, so a trailing '-' is fine there;
    # kube swaps the last two characters for "a" (sic: it drops two, adds one).
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool = False) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool = False) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool = False) -> list[str]:
    return is_path_segment_prefix(name) if prefix else is_path_segment_name(name)


NAME_RULES: dict[str, Callable[[str, bool], list[str]]] = {
    "label": name_is_dns_label,
    "path-segment": name_is_path_segment,
    "subdomain": name_is_dns_subdomain,
}


def validate_name(
    name: str, rule: str, field: str, *, prefix: bool = False
) -> list[Cause]:
    """``Invalid`` causes for ``name`` under ``rule`` (``subdomain``, ``label`` or
    ``path-segment``); ``prefix=True`` checks a ``generateName``."""
    try:
        check = NAME_RULES[rule]
    except KeyError:
        raise ValueError(
            f"unknown name rule {rule!r}; expected one of {sorted(NAME_RULES)}"
        ) from None
    return [invalid(field, name, msg) for msg in check(name, prefix)]
