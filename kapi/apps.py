from django.apps import AppConfig


class KapiConfig(AppConfig):
    name = "kapi"
    verbose_name = "Kubernetes API"
    default_auto_field = "django.db.models.BigAutoField"
