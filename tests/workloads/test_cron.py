"""The CronJob schedule parser reads robfig/cron's standard syntax as kube does."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kapi.workloads import cron

NOW = datetime(2026, 11, 28, 7, 15, 30, tzinfo=UTC)  # a Saturday


@pytest.mark.parametrize(
    ("spec", "tz", "expected"),
    [
        ("* * * * *", None, datetime(2026, 11, 28, 7, 16, tzinfo=UTC)),
        ("*/15 * * * *", None, datetime(2026, 11, 28, 7, 30, tzinfo=UTC)),
        ("0 9 * * MON-FRI", "Europe/Paris", datetime(2026, 11, 30, 8, 0, tzinfo=UTC)),
        ("@monthly", None, datetime(2026, 12, 1, tzinfo=UTC)),
        # Both day fields restricted: either matches (Friday the 4th before the 13th).
        ("0 0 13 * 5", None, datetime(2026, 12, 4, tzinfo=UTC)),
        ("0 0 30 2 *", None, None),
    ],
)
def test_next(spec, tz, expected):
    assert cron.parse(spec, tz).next(NOW) == expected


@pytest.mark.parametrize("spec", ["* * * *", "61 * * * *", "* * * * MOO", "*/0 * * * *"])
def test_invalid(spec):
    with pytest.raises(cron.ScheduleError):
        cron.parse(spec)
