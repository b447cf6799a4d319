from django.apps import AppConfig
from django.db.models.signals import post_migrate


class KapiConfig(AppConfig):
    name = "kapi"
    verbose_name = "Kubernetes API"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import kapi.observability.tasks  # noqa: F401 - connects Celery signals
        from kapi.bootstrap import _on_post_migrate

        post_migrate.connect(_on_post_migrate, sender=self)

        from kapi.lifecycle.wakeup import before_write, on_write
        from kapi.registry.store import BEFORE_WRITE_OBSERVERS, WRITE_OBSERVERS

        if before_write not in BEFORE_WRITE_OBSERVERS:
            BEFORE_WRITE_OBSERVERS.append(before_write)
        if on_write not in WRITE_OBSERVERS:
            WRITE_OBSERVERS.append(on_write)

        from kapi.quota import admission
        from kapi.quota.wakeup import on_write as quota_on_write
        from kapi.registry.store import TRANSACTIONAL_ADMISSION

        if admission not in TRANSACTIONAL_ADMISSION:
            TRANSACTIONAL_ADMISSION.append(admission)
        if quota_on_write not in WRITE_OBSERVERS:
            WRITE_OBSERVERS.append(quota_on_write)
