"""Permissions of the admin UI, held by a model without a table.

Staff users may browse. Editing objects and revealing Secret values are
separate permissions, granted in the admin's user and group pages like any
other (superusers have them all).
"""

from django.db import models

__all__ = ["ADMIN_EDIT", "ADMIN_REVEAL", "KapiPermissions"]

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
