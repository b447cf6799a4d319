"""The committed ``messages_*`` tables are exactly what ``kapi.protobuf.generate``
renders: each file is read back into a description (its ``MESSAGES`` and
``KINDS``), rendered again and compared byte for byte, so a hand edit the
generator would not make (a comment, reordered fields or messages, other
formatting, a missing header) fails here. Whether the *values* agree with
Kubernetes is ``test_upstream.py``'s job. Regenerate with::

    python -m kapi.protobuf.generate PATH/TO/SOURCES kapi/protobuf
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kapi.protobuf import generate, tables

PACKAGE = Path(generate.__file__).resolve().parent


@pytest.mark.parametrize("module", generate.MODULES)
def test_tables_are_the_generators_output(module: str) -> None:
    text = (PACKAGE / f"messages_{module}.py").read_text()
    rendered = generate.render(generate.committed(module, text))
    assert text == rendered, (
        f"messages_{module}.py is not what kapi/protobuf/generate.py renders: "
        "regenerate it instead of editing it"
    )


@pytest.mark.parametrize(
    "edit",
    [
        # a comment added by hand
        lambda text: text.replace(
            '    "apps.v1.DaemonSet": {', '    # why\n    "apps.v1.DaemonSet": {'
        ),
        # two fields swapped
        lambda text: text.replace(
            '        1: ("metadata", "meta.v1.ObjectMeta"),\n'
            '        2: ("data", "runtime.RawExtension"),',
            '        2: ("data", "runtime.RawExtension"),\n'
            '        1: ("metadata", "meta.v1.ObjectMeta"),',
        ),
        # a message appended out of order
        lambda text: text.replace(
            "\n}\n\nKINDS", '\n    "apps.v1.Aardvark": {},\n}\n\nKINDS'
        ),
        # the generated marker dropped
        lambda text: text.partition("\n")[2],
    ],
    ids=["comment", "field-order", "message-order", "marker"],
)
def test_a_hand_edit_is_caught(edit) -> None:
    """The comparison above is not vacuous: each kind of hand edit to
    messages_apps.py makes the re-rendered text differ from the edited text."""
    text = (PACKAGE / "messages_apps.py").read_text()
    edited = edit(text)
    assert edited != text
    assert generate.render(generate.committed("apps", edited)) != edited


def test_every_table_module_is_generated_and_loaded() -> None:
    """No hand-written table hides beside the generated ones, every one starts with
    the generated marker, and the kind registry loads every generated module."""
    on_disk = {path.name for path in PACKAGE.glob("messages_*.py")}
    assert on_disk == {f"messages_{module}.py" for module in generate.MODULES}
    for name in on_disk:
        assert (PACKAGE / name).read_text().startswith(generate.MARKER + "\n"), name
    loaded = {module.__name__.rpartition(".")[2] + ".py" for module in tables._GROUPS}
    assert loaded | {"messages_meta.py"} == on_disk


def test_gitattributes_marks_the_tables_generated() -> None:
    attributes = (PACKAGE.parents[1] / ".gitattributes").read_text().splitlines()
    assert "kapi/protobuf/messages_*.py linguist-generated=true" in attributes
