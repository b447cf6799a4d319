"""The admin UI: Django's admin over the same registry and storage as the API.

Pages are server-rendered Django admin pages (login, permissions, layout and
look are the admin's). Reads go to storage (``kapi.admin.queries`` over
``kapi.storage.browse``: the same rows the API serves, no copy); every write goes
through :class:`kapi.registry.store.Registry` with field manager ``kapi-admin``,
so nothing skips resourceVersion, validation, admission or managedFields.
"""
