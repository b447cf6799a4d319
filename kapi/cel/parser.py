"""A CEL parser producing a small AST, for the static checks the ``cel``
package cannot do: which functions and variables a rule references and what it
may cost (``kapi.cel.cost``). Evaluation stays with the ``cel`` package; this
parser only needs to accept what it accepts and see the shape of the rule.

Nodes are tuples: ``("lit", value, source)``, ``("ident", name)``,
``("select", operand, field, test_only, optional)`` (``optional`` for ``.?``),
``("index", operand, index, optional)`` (``[?``),
``("call", name, target_or_None, [args])``, ``("list", [items])``,
``("map", [(key, value)])``, ``("struct", name, [(field, value)])``,
``("cond", test, then, else)`` and ``("macro", name, target, var, [args])``
for ``all``/``exists``/``exists_one``/``map``/``filter`` (``has`` becomes a
``select`` with ``test_only``). Operators are calls named as in CEL
(``_+_``, ``_&&_``, ``!_``, ``-_``, ``@in``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ParseError", "parse"]

Node = tuple


class ParseError(ValueError):
    pass


_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?|[bB])?(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[uU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|\.\?|\[\?|[-+*/%!<>?:.,()\[\]{}])
    """,
    re.VERBOSE,
)
_RESERVED = {"in", "true", "false", "null"}
MACROS = {"all": 2, "exists": 2, "exists_one": 2, "map": (2, 3), "filter": 2}


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise ParseError(f"Syntax error: token recognition error at: '{text[pos]}'")
        pos = match.end()
        kind = match.lastgroup
        if kind == "ws":
            continue
        value = match.group(kind)
        if kind == "ident" and value == "in":
            kind = "op"
        out.append((kind, value))
    out.append(("eof", ""))
    return out


def _string_value(token: str) -> Any:
    prefix = re.match(r"[rRbB]*", token).group(0)
    body = token[len(prefix) :]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[0]
    body = body[len(quote) : -len(quote)]
    raw = "r" in prefix.lower()
    if not raw:
        body = re.sub(
            r"\\(.)",
            lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)),
            body,
        )
    return body.encode() if "b" in prefix.lower() else body


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self, offset: int = 0) -> tuple[str, str]:
        return self.tokens[min(self.pos + offset, len(self.tokens) - 1)]

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def accept(self, value: str) -> bool:
        if self.peek() == ("op", value):
            self.pos += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            got = self.peek()[1] or "<EOF>"
            raise ParseError(
                f"Syntax error: mismatched input '{got}' expecting '{value}'"
            )

    def parse(self) -> Node:
        node = self.expr()
        if self.peek()[0] != "eof":
            raise ParseError(f"Syntax error: extraneous input '{self.peek()[1]}'")
        return node

    def expr(self) -> Node:
        test = self.binary(0)
        if self.accept("?"):
            then = self.binary(0)
            self.expect(":")
            return ("cond", test, then, self.expr())
        return test

    _LEVELS = (
        ("||",),
        ("&&",),
        ("==", "!=", "<", "<=", ">", ">=", "in"),
        ("+", "-"),
        ("*", "/", "%"),
    )

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in self._LEVELS[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            name = "@in" if op == "in" else f"_{op}_"
            left = ("call", name, None, [left, right])
        return left

    def unary(self) -> Node:
        if self.accept("!"):
            return ("call", "!_", None, [self.unary()])
        if self.accept("-"):
            return ("call", "-_", None, [self.unary()])
        return self.member()

    def member(self) -> Node:
        node = self.primary()
        while True:
            if self.peek()[0] == "op" and self.peek()[1] in (".", ".?"):
                optional = self.take()[1] == ".?"
                kind, name = self.take()
                if kind != "ident":
                    raise ParseError(
                        f"Syntax error: no viable alternative at input '.{name}'"
                    )
                if not optional and self.accept("("):
                    args = self.args(")")
                    node = self.call(name, node, args)
                else:
                    node = ("select", node, name, False, optional)
            elif self.peek()[0] == "op" and self.peek()[1] in ("[", "[?"):
                optional = self.take()[1] == "[?"
                index = self.expr()
                self.expect("]")
                node = ("index", node, index, optional)
            elif self.peek() == ("op", "{") and node[0] in ("ident", "select"):
                self.take()
                fields = []
                while not self.accept("}"):
                    kind, name = self.take()
                    self.expect(":")
                    fields.append((name, self.expr()))
                    if not self.accept(","):
                        self.expect("}")
                        break
                node = ("struct", node, fields)
            else:
                return node

    def call(self, name: str, target: Node | None, args: list[Node]) -> Node:
        if target is not None and name in MACROS and args and args[0][0] == "ident":
            return ("macro", name, target, args[0][1], args[1:])
        if (
            target is None
            and name == "has"
            and len(args) == 1
            and args[0][0] == "select"
        ):
            return ("select", args[0][1], args[0][2], True, False)
        return ("call", name, target, args)

    def args(self, close: str) -> list[Node]:
        out: list[Node] = []
        if self.accept(close):
            return out
        while True:
            out.append(self.expr())
            if self.accept(close):
                return out
            self.expect(",")
            if self.accept(close):
                return out

    def primary(self) -> Node:
        kind, value = self.take()
        if kind == "number":
            text = value.rstrip("uU")
            if text.lower().startswith("0x"):
                return ("lit", int(text, 16), value)
            if any(c in text for c in ".eE"):
                return ("lit", float(text), value)
            return ("lit", int(text), value)
        if kind == "string":
            return ("lit", _string_value(value), value)
        if kind == "ident":
            if value in ("true", "false"):
                return ("lit", value == "true", value)
            if value == "null":
                return ("lit", None, value)
            if self.accept("("):
                return self.call(value, None, self.args(")"))
            return ("ident", value)
        if (kind, value) == ("op", "."):
            return self.primary()
        if (kind, value) == ("op", "("):
            node = self.expr()
            self.expect(")")
            return node
        if (kind, value) == ("op", "["):
            return ("list", self.args("]"))
        if (kind, value) == ("op", "{"):
            entries = []
            while not self.accept("}"):
                key = self.expr()
                self.expect(":")
                entries.append((key, self.expr()))
                if not self.accept(","):
                    self.expect("}")
                    break
            return ("map", entries)
        raise ParseError(f"Syntax error: mismatched input '{value or '<EOF>'}'")


def parse(text: str) -> Node:
    """The AST of ``text``; ``ParseError`` with a cel-go-like message if it is not CEL."""
    return _Parser(text).parse()


def walk(node: Any):
    """Every node of the tree, depth first."""
    if isinstance(node, tuple) and node and isinstance(node[0], str):
        yield node
        for part in node[1:]:
            yield from walk(part)
    elif isinstance(node, (list, tuple)):
        for part in node:
            yield from walk(part)
