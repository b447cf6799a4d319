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

CMD ["python", "manage.py", "serve", "--bind", "0.0.0.0:6443"]
