"""Django settings for kapi: the API server, its workers and the admin UI."""

from __future__ import annotations

import os
import secrets
import warnings

from kapi.runtime import config

DATA_DIR = config.data_dir()


def _secret_key() -> str:
    """A per-data-directory secret, generated once, so that every process agrees."""
    if os.environ.get("DJANGO_SECRET_KEY"):
        return os.environ["DJANGO_SECRET_KEY"]
    path = DATA_DIR / "django-secret-key"
    try:
        return path.read_text().strip()
    except OSError:
        pass
    key = secrets.token_urlsafe(50)
    try:
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key)
    except FileExistsError:
        return path.read_text().strip()
    except OSError:
        pass
    return key


SECRET_KEY = _secret_key()
DEBUG = os.environ.get("KAPI_DEBUG") == "1"
ALLOWED_HOSTS = ["*"]

INSTALLED_APPS = [
    # The admin UI (kapi.admin): Django's admin with kapi's site and pages.
    "kapi.admin.apps.KapiAdminSiteConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "kapi.apps.KapiConfig",
    "kapi.admin.apps.KapiAdminConfig",
    "sync.apps.SyncConfig",
]

MIDDLEWARE = [
    "kapi.observability.middleware.RequestObserver",
    "kapi.api.middleware.KubernetesAPIMiddleware",
    # Django's own, for the admin UI, /static and git only: API requests step
    # over them (kapi.api.browser_only).
    "kapi.api.browser_only.SecurityMiddleware",
    # The admin's CSS and JS: uvicorn serves no static files.
    "kapi.api.browser_only.WhiteNoiseMiddleware",
    "kapi.api.browser_only.SessionMiddleware",
    "kapi.api.browser_only.CommonMiddleware",
    "kapi.api.browser_only.CsrfViewMiddleware",
    "kapi.api.browser_only.AuthenticationMiddleware",
    "kapi.api.browser_only.MessageMiddleware",
    "kapi.api.browser_only.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "kapi.urls"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

ASGI_APPLICATION = "kapi.asgi.application"

DATABASES = {"default": config.database_settings(config.database_url())}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
# Serve straight from the apps' static folders: no collectstatic step in serve.
WHITENOISE_USE_FINDERS = True
warnings.filterwarnings("ignore", message="No directory at: ")

# Kubernetes bodies are limited at the API layer (3 MiB, as kube-apiserver);
# Django's own limit must not answer first with an HTML 400.
DATA_UPLOAD_MAX_MEMORY_SIZE = None
DATA_UPLOAD_MAX_NUMBER_FIELDS = None

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["kapi.api.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["kapi.api.filters.KubernetesAccess"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "kapi.api.negotiation.KubernetesContentNegotiation",
    "DEFAULT_PARSER_CLASSES": [
        "kapi.api.parsers.JSONParser",
        "kapi.api.parsers.YAMLParser",
        "kapi.api.parsers.JSONPatchParser",
        "kapi.api.parsers.MergePatchParser",
        "kapi.api.parsers.StrategicMergePatchParser",
        "kapi.api.parsers.ApplyPatchParser",
        "kapi.api.protobuf_parser.ProtobufParser",
    ],
    "DEFAULT_RENDERER_CLASSES": [
        "kapi.api.renderers.JSONRenderer",
        "kapi.api.renderers.YAMLRenderer",
        "kapi.api.renderers.ProtobufRenderer",
    ],
    "EXCEPTION_HANDLER": "kapi.api.exceptions.status_exception_handler",
    "UNAUTHENTICATED_USER": None,
}

# Celery: the database holds the intent, the broker only speeds it up.
CELERY_BROKER_URL = config.broker_url()
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
from kapi.controllers.schedule import BEAT_SCHEDULE as CONTROLLERS_BEAT_SCHEDULE  # noqa: E402

# Beat also sends the tasks of the due timers (kapi.duetimer) when their time comes.
CELERY_BEAT_SCHEDULER = "kapi.duetimer:Scheduler"
CELERY_BEAT_SCHEDULE: dict = {}
CELERY_BEAT_SCHEDULE.update(CONTROLLERS_BEAT_SCHEDULE)
CELERY_IMPORTS = ["kapi.controllers.tasks"]
# The controllers on the runtime (kapi.controllers): modules with CONTROLLERS
# (what reconciling a key does) and WATCHES (which changes map to which keys).
KAPI_CONTROLLERS = [
    "kapi.lifecycle.controllers",
    "kapi.lifecycle.crds",
    "kapi.controlplane.controllers",
    "kapi.workloads.controllers",
    "kapi.quota.controllers",
]

# Safety-net poll of a Sync's health checks (writes of waited-on objects wake them).
SYNC_HEALTH_POLL_SECONDS = float(os.environ.get("KAPI_SYNC_HEALTH_POLL_SECONDS", "10"))
# The ServiceAccount (of the Sync's own namespace) a Sync without
# spec.serviceAccountName acts as (sync/identity.py); never the controller.
# Networks that Alerts may post to although they are loopback or link-local
# (sync/notify.py refuses those by default), comma-separated CIDRs.
KAPI_ALERT_ALLOWED_NETWORKS = os.environ.get("KAPI_ALERT_ALLOWED_NETWORKS", "")
SYNC_DEFAULT_SERVICE_ACCOUNT = os.environ.get("KAPI_SYNC_DEFAULT_SERVICE_ACCOUNT", "default") or "default"
# A Sync's target API server (spec.kubeConfig, sync/kubeconfig.py): networks it may
# reach although they are loopback or link-local (comma-separated CIDRs); kubeconfig
# exec/auth-provider plugins and insecure-skip-tls-verify, refused unless enabled
# (Flux's --insecure-kubeconfig-exec / --insecure-kubeconfig-tls); the timeouts
# of every request to a target (seconds).
KAPI_SYNC_REMOTE_ALLOWED_NETWORKS = os.environ.get("KAPI_SYNC_REMOTE_ALLOWED_NETWORKS", "")
KAPI_SYNC_INSECURE_KUBECONFIG_EXEC = os.environ.get("KAPI_SYNC_INSECURE_KUBECONFIG_EXEC", "") in ("1", "true")
KAPI_SYNC_INSECURE_KUBECONFIG_TLS = os.environ.get("KAPI_SYNC_INSECURE_KUBECONFIG_TLS", "") in ("1", "true")
KAPI_SYNC_REMOTE_CONNECT_TIMEOUT = float(os.environ.get("KAPI_SYNC_REMOTE_CONNECT_TIMEOUT", "5"))
KAPI_SYNC_REMOTE_READ_TIMEOUT = float(os.environ.get("KAPI_SYNC_REMOTE_READ_TIMEOUT", "30"))

# How long the change log keeps history (etcd's default compaction is 5 minutes).
KAPI_HISTORY_WINDOW_SECONDS = int(os.environ.get("KAPI_HISTORY_WINDOW_SECONDS", "300"))
# Expired admin sessions (django_session grows otherwise; Django's clearsessions).
CELERY_BEAT_SCHEDULE["clear-expired-sessions"] = {
    "task": "kapi.clear_expired_sessions",
    "schedule": 3600.0,
}
CELERY_BEAT_SCHEDULE["compact-change-log"] = {
    "task": "kapi.compact_change_log",
    "schedule": float(os.environ.get("KAPI_COMPACTION_INTERVAL_SECONDS", "30")),
}

# One line per record, JSON unless stderr is a terminal (kapi.observability.logs);
# requests, reconciles and tasks log at INFO (KAPI_REQUEST_LOG=0 silences them).
_EVENTS_LEVEL = "INFO" if os.environ.get("KAPI_REQUEST_LOG", "1") != "0" else "WARNING"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"structured": {"()": "kapi.observability.logs.StructuredFormatter"}},
    "handlers": {
        "console": {"class": "kapi.observability.logbuffer.BufferedStreamHandler", "formatter": "structured"}
    },
    "root": {"handlers": ["console"], "level": os.environ.get("KAPI_LOG_LEVEL", "WARNING").upper()},
    "loggers": {
        name: {"level": _EVENTS_LEVEL}
        for name in ("kapi.request", "kapi.task", "kapi.reconcile", "kapi.work")
    },
}

