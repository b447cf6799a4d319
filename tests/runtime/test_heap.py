"""After a big answer, freed memory goes back to the operating system
(``kapi.runtime.heap``): measured in a process of its own, as an API process
that answered a list of every object would be."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kapi.runtime import heap

# 120,000 blocks of 1.5 KB (about 180 MB) made by a thread, as a request
# thread makes the items of a big list; all but every 100th are freed, so
# that blocks still in use sit all over the memory the others leave, as they
# do in a process that goes on serving. glibc returns such memory only when
# asked (``malloc_trim``): free() gives back the top of a heap alone.
FREE_SMALL_BLOCKS = r"""
import sys
sys.path.insert(0, sys.argv[1])
from kapi.runtime import heap

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) // 1024

import threading
kept = []
start = rss()

def answer():
    parts = [bytes([i % 256]) * 1500 for i in range(120_000)]
    kept.extend(parts[::100])
    del parts

thread = threading.Thread(target=answer)
thread.start()
thread.join()
before = rss()
trimmed = heap.after_big_answer(heap.TRIM_AFTER_BYTES)
print(start, before, rss(), trimmed)
"""


def test_small_answers_do_not_trim():
    assert heap.after_big_answer(heap.TRIM_AFTER_BYTES - 1) is False


def test_freed_blocks_are_given_back_after_a_big_answer():
    out = subprocess.run(
        [sys.executable, "-c", FREE_SMALL_BLOCKS, str(Path(__file__).resolve().parents[2])],
        capture_output=True, text=True, timeout=60, check=True,
    )
    start, _before, after, trimmed = out.stdout.split()
    assert trimmed == "True"
    # Back to within 30 MB of where it started: the 178 MB freed are no
    # longer resident (without the trim, all of them stay).
    assert int(after) <= int(start) + 30, out.stdout
