"""``spec.timeout`` inside rendering and pruning, without a server: each stops at
the deadline, before touching anything more, with how far it got."""

from __future__ import annotations

import os
import time

import django
import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()  # sync.apply imports the registry (no database is used here)

from sync import apply as engine  # noqa: E402
from sync.deadline import TimeoutExceeded  # noqa: E402
from sync.render import render  # noqa: E402


def test_rendering_stops_at_the_deadline(tmp_path):
    for i in range(3):
        (tmp_path / f"cm{i}.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}}}\n"
        )
    assert len(render(tmp_path, "./", deadline=time.time() + 60)) == 3
    with pytest.raises(TimeoutExceeded) as caught:
        render(tmp_path, "./", deadline=time.time() - 1)
    assert (caught.value.stage, caught.value.done, caught.value.total, caught.value.unit) == (
        "rendering", 0, 3, "files")


def test_pruning_stops_at_the_deadline_before_deleting(tmp_path):
    """The deadline is checked before each delete: past it, nothing is looked up
    or deleted (the registry given would fail the test if it were used)."""

    class NoRegistry:
        def __getattr__(self, name):
            raise AssertionError(f"prune used the registry ({name}) after its deadline")

    old = [
        {"id": "team_web_apps_Deployment", "v": "v1"},
        {"id": "team_conf__ConfigMap", "v": "v1"},
        {"id": "team_keep__ConfigMap", "v": "v1"},
    ]
    with pytest.raises(engine.TimeoutExceeded) as caught:
        engine.prune(old, {"team_keep__ConfigMap"}, "team", "app",
                     registry=NoRegistry(), deadline=time.time() - 1)
    assert (caught.value.stage, caught.value.done, caught.value.total) == ("pruning", 0, 2)
