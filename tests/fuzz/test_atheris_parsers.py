"""Coverage-guided fuzzing of the JSON, YAML and protobuf body parsers with
atheris (``tests/fuzz/atheris_parsers.py``): a fixed seed, a fixed number of
runs and a seed corpus of valid bodies; libFuzzer exits 0 only if no input
raised anything but a 4xx. Complements the hypothesis properties of
``test_engines.py`` (generated from a grammar) with mutation guided by the
parsers' own branch coverage."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("atheris_parsers.py")
ROOT = SCRIPT.parent.parent.parent
RUNS = int(os.environ.get("KAPI_FUZZ_ATHERIS_RUNS", "4000"))


@pytest.mark.parametrize("kind", ["json", "yaml", "protobuf"])
def test_parsers_refuse_bad_bodies_only_with_4xx(kind: str, tmp_path: Path) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "kapi.settings", "KAPI_LOG_LEVEL": "ERROR"}
    corpus = tmp_path / "corpus"
    subprocess.run([sys.executable, str(SCRIPT), kind, str(corpus), "--write-seeds"],
                   cwd=ROOT, env=env, check=True, timeout=120)
    assert any(corpus.iterdir())
    result = subprocess.run(
        [sys.executable, str(SCRIPT), kind, f"-runs={RUNS}", "-seed=1", "-max_len=4096",
         "-timeout=20", f"-artifact_prefix={tmp_path}/", str(corpus)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    tail = (result.stdout + result.stderr)[-4000:]
    assert result.returncode == 0, tail
    assert f"Done {RUNS} runs" in result.stderr, tail
    print("FIGURE", {"test": f"atheris-{kind}", "runs": RUNS})
