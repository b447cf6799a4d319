"""Kubernetes' CEL extension libraries, as functions for the ``cel`` package.

kube-apiserver gives ``x-kubernetes-validations`` rules more than the CEL
standard: the cel-go ``strings``/``lists``/``sets``/``math``/``encoders``
extensions (``cel.stdlib`` provides most of them) and its own libraries in
``apiserver/pkg/cel/library``: ``quantity``, ``url``, ``ip``/``cidr``, regex
``find``/``findAll``, lists (``isSorted``, ``sum``, ``indexOf``, ...),
``format`` and ``semver``. The ``cel`` package calls Python functions with plain values, so
kube's opaque types are tagged maps (``{"@quantity": "3/2"}``): equal values
are equal maps (``quantity("1Gi") == quantity("1024Mi")``), and every method
is a function taking the receiver first (``x.f(a)`` is ``f(x, a)`` in CEL).

Known gaps: ``quantity(...).asString()`` is the canonical decimal (or binary,
for multiples of 1024) form rather than the format the quantity was written
in; ``authz`` (an admission-policy library, not in CRD rules) is not provided.
``semver`` lives in ``kapi.cel.semver``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlsplit

import cel
from cel.stdlib import STDLIB_FUNCTIONS

from kapi import quantity as quantities
from kapi.cel import semver as semverlib
from kapi.cel.rewrite import FUNCTIONS as REWRITE_FUNCTIONS
from kapi.validation import names

__all__ = ["FUNCTIONS", "new_context"]

_QUANTITY = "@quantity"
_URL = "@url"
_IP = "@ip"
_CIDR = "@cidr"
_FORMAT = "@format"


class CelError(ValueError):
    """An evaluation error carrying cel-go's wording."""


# -- quantity -------------------------------------------------------------------


def parse_quantity(text: str) -> Fraction:
    try:
        return quantities.parse(text)
    except quantities.QuantityError as error:
        raise CelError(str(error)) from None


def _q(value: Fraction) -> dict:
    return {_QUANTITY: f"{value.numerator}/{value.denominator}"}


def _qv(obj: Any) -> Fraction:
    if isinstance(obj, dict) and _QUANTITY in obj:
        return Fraction(obj[_QUANTITY])
    if isinstance(obj, int) and not isinstance(obj, bool):
        return Fraction(obj)
    raise TypeError("no such overload")


def quantity(text: str) -> dict:
    return _q(parse_quantity(text))


def is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except CelError:
        return False
    return True



def _as_integer(q: dict) -> int:
    value = _qv(q)
    if value.denominator != 1 or not -(2**63) <= value.numerator < 2**63:
        raise CelError("cannot convert value to integer")
    return value.numerator


QUANTITY_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": quantity,
    "isQuantity": is_quantity,
    "isInteger": lambda q: _qv(q).denominator == 1 and -(2**63) <= _qv(q) < 2**63,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: float(_qv(q)),
    "sign": lambda q: (_qv(q) > 0) - (_qv(q) < 0),
    "add": lambda a, b: _q(_qv(a) + _qv(b)),
    "sub": lambda a, b: _q(_qv(a) - _qv(b)),
    # Shared with semver: the receiver's type picks the overload.
    "isGreaterThan": lambda a, b: (
        semverlib.compare(a, b) == 1 if semverlib.is_semver_value(a) else _qv(a) > _qv(b)
    ),
    "isLessThan": lambda a, b: (
        semverlib.compare(a, b) == -1 if semverlib.is_semver_value(a) else _qv(a) < _qv(b)
    ),
    "compareTo": lambda a, b: (
        semverlib.compare(a, b)
        if semverlib.is_semver_value(a)
        else (_qv(a) > _qv(b)) - (_qv(a) < _qv(b))
    ),
}


# -- url --------------------------------------------------------------------------


def _parse_url(text: str):
    if not isinstance(text, str) or not text or any(c.isspace() for c in text):
        raise CelError(f"URL parse error during conversion from string: {text!r}")
    parts = urlsplit(text)
    # kube: an absolute URI (with scheme) or an absolute path.
    if not parts.scheme and not text.startswith("/"):
        raise CelError(
            f"URL parse error during conversion from string: parse {text!r}: invalid URI for request"
        )
    return parts


def url(text: str) -> dict:
    _parse_url(text)
    return {_URL: text}


def is_url(text: str) -> bool:
    try:
        _parse_url(text)
    except CelError:
        return False
    return True


def _u(obj: Any):
    if isinstance(obj, dict) and _URL in obj:
        return urlsplit(obj[_URL])
    raise TypeError("no such overload")


def _hostname(obj: Any) -> str:
    host = _u(obj).netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[1 : host.index("]")]
    return host.rsplit(":", 1)[0] if ":" in host else host


def _port(obj: Any) -> str:
    host = _u(obj).netloc.rpartition("@")[2]
    if host.startswith("["):
        rest = host[host.index("]") + 1 :]
        return rest[1:] if rest.startswith(":") else ""
    return host.rsplit(":", 1)[1] if ":" in host else ""


