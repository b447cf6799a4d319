"""Authentication and authorization: who is asking and what they may do.

- ``user``: ``UserInfo`` and well-known groups
- ``signing``: JWT signing keys in the data directory (rotation)
- ``serviceaccounts``, ``djangousers``, ``authenticator``: bearer tokens
- ``attributes``, ``rules``, ``rbac``, ``escalation``: the RBAC authorizer
- ``impersonation``, ``audit``, ``inflight``: request filters' logic
- ``access``: acting as a user in-process (git sync, git endpoint)
- ``bootstrap``: kube's bootstrap ClusterRoles and bindings

Layering: ``kapi.api`` and ``kapi.handlers`` call this package; it calls
``kapi.registry`` and ``kapi.runtime``.
"""
