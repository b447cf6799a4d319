"""Permissions of the admin UI, held by a model without a table, and the
failed sign-ins that throttle the login form (``kapi.admin.throttle``).

Staff users may browse. Editing objects and revealing Secret values are
separate permissions, granted in the admin's user and group pages like any
other (superusers have them all).
"""

from django.db import models

__all__ = ["ADMIN_EDIT", "ADMIN_REVEAL", "KapiPermissions", "LoginFailure"]

#: ``user.has_perm`` names.
ADMIN_EDIT = "kapi_admin.edit_objects"
ADMIN_REVEAL = "kapi_admin.reveal_secrets"


class KapiPermissions(models.Model):
    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("edit_objects", "Can create, edit and delete Kubernetes objects"),
            ("reveal_secrets", "Can reveal the values of Secrets"),
        ]
        verbose_name = "kapi permission"


class LoginFailure(models.Model):
    """One failed admin sign-in, counted against a user name and a client address
    (``scope`` ``user`` or ``address``). In PostgreSQL, so every API process
    sees the same counts."""

    scope = models.CharField(max_length=8)
    key = models.CharField(max_length=254)
    at = models.DateTimeField(db_default=models.functions.Now())

    class Meta:
        db_table = "kapi_admin_login_failure"
        indexes = [
            models.Index(fields=["scope", "key", "at"], name="kapi_login_failure_key_at")
        ]
