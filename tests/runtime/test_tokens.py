"""The static token file: kube-apiserver's CSV format, caching, authentication."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kapi.runtime import tokens
from kapi.runtime.tokens import TokenUser


def test_parse_quoted_groups() -> None:
    """The fourth column is a quoted, comma-separated group list."""
    parsed = tokens.parse_tokens(
        't1,alice,u1,"system:masters,devs"\n'
        "t2,bob,u2\n"
        "\n"
        't3,carol,u3,""\n'
        "t4,dave,u4,ops\n"
    )
    assert parsed == {
        "t1": TokenUser("alice", "u1", ("system:masters", "devs")),
        "t2": TokenUser("bob", "u2", ()),
        "t3": TokenUser("carol", "u3", ()),
        "t4": TokenUser("dave", "u4", ("ops",)),
    }


def test_parse_rejects_short_records() -> None:
    with pytest.raises(ValueError, match="at least 3 columns"):
        tokens.parse_tokens("t1,alice\n")


def test_parse_skips_empty_tokens_and_last_duplicate_wins() -> None:
    parsed = tokens.parse_tokens(",nobody,u0\nt1,a,u1\nt1,b,u2\n")
    assert parsed == {"t1": TokenUser("b", "u2", ())}


def test_token_file_is_created_once_with_admin(tmp_path: Path) -> None:
    """First start writes `<token>,admin,<uuid>,"system:masters"`, mode 0600."""
    path = tmp_path / "tokens.csv"
    token = tokens.ensure_token_file(path)
    assert tokens.ensure_token_file(path) == token
    line = path.read_text()
    assert line.startswith(f"{token},admin,") and line.endswith(',"system:masters"\n')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert tokens.load_tokens(path)[token] == TokenUser(
        "admin", line.split(",")[2], ("system:masters",)
    )


def test_user_tokens_are_added_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    admin = tokens.ensure_token_file(path)
    alice = tokens.ensure_user_token("alice", path=path)
    assert alice != admin
    assert tokens.ensure_user_token("alice", path=path) == alice
    assert tokens.load_tokens(path)[alice].groups == ("system:authenticated",)


def test_load_tokens_rereads_a_changed_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("t1,alice,u1\n")
    assert set(tokens.load_tokens(path)) == {"t1"}
    path.write_text("t2,bob,u2\n")
    # Same size, maybe the same mtime tick: force a distinct mtime.
    os.utime(path, ns=(1, 1))
    assert set(tokens.load_tokens(path)) == {"t2"}


def test_authenticate_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Known tokens map to their user; unknown, empty or missing file give None."""
    path = tmp_path / "tokens.csv"
    monkeypatch.setenv("KAPI_TOKEN_AUTH_FILE", str(path))
    assert tokens.authenticate_token("anything") is None
    admin = tokens.ensure_token_file(path)
    user = tokens.authenticate_token(admin)
    assert user is not None and user.name == "admin" and "system:masters" in user.groups
    assert tokens.authenticate_token(admin + "x") is None
    assert tokens.authenticate_token("") is None


def test_a_known_token_is_not_looked_up_again_within_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token seen within FRESHNESS_SECONDS is accepted without a stat of the
    file; a removed line stops working once the window passes, or at once
    after ``invalidate`` (a watch's re-check); a new line works at once."""
    path = tmp_path / "tokens.csv"
    monkeypatch.setenv("KAPI_TOKEN_AUTH_FILE", str(path))
    path.write_text("t1,alice,u1\n")
    clock = [1000.0]
    monkeypatch.setattr(tokens.time, "monotonic", lambda: clock[0])
    assert tokens.authenticate_token("t1").name == "alice"

    stats: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(tokens.os, "stat", lambda p, *a, **k: stats.append(str(p)) or real_stat(p, *a, **k))
    clock[0] += tokens.FRESHNESS_SECONDS / 2
    assert tokens.authenticate_token("t1").name == "alice"
    assert stats == []

    # A new line: the unknown token looks at the file at once.
    path.write_text("t2,bob,u2\n")
    os.utime(path, ns=(1, 1))
    assert tokens.authenticate_token("t2").name == "bob"
    assert stats == [str(path)]
    # t1 was removed and the file was just read: refused at once.
    assert tokens.authenticate_token("t1") is None

    path.write_text("t3,carol,u3\n")
    os.utime(path, ns=(2, 2))
    # bob is still known from the read just made: accepted within the window...
    assert tokens.authenticate_token("t2").name == "bob"
    # ...and refused once it has passed,
    clock[0] += tokens.FRESHNESS_SECONDS
    assert tokens.authenticate_token("t2") is None
    # or at once after invalidate.
    assert tokens.authenticate_token("t3").name == "carol"
    path.write_text("t4,dave,u4\n")
    os.utime(path, ns=(3, 3))
    assert tokens.authenticate_token("t3").name == "carol"
    tokens.invalidate()
    assert tokens.authenticate_token("t3") is None


def test_token_file_defaults_to_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KAPI_TOKEN_AUTH_FILE", raising=False)
    monkeypatch.setenv("KAPI_DATA_DIR", str(tmp_path))
    assert tokens.token_file_path() == tmp_path.resolve() / "tokens.csv"
