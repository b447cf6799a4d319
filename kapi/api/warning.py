"""The ``Warning`` response header, as kube-apiserver writes it.

kube builds each value with ``net.NewWarningHeader(299, "-", text)``: the
text quoted by Go's ``strconv.Quote``, so a newline or another control
character in it (a field path from a client's body, a CRD's
``deprecationWarning``) is escaped, never sent raw: a raw newline would split
the header (Django refuses to send one, and the request became a 500).
"""

from __future__ import annotations

__all__ = ["go_quote", "warning_value"]

_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
    "\\": "\\\\", '"': '\\"',
}


def _escape(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def go_quote(text: str) -> str:
    """``text`` as Go's ``strconv.Quote`` writes it."""
    if text.isprintable() and "\\" not in text and '"' not in text:
        return f'"{text}"'
    return '"' + "".join(_escape(c) for c in text) + '"'


def warning_value(text: str) -> str:
    """One warning's header value: code 299, agent ``-``."""
    return f"299 - {go_quote(text)}"
