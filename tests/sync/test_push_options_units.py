"""``-o wait`` values and reading a push's options from its first bytes (no server)."""

from __future__ import annotations

import gzip
import os

import django
import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()  # settings only: no database is used here

from django.conf import settings  # noqa: E402

from sync import gitbackend, pushoptions  # noqa: E402

OLD, NEW = "0" * 40, "1" * 40


def _pkt(text: str) -> bytes:
    data = text.encode() + b"\n"
    return b"%04x" % (len(data) + 4) + data


def _request(*options: str, caps: str = "report-status side-band-64k push-options") -> bytes:
    body = _pkt(f"{OLD} {NEW} refs/heads/main\0{caps}") + _pkt(f"{OLD} {NEW} refs/heads/dev") + b"0000"
    if options:
        body += b"".join(_pkt(o) for o in options) + b"0000"
    return body + b"PACK..."


def test_the_options_follow_the_commands():
    refs, caps, options = gitbackend.request_head(_request("ci.skip", "wait=2m"))
    assert refs == ["refs/heads/main", "refs/heads/dev"]
    assert "push-options" in caps
    assert options == ["ci.skip", "wait=2m"]


def test_no_options_without_the_capability_or_a_whole_list():
    assert gitbackend.request_head(_request(caps="report-status"))[2] == []
    cut = _request("wait=2m")
    assert gitbackend.request_head(cut[: cut.index(b"wait") + 4])[2] == []


def test_a_gzipped_request_is_read_too():
    assert gitbackend.request_head(gzip.compress(_request("wait")), gzipped=True)[2] == ["wait"]


@pytest.mark.parametrize(("options", "seconds"), [
    (["wait"], 120), (["wait=30s"], 30), (["wait=1m30s"], 90), (["wait=10s", "wait=2m"], 120),
    (["ci.skip"], None), ([], None),
])
def test_wait_values(options, seconds):
    wait = pushoptions.wait_of(options)
    assert (wait.seconds if wait else None) == seconds


@pytest.mark.parametrize(("value", "message"), [
    ("banana", "-o wait=banana is not a duration"),
    ("", "-o wait= is not a duration"),
    ("90", "-o wait=90: give a unit (e.g. -o wait=90s)"),
    ("0s", "-o wait=0s: the duration must be more than zero"),
])
def test_bad_wait_values_are_refused(value, message):
    with pytest.raises(pushoptions.PushOptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pushoptions.wait_of([f"wait={value}"])


def test_a_wait_over_the_cap_is_cut_and_says_so(monkeypatch):
    monkeypatch.setattr(settings, "SYNC_PUSH_WAIT_MAX_SECONDS", 600)
    wait = pushoptions.wait_of(["wait=1h"])
    assert wait.seconds == 600
    assert wait.note == "kapi: waiting at most 10m, this server's limit (KAPI_SYNC_PUSH_WAIT_MAX_SECONDS), not 1h"


def test_git_config_goes_after_any_already_set():
    env = pushoptions.git_config({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"},
                                 {"receive.advertisePushOptions": "true"})
    assert env["GIT_CONFIG_COUNT"] == "2"
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == ("receive.advertisePushOptions", "true")
    assert env["GIT_CONFIG_KEY_0"] == "a.b"


def test_wait_slots_are_bounded(monkeypatch):
    monkeypatch.setattr(settings, "SYNC_PUSH_WAITS", 2)
    pushoptions._slots.clear()
    first, second = pushoptions.take_wait_slot(), pushoptions.take_wait_slot()
    assert first and second and pushoptions.take_wait_slot() is None
    first()
    first()  # given back once only
    third = pushoptions.take_wait_slot()
    assert third is not None and pushoptions.take_wait_slot() is None
    second()
    third()
    pushoptions._slots.clear()


class _Stalling:
    """A request body that has ``data`` and then stalls: reading past it fails
    the test (a real client that stops sending would block the read forever)."""

    def __init__(self, data: bytes) -> None:
        self.META = {"CONTENT_LENGTH": str(len(data) + 1000)}
        self.data = data

    def read(self, size: int) -> bytes:
        assert self.data, "read past what the client sent"
        piece, self.data = self.data[:size], self.data[size:]
        return piece


def test_the_head_is_read_up_to_the_options_and_no_further():
    with_options = _request("wait=5s").removesuffix(b"PACK...")
    assert gitbackend._read_head(_Stalling(with_options)) == with_options
    without = _request(caps="report-status side-band-64k").removesuffix(b"PACK...")
    assert gitbackend._read_head(_Stalling(without)) == without