URL_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "url": url,
    "isURL": is_url,
    "getScheme": lambda u: _u(u).scheme,
    "getHost": lambda u: _u(u).netloc.rpartition("@")[2],
    "getHostname": _hostname,
    "getPort": _port,
    "getEscapedPath": lambda u: _u(u).path,
    "getQuery": lambda u: parse_qs(_u(u).query, keep_blank_values=True),
}


# -- ip / cidr ------------------------------------------------------------------------


def _parse_ip(text: Any):
    if not isinstance(text, str) or "%" in text:
        raise CelError(f"IP Address {text!r} parse error during conversion from string")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise CelError(
            f"IP Address {text!r} parse error during conversion from string: ParseAddr({text!r}): unable to parse IP"
        ) from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        raise CelError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


def ip(value: Any) -> dict:
    if isinstance(value, dict) and _CIDR in value:  # cidr(...).ip()
        return {_IP: value[_CIDR].split("/")[0]}
    return {_IP: str(_parse_ip(value))}


def is_ip(text: Any) -> bool:
    try:
        _parse_ip(text)
    except CelError:
        return False
    return True


def _i(obj: Any):
    if isinstance(obj, dict) and _IP in obj:
        return ipaddress.ip_address(obj[_IP])
    if isinstance(obj, str):
        return _parse_ip(obj)
    raise TypeError("no such overload")


def _parse_cidr(text: Any):
    if not isinstance(text, str) or "/" not in text:
        raise CelError(
            f"network address parse error during conversion from string: {text!r}"
        )
    address, _, length = text.partition("/")
    _parse_ip(address)
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise CelError(
            f"network address parse error during conversion from string: {text!r}"
        ) from None
    if not length.isdigit():
        raise CelError(
            f"network address parse error during conversion from string: {text!r}"
        )
    return ipaddress.ip_address(address), network


def cidr(text: Any) -> dict:
    address, network = _parse_cidr(text)
    return {_CIDR: f"{address}/{network.prefixlen}"}


def is_cidr(text: Any) -> bool:
    try:
        _parse_cidr(text)
    except CelError:
        return False
    return True


def _c(obj: Any):
    if isinstance(obj, dict) and _CIDR in obj:
        return ipaddress.ip_network(obj[_CIDR], strict=False)
    if isinstance(obj, str):
        return _parse_cidr(obj)[1]
    raise TypeError("no such overload")


def _contains_cidr(outer: Any, inner: Any) -> bool:
    a, b = _c(outer), _c(inner)
    return a.version == b.version and b.subnet_of(a)


def _contains_ip(net: Any, address: Any) -> bool:
    n, a = _c(net), _i(address)
    return n.version == a.version and a in n


def _is_canonical(text: str) -> bool:
    return str(_parse_ip(text)) == text


def string_of(value: Any) -> str:
    """``string(ip)``, ``string(cidr)``, ``string(url)``, ``string(quantity)``."""
    if isinstance(value, dict):
        for tag in (_IP, _CIDR, _URL, semverlib.SEMVER):
            if tag in value:
                return value[tag]
        if _QUANTITY in value:
            return quantities.canonical(_qv(value))
    raise TypeError("no such overload")


IP_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "ip": ip,
    "isIP": is_ip,
    "ip.isCanonical": _is_canonical,
    "family": lambda a: _i(a).version,
    "isUnspecified": lambda a: _i(a).is_unspecified,
    "isLoopback": lambda a: _i(a).is_loopback,
    "isLinkLocalMulticast": lambda a: (
        _i(a).is_multicast
        and (
            _i(a) in ipaddress.ip_network("224.0.0.0/24")
            if _i(a).version == 4
            else _i(a) in ipaddress.ip_network("ff02::/16")
        )
    ),
    "isLinkLocalUnicast": lambda a: _i(a).is_link_local and not _i(a).is_multicast,
    "isGlobalUnicast": lambda a: (
        not (
            _i(a).is_unspecified
            or _i(a).is_loopback
            or _i(a).is_multicast
            or _i(a).is_link_local
            or (
                _i(a).version == 4 and _i(a) == ipaddress.IPv4Address("255.255.255.255")
            )
        )
    ),
    "cidr": cidr,
    "isCIDR": is_cidr,
    "containsIP": _contains_ip,
    "containsCIDR": _contains_cidr,
    "masked": lambda c: {_CIDR: str(_c(c))},
    "prefixLength": lambda c: _c(c).prefixlen,
    "string": string_of,
}


# -- regex, lists, strings --------------------------------------------------------------


def _regex(pattern: str):
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise CelError(f"invalid regex {pattern!r}: {exc}") from None


def find(text: str, pattern: str) -> str:
    match = _regex(pattern).search(text)
    return match.group(0) if match else ""


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    out = [m.group(0) for m in _regex(pattern).finditer(text)]
    return out if limit < 0 else out[:limit]