# The resource types the catalog serves (kapi.registry.catalog), handed in so the
# generic registry imports no kind: kube's built-in kinds, the virtual reviews and
# the sync app's sync.kapi.dev kinds (earlier ones win a name clash); custom
# resources from stored CustomResourceDefinitions.
KAPI_RESOURCE_TYPE_PROVIDERS = [
    "kapi.kinds.builtin.resource_types",
    "kapi.kinds.virtual.resource_types",
    "sync.kinds.resource_types",
]
KAPI_CUSTOM_RESOURCE_TYPES = "kapi.kinds.custom.CUSTOM_RESOURCE_TYPES"
# URL modules of installed apps, mounted after the API and the admin UI (kapi.urls).
KAPI_URLCONFS = ["sync.urls"]
CELERY_IMPORTS.append("sync.tasks")
# Syncs and GitRepositories (sync.controllers) and which changes ask for
# their runs (sync.changes, the runtime's "sync" feed, woken by sync.scanwake).
KAPI_CONTROLLERS += ["sync.controllers", "sync.changes"]
# Deleted hosted repositories are kept this long, restorable (sync.retention; 0: not kept).
SYNC_GIT_RETENTION_DAYS = float(os.environ.get("KAPI_GIT_RETENTION_DAYS", "30"))
SYNC_GIT_RETENTION_MAX_PER_NAMESPACE = int(os.environ.get("KAPI_GIT_RETENTION_MAX_PER_NAMESPACE", "20"))
CELERY_BEAT_SCHEDULE["sync-expire-retained"] = {
    "task": "kapi.sync.expire_retained",
    "schedule": float(os.environ.get("KAPI_GIT_RETENTION_SWEEP_SECONDS", "3600")),
}

