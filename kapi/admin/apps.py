"""App configs: the admin site kapi installs, and the app holding its permissions."""

from django.apps import AppConfig
from django.contrib.admin.apps import AdminConfig
from django.db.models.signals import post_migrate

__all__ = ["KapiAdminConfig", "KapiAdminSiteConfig"]


class KapiAdminSiteConfig(AdminConfig):
    """``django.contrib.admin`` with :class:`kapi.admin.site.KapiAdminSite` as the site."""

    default_site = "kapi.admin.site.KapiAdminSite"


class KapiAdminConfig(AppConfig):
    """Templates, permissions and the first-start admin user."""

    name = "kapi.admin"
    label = "kapi_admin"
    verbose_name = "kapi admin"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from kapi.admin.superuser import on_post_migrate

        post_migrate.connect(on_post_migrate, sender=self)