def _list_or(name: str, on_list: Callable[..., Any]) -> Callable[..., Any]:
    """A function that is kube's list overload for lists and the cel-go strings
    overload (from ``cel.stdlib``) otherwise."""
    other = STDLIB_FUNCTIONS.get(name)

    def call(receiver: Any, *args: Any) -> Any:
        if isinstance(receiver, list):
            return on_list(receiver, *args)
        if other is None:
            raise TypeError("no such overload")
        return other(receiver, *args)

    return call


def _index_of(items: list, value: Any) -> int:
    return next((i for i, item in enumerate(items) if item == value), -1)


def _last_index_of(items: list, value: Any) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if items[i] == value), -1)


def _is_sorted(items: list) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _aggregate(func: Callable[[list], Any], empty_error: str) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        values = args[0] if len(args) == 1 and isinstance(args[0], list) else list(args)
        if not values:
            raise CelError(empty_error)
        return func(values)

    return call


_FORMAT_VERB = re.compile(r"%(\.\d+)?([sdfeboxX%])")


def string_format(template: str, args: list) -> str:
    """cel-go ``strings.format``: ``"%s has %d items".format([name, n])``."""
    values = iter(args)

    def verb(match: re.Match) -> str:
        precision, kind = match.group(1), match.group(2)
        if kind == "%":
            return "%"
        try:
            value = next(values)
        except StopIteration:
            raise CelError(f"index {len(args)} out of range") from None
        if kind == "s":
            return _format_s(value)
        if kind == "d":
            return str(int(value))
        if kind in "fe":
            digits = int(precision[1:]) if precision else 6
            return f"{float(value):.{digits}{kind}}"
        return format(int(value), {"b": "b", "o": "o", "x": "x", "X": "X"}[kind])

    return _FORMAT_VERB.sub(verb, template)


def _format_s(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_format_s(v) for v in value) + "]"
    if isinstance(value, dict):
        if any(tag in value for tag in (_IP, _CIDR, _URL, _QUANTITY)):
            return string_of(value)
        return (
            "{"
            + ", ".join(f"{_format_s(k)}: {_format_s(v)}" for k, v in value.items())
            + "}"
        )
    if value is None:
        return "null"
    return str(value)


# -- format ------------------------------------------------------------------------------

_NAMED_FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": names.is_dns1123_label,
    "dns1123Subdomain": names.is_dns1123_subdomain,
    "dns1035Label": names.is_dns1035_label,
    "qualifiedName": names.is_qualified_name,
    "labelValue": names.is_valid_label_value,
    "dns1123LabelPrefix": lambda v: names.name_is_dns_label(v, prefix=True),
    "dns1123SubdomainPrefix": lambda v: names.name_is_dns_subdomain(v, prefix=True),
    "uri": lambda v: [] if is_url(v) else ["invalid URI"],
    "uuid": lambda v: (
        []
        if re.fullmatch(r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}", v)
        else ["does not match the UUID format"]
    ),
    "byte": lambda v: (
        []
        if re.fullmatch(
            r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", v
        )
        else ["invalid base64"]
    ),
    "date": lambda v: [] if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) else ["invalid date"],
    "datetime": lambda v: (
        []
        if re.fullmatch(
            r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", v
        )
        else ["invalid datetime"]
    ),
}


def _format_named(name: str) -> Any:
    if name in _NAMED_FORMATS:
        return cel.OptionalValue.of({_FORMAT: name})
    return cel.OptionalValue.none()


def _validate(fmt: Any, value: str) -> Any:
    if not (isinstance(fmt, dict) and fmt.get(_FORMAT) in _NAMED_FORMATS):
        raise TypeError("no such overload")
    problems = _NAMED_FORMATS[fmt[_FORMAT]](value)
    return (
        cel.OptionalValue.of(list(problems)) if problems else cel.OptionalValue.none()
    )


FORMAT_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "format.named": _format_named,
    "validate": _validate,
    **{
        f"format.{name}": (lambda n: lambda: {_FORMAT: n})(name)
        for name in _NAMED_FORMATS
    },
}


FUNCTIONS: dict[str, Callable[..., Any]] = {
    **STDLIB_FUNCTIONS,
    **REWRITE_FUNCTIONS,
    **QUANTITY_FUNCTIONS,
    **semverlib.SEMVER_FUNCTIONS,
    **URL_FUNCTIONS,
    **IP_FUNCTIONS,
    **FORMAT_FUNCTIONS,
    "find": find,
    "findAll": find_all,
    "indexOf": _list_or("indexOf", _index_of),
    "lastIndexOf": _list_or("lastIndexOf", _last_index_of),
    "isSorted": _is_sorted,
    "sum": lambda items: sum(items) if items else 0,
    "min": _aggregate(min, "min called on empty list"),
    "max": _aggregate(max, "max called on empty list"),
    "format": string_format,
}


def new_context(variables: dict[str, Any]) -> cel.Context:
    """A context with kube's libraries and these variables (not thread-safe:
    one per evaluation)."""
    return cel.Context(variables=variables, functions=FUNCTIONS)
