"""After a big answer, freed memory goes back to the operating system
(``kapi.runtime.heap``): measured in a process of its own, as an API process
that answered a list of every object would be."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kapi.runtime import heap

# 120,000 blocks of 1.5 KB (about 180 MB) made and freed by a thread, with one
# block above them kept, as a request thread frees the items of a big list
# while the process goes on.
FREE_SMALL_BLOCKS = r"""
import sys
sys.path.insert(0, sys.argv[1])
from kapi.runtime import heap

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) // 1024

import threading
kept = []

def answer():
    # In a thread, as a request thread makes a list's items: its own arena.
    parts = [bytes([i % 256]) * 1500 for i in range(120_000)]
    kept.append(b"k" * 1500)
    del parts

thread = threading.Thread(target=answer)
thread.start()
thread.join()
before = rss()
trimmed = heap.after_big_answer(heap.TRIM_AFTER_BYTES)
print(before, rss(), trimmed)
"""


def test_small_answers_do_not_trim():
    assert heap.after_big_answer(heap.TRIM_AFTER_BYTES - 1) is False


def test_freed_blocks_are_given_back_after_a_big_answer():
    out = subprocess.run(
        [sys.executable, "-c", FREE_SMALL_BLOCKS, str(Path(__file__).resolve().parents[2])],
        capture_output=True, text=True, timeout=60, check=True,
    )
    before, after, trimmed = out.stdout.split()
    assert trimmed == "True"
    # At least 100 of the 180 MB freed are no longer resident.
    assert int(before) - int(after) >= 100, out.stdout