# The sync's sandbox (issue 14): what a GitRepository may fetch and a kustomize
# build may read, and the limits of renders and of git over HTTP.
# Directories whose repositories ``file://`` URLs may name (os.pathsep-separated;
# none by default; kapi's own data directory never, even if listed).
SYNC_FILE_URL_ROOTS = [p for p in os.environ.get("KAPI_SYNC_FILE_URL_ROOTS", "").split(os.pathsep) if p]
# Remote bases and resources in kustomizations (https://, git::, github.com/...):
# refused unless "1" (Flux's --no-remote-bases is kapi's default).
SYNC_KUSTOMIZE_REMOTE = os.environ.get("KAPI_SYNC_KUSTOMIZE_REMOTE", "0") == "1"
SYNC_RENDER_TIMEOUT_SECONDS = float(os.environ.get("KAPI_SYNC_RENDER_TIMEOUT_SECONDS", "60"))
SYNC_RENDER_MEMORY_BYTES = int(os.environ.get("KAPI_SYNC_RENDER_MEMORY_BYTES", str(2 << 30)))
SYNC_RENDER_MAX_OUTPUT_BYTES = int(os.environ.get("KAPI_SYNC_RENDER_MAX_OUTPUT_BYTES", str(64 << 20)))
# kustomize builds at once per process (API process or Celery worker); more wait.
SYNC_RENDER_CONCURRENCY = int(os.environ.get("KAPI_SYNC_RENDER_CONCURRENCY", "2"))
# Push-time validations at once per API process; more are refused ("busy").
SYNC_PUSH_VALIDATIONS = int(os.environ.get("KAPI_SYNC_PUSH_VALIDATIONS", "2"))
# `git push -o wait`: waits at once per API process (each holds a git slot,
# below), and the longest wait a push may ask for.
SYNC_PUSH_WAITS = int(os.environ.get("KAPI_SYNC_PUSH_WAITS", "2"))
SYNC_PUSH_WAIT_MAX_SECONDS = float(os.environ.get("KAPI_SYNC_PUSH_WAIT_MAX_SECONDS", "600"))
GIT_MAX_PUSH_BYTES = int(os.environ.get("KAPI_GIT_MAX_PUSH_BYTES", str(100 << 20)))
GIT_HTTP_TIMEOUT_SECONDS = float(os.environ.get("KAPI_GIT_HTTP_TIMEOUT_SECONDS", "600"))
# git http-backend processes at once per API process (more get 503 Retry-After):
# a push's pre-receive hook calls back into the API, so this stays below the
# threads that run git and the admin UI (KAPI_REQUEST_THREADS_MAX, 16).
GIT_HTTP_CONCURRENCY = int(os.environ.get("KAPI_GIT_HTTP_CONCURRENCY", "4"))
# A revision's unpacked tree (git stores identical files once: a small push can
# unpack to a huge tree): larger ones are refused, not checked out.
SYNC_MAX_CHECKOUT_BYTES = int(os.environ.get("KAPI_SYNC_MAX_CHECKOUT_BYTES", str(1 << 30)))
SYNC_MAX_CHECKOUT_FILES = int(os.environ.get("KAPI_SYNC_MAX_CHECKOUT_FILES", "100000"))
# Files of deleted GitRepositories and interrupted work; git gc --auto (sync.housekeeping).
CELERY_BEAT_SCHEDULE["sync-housekeeping"] = {
    "task": "kapi.sync.housekeeping",
    "schedule": float(os.environ.get("KAPI_SYNC_HOUSEKEEPING_SECONDS", "600")),
}
