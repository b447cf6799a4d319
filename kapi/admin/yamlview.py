"""An object as YAML, line by line, with the field owners of each line.

:func:`annotated_lines` writes the YAML itself (block style, as kubectl prints
it) so that it knows which field each line holds, and looks the field up in
the owner tree from ``managedFields``. :func:`highlighted` adds Pygments
syntax highlighting per line. The copyable text is ``dump_yaml`` of the same
object; a test checks both parse to the object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from django.utils.html import escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import YamlLexer

from kapi.admin.managed_fields import OwnerNode

__all__ = ["Line", "annotated_lines", "highlighted", "pygments_css"]


@dataclass
class Line:
    text: str
    owners: list[str]
    html: str = ""


def _scalar(value: Any) -> str:
    out = yaml.safe_dump(value, default_flow_style=True, width=2**31, allow_unicode=True)
    if out.endswith("\n...\n"):
        out = out[:-5]
    return out.rstrip("\n")


def _block(value: str) -> str | None:
    """The block-literal header for a multi-line string, or None to quote it."""
    if "\n" not in value or value[0] in " \n" or "\r" in value:
        return None
    if value.endswith("\n\n"):
        return None
    return "|" if value.endswith("\n") else "|-"


def _owners(node: OwnerNode | None, inherited: list[str]) -> list[str]:
    own = [m for m in (node.managers if node else []) if m not in inherited]
    return inherited + own


def _inherit(node: OwnerNode | None, inherited: list[str]) -> list[str]:
    return inherited + [m for m in (node.whole if node else []) if m not in inherited]


def annotated_lines(obj: dict, tree: OwnerNode | None) -> list[Line]:
    lines: list[Line] = []
    _map(obj, tree, 0, lines, [])
    return lines


def _value(
    prefix: str, value: Any, node: OwnerNode | None, indent: int, lines: list[Line],
    inherited: list[str],
) -> None:
    """``prefix`` is ``<indent>key:`` or ``<indent>-``; writes the value after it."""
    if isinstance(value, dict) and value:
        lines.append(Line(prefix, _owners(node, inherited)))
        _map(value, node, indent + 2, lines, _inherit(node, inherited))
    elif isinstance(value, list) and value:
        lines.append(Line(prefix, _owners(node, inherited)))
        _list(value, node, indent, lines, _inherit(node, inherited))
    elif isinstance(value, str) and _block(value):
        lines.append(Line(f"{prefix} {_block(value)}", _owners(node, inherited)))
        for text in value.rstrip("\n").split("\n"):
            lines.append(Line(" " * (indent + 2) + text if text else "", _owners(node, inherited)))
    else:
        lines.append(Line(f"{prefix} {_scalar(value)}", _owners(node, inherited)))


def _map(
    obj: dict, node: OwnerNode | None, indent: int, lines: list[Line], inherited: list[str]
) -> None:
    for key, value in obj.items():
        child = node.child(f"f:{key}") if node else None
        _value(" " * indent + _scalar(key) + ":", value, child, indent, lines, inherited)


def _list(
    items: list, node: OwnerNode | None, indent: int, lines: list[Line], inherited: list[str]
) -> None:
    for index, item in enumerate(items):
        child = node.item(item, index) if node else None
        if isinstance(item, dict) and item:
            start = len(lines)
            _map(item, child, indent + 2, lines, _inherit(child, inherited))
            first = lines[start]
            first.text = " " * indent + "- " + first.text[indent + 2 :]
            first.owners = _owners(child, first.owners)
        elif isinstance(item, list) and item:
            lines.append(Line(" " * indent + "-", _owners(child, inherited)))
            _list(item, child, indent + 2, lines, _inherit(child, inherited))
        else:
            # Scalars and empty collections go on the dash line.
            _value(" " * indent + "-", item, child, indent, lines, inherited)


_FORMATTER = HtmlFormatter(nowrap=True, classprefix="y-")


def highlighted(lines: list[Line]) -> list[Line]:
    """Fill ``html`` with the syntax-highlighted text of each line."""
    text = "\n".join(line.text for line in lines)
    html = highlight(text, YamlLexer(), _FORMATTER).rstrip("\n").split("\n")
    if len(html) != len(lines):  # pragma: no cover - the lexer keeps lines
        html = [escape(line.text) for line in lines]
    for line, markup in zip(lines, html, strict=True):
        line.html = markup
    return lines


def pygments_css() -> str:
    return _FORMATTER.get_style_defs(".yaml")
