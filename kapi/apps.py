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

        from kapi.controlplane import wakeup as controlplane
        from kapi.lifecycle.wakeup import before_write, on_write
        from kapi.quota.admission import PLUGIN as quota_admission
        from kapi.registry.store import (
            ADMISSION_PLUGINS,
            BEFORE_WRITE_OBSERVERS,
            WRITE_OBSERVERS,
        )
        from kapi.workloads import wakeup as workloads

        if before_write not in BEFORE_WRITE_OBSERVERS:
            BEFORE_WRITE_OBSERVERS.append(before_write)
        if quota_admission not in ADMISSION_PLUGINS:
            ADMISSION_PLUGINS.append(quota_admission)
        for observer in (on_write, controlplane.on_write, workloads.on_write):
            if observer not in WRITE_OBSERVERS:
                WRITE_OBSERVERS.append(observer)
