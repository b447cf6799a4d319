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
        from kapi.quota import admission
        from kapi.quota.wakeup import on_write as quota_on_write
        from kapi.registry.store import (
            BEFORE_WRITE_OBSERVERS,
            TRANSACTIONAL_ADMISSION,
            WRITE_OBSERVERS,
        )

        for hooks, hook in (
            (BEFORE_WRITE_OBSERVERS, before_write),
            (WRITE_OBSERVERS, on_write),
            # ResourceQuota: its admission charges in the write's transaction,
            # and writes that change usage otherwise wake its controller.
            (TRANSACTIONAL_ADMISSION, admission),
            (WRITE_OBSERVERS, quota_on_write),
        ):
            if hook not in hooks:
                hooks.append(hook)
