"""What retaining a deleted hosted repository costs (``sync.retention``), in process.

    python bench/git_retention.py [--files 2000] [--commits 5]

Builds a bare repository with ``--commits`` commits of ``--files`` files each
(pushed, so packed as a push leaves it) under a temporary data
directory, then times what the GitRepository finalizer now does (``retain``:
a ref check and one rename, so independent of the size) against what it did
before (``rmtree``), and ``restore`` and ``expire`` (the beat task's removal). Prints one ``FIGURE {...}`` line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _fill(path: Path, files: int, commits: int) -> int:
    """Commits of ``files`` small files each through a work tree; returns the object count."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@e"}
    with tempfile.TemporaryDirectory() as work:
        subprocess.run(["git", "init", "-q", "-b", "main", work], check=True)
        for c in range(commits):
            for f in range(files):
                Path(work, f"f{f}.yaml").write_text(f"kind: ConfigMap\nmetadata: {{name: c{f}}}\ndata: {{v: '{c}'}}\n")
            subprocess.run(["git", "add", "-A"], cwd=work, check=True, env=env)
            subprocess.run(["git", "commit", "-qm", f"c{c}"], cwd=work, check=True, env=env)
        subprocess.run(["git", "push", "-q", str(path), "main"], cwd=work, check=True, env=env)
    counts = subprocess.run(["git", "count-objects", "-v"], cwd=path, capture_output=True, text=True,
                            check=True).stdout
    fields = dict(line.split(": ") for line in counts.splitlines())
    return int(fields["count"]) + int(fields["in-pack"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--commits", type=int, default=5)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="kapi-bench-retention-"))
    os.environ["KAPI_DATA_DIR"] = str(data)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    import django

    django.setup()
    from sync import gitstore, retention

    try:
        path = gitstore.ensure_hosted("bench", "app")
        (path / "hooks" / "pre-receive").unlink()  # no server to ask
        objects = _fill(path, args.files, args.commits)
        copy = data / "copy.git"
        shutil.copytree(path, copy)

        started = time.perf_counter()
        shutil.rmtree(copy)
        rmtree_ms = (time.perf_counter() - started) * 1000

        now = datetime.now(UTC)
        started = time.perf_counter()
        retention.retain("bench", "app", now)
        retain_ms = (time.perf_counter() - started) * 1000

        gitstore.ensure_hosted("bench", "app")
        started = time.perf_counter()
        retention.restore("bench", "app")
        restore_ms = (time.perf_counter() - started) * 1000

        retention.retain("bench", "app", now - timedelta(days=31))
        started = time.perf_counter()
        removed, _ = retention.expire(now)
        expire_ms = (time.perf_counter() - started) * 1000
        assert removed == 1
        figure = {"bench": "git_retention", "objects": objects, "finalizer_rmtree_ms": round(rmtree_ms, 1),
                  "finalizer_retain_ms": round(retain_ms, 2), "restore_ms": round(restore_ms, 1),
                  "expire_ms": round(expire_ms, 1)}
        print("FIGURE " + json.dumps(figure))
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
