"""Cron schedules as kube's CronJob controller reads them (robfig/cron's
standard parser): five fields (minute, hour, day of month, month, day of
week) with ``*``, ``?``, lists, ranges, steps and month and weekday names, or
a descriptor (``@yearly``, ``@annually``, ``@monthly``, ``@weekly``,
``@daily``, ``@midnight``, ``@hourly``). When both day fields are restricted a
day matching either matches, as in cron. Times are computed on the wall clock
of the CronJob's time zone (``zoneinfo``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

__all__ = ["Schedule", "ScheduleError", "parse"]


class ScheduleError(ValueError):
    pass


_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DAYS = {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}
#: (low, high, names) per field.
_FIELDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, _MONTHS), (0, 6, _DAYS))


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool  # day of month or day of week was "*": both must match
    tz: ZoneInfo | None = None

    def _day_matches(self, day: datetime) -> bool:
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        return dom and dow if self.any_day else dom or dow

    def next(self, after: datetime) -> datetime | None:
        """The first time strictly after ``after`` (aware), in UTC; None
        within five years (a schedule such as Feb 30)."""
        tz = self.tz or UTC
        t = after.astimezone(tz).replace(tzinfo=None, second=0, microsecond=0) + timedelta(minutes=1)
        limit = t + timedelta(days=366 * 5)
        while t < limit:
            if t.month not in self.months:
                t = (t.replace(day=1, hour=0, minute=0) + timedelta(days=32)).replace(day=1)
                continue
            if not self._day_matches(t):
                t = t.replace(hour=0, minute=0) + timedelta(days=1)
                continue
            if t.hour not in self.hours:
                t = t.replace(minute=0) + timedelta(hours=1)
                continue
            if t.minute not in self.minutes:
                t += timedelta(minutes=1)
                continue
            found = t.replace(tzinfo=tz).astimezone(UTC)
            if found > after:
                return found
            t += timedelta(minutes=1)
        return None


def _field(text: str, index: int) -> tuple[frozenset[int], bool]:
    low, high, names = _FIELDS[index]
    values: set[int] = set()
    star = False

    def number(token: str) -> int:
        token = token.lower()
        if token in names:
            return names[token]
        if not token.isdigit():
            raise ScheduleError(f"failed to parse int from {token}")
        return int(token)

    for part in text.split(","):
        rng, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ScheduleError(f"failed to parse int from {step_text}")
            step = int(step_text)
        if rng in ("*", "?"):
            start, end = low, high
            star = star or step == 1
        elif "-" in rng:
            a, _, b = rng.partition("-")
            start, end = number(a), number(b)
        else:
            start = number(rng)
            end = high if step_text else start
        if start < low or end > high or start > end:
            raise ScheduleError(f"end of range ({end}) above maximum ({high}): {part}"
                                if end > high else f"beginning of range ({start}) below minimum ({low}): {part}"
                                if start < low else f"beginning of range ({start}) beyond end of range ({end}): {part}")
        values.update(range(start, end + 1, step))
    return frozenset(values), star


def parse(spec: str, time_zone: str | None = None) -> Schedule:
    """A schedule; ``ScheduleError`` with robfig/cron's message if invalid."""
    text = _DESCRIPTORS.get(spec.strip(), spec.strip())
    fields = text.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: {spec}")
    parsed = [_field(f, i) for i, f in enumerate(fields)]
    tz = ZoneInfo(time_zone) if time_zone else None
    return Schedule(
        minutes=parsed[0][0],
        hours=parsed[1][0],
        days=parsed[2][0],
        months=parsed[3][0],
        weekdays=parsed[4][0],
        any_day=parsed[2][1] or parsed[4][1],
        tz=tz,
    )
