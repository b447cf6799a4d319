"""The listener's horizon without waiting (``kapi.storage.watchcache.Readings``):
a reading of (sequence value, writers in flight) becomes the horizon once none
of its writers is in flight at a later reading, never before, and readings
settle in order."""

from __future__ import annotations

from kapi.storage.watchcache import Readings


def test_no_writer_in_flight_settles_the_reading_at_once():
    readings = Readings()
    assert readings.horizon(10, frozenset()) == 10
    assert readings.horizon(11, frozenset()) == 11


def test_a_reading_waits_for_every_one_of_its_writers():
    readings = Readings()
    assert readings.horizon(12, frozenset({"x"})) is None
    assert readings.horizon(13, frozenset({"x", "y"})) is None
    # x has ended, y has not: 12 (x only) is settled, 13 (x and y) is not.
    assert readings.horizon(15, frozenset({"y", "z"})) == 12
    assert readings.horizon(16, frozenset({"z"})) == 13
    # Nothing older comes back once a newer reading has settled.
    assert readings.horizon(17, frozenset()) == 17
    assert readings.horizon(18, frozenset({"w"})) is None


def test_a_long_writer_fills_the_readings_until_the_listener_waits_instead():
    readings = Readings()
    for seq in range(Readings.LIMIT):
        assert not readings.full()
        assert readings.horizon(seq, frozenset({"long"})) is None
    assert readings.full()
    readings.clear()
    assert not readings.full()
