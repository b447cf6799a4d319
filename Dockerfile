# kapi in a container: the API server, Celery worker and beat under `serve`.
# PostgreSQL and Redis come from outside (DATABASE_URL, CELERY_BROKER_URL);
# see docker-compose.yml. The data directory (CA, serving cert, tokens,
# beat schedule) is a volume so that kubeconfigs survive a new container.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    KAPI_DATA_DIR=/data

RUN groupadd --system kapi && useradd --system --gid kapi --home-dir /app kapi \
    && mkdir -p /app /data && chown kapi:kapi /data

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
COPY --chown=kapi:kapi . .

USER kapi
VOLUME ["/data"]
EXPOSE 6443

# Ready means /readyz answers 200 over TLS verified with kapi's own CA.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys; from pathlib import Path; from kapi.runtime.readiness import probe_ready; sys.exit(0 if probe_ready('https://127.0.0.1:6443', ca_file=Path('/data/tls/ca.crt')) else 1)"]

CMD ["python", "manage.py", "serve", "--bind", "0.0.0.0:6443"]
