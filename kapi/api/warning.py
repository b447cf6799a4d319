"""The ``Warning`` response header, as kube-apiserver writes it.

kube builds each value with ``net.NewWarningHeader(299, "-", text)``: the
text quoted by Go's ``strconv.Quote``, so a newline or another control
character in it (a field path from a client's body, a CRD's
``deprecationWarning``) is escaped, never sent raw: a raw newline would split
the header (Django refuses to send one, and the request became a 500).
"""

from __future__ import annotations

from kapi.validation.field import go_quote

__all__ = ["warning_value"]


def warning_value(text: str) -> str:
    """One warning's header value: code 299, agent ``-``."""
    return f"299 - {go_quote(text)}"
