"""A Sync's target API server: ``spec.kubeConfig.secretRef`` read and checked.

Flux's shape: the Secret (of the Sync's namespace, read as the Sync's
identity) holds a kubeconfig under ``key``, or ``value`` / ``value.yaml``
when unset. Its current context names the cluster (``server``,
``certificate-authority-data``) and the user (``token``, or
``client-certificate-data`` and ``client-key-data``, or basic auth).

What a tenant could abuse is refused, each with a message naming why:

* ``exec`` and ``auth-provider`` plugins (commands run on kapi's host);
  ``KAPI_SYNC_INSECURE_KUBECONFIG_EXEC`` (Flux's ``--insecure-kubeconfig-exec``)
  is the switch for exec plugins, which this server does not run yet;
* ``insecure-skip-tls-verify``, unless ``KAPI_SYNC_INSECURE_KUBECONFIG_TLS``
  (Flux's ``--insecure-kubeconfig-tls``);
* file paths (``certificate-authority``, ``client-certificate``,
  ``client-key``, ``tokenFile``): files of kapi's host, never a tenant's;
* a server resolving to a loopback, link-local or unspecified address unless
  listed in ``KAPI_SYNC_REMOTE_ALLOWED_NETWORKS`` (``sync.netallow``).

Nothing here logs or writes the kubeconfig; its text lives in memory only.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

import yaml
from django.conf import settings

from kapi import errors
from kapi.auth import access
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry
from sync import netallow

__all__ = ["KubeconfigError", "Target", "kubeconfig_ref", "parse", "target_of"]

_DEFAULT_KEYS = ("value", "value.yaml")
_FILE_FIELDS = ("certificate-authority", "client-certificate", "client-key", "tokenFile")


class KubeconfigError(Exception):
    """The kubeconfig cannot be used; the message says why (never its content)."""


@dataclass(frozen=True)
class Target:
    """How to reach and authenticate to a target API server."""

    server: str
    ca_pem: bytes = b""
    cert_pem: bytes = b""
    key_pem: bytes = b""
    token: str = ""
    username: str = ""
    password: str = ""
    insecure: bool = False

    @property
    def digest(self) -> str:
        """Identifies the connection (server and credentials) without revealing them."""
        h = hashlib.sha256()
        for part in (self.server.encode(), self.ca_pem, self.cert_pem, self.key_pem, self.token.encode(),
                     self.username.encode(), self.password.encode(), b"1" if self.insecure else b"0"):
            h.update(hashlib.sha256(part).digest())
        return h.hexdigest()

    def __repr__(self) -> str:  # never the credentials, in a log or a traceback
        return f"Target(server={self.server!r})"


def kubeconfig_ref(spec: dict) -> dict | None:
    """``spec.kubeConfig.secretRef`` of a Sync, or None (the local store)."""
    ref = (spec.get("kubeConfig") or {}).get("secretRef")
    return ref if isinstance(ref, dict) and ref.get("name") else None


def _named(items, name: str, what: str) -> dict:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            return item.get(what) or {}
    raise KubeconfigError(f"kubeconfig has no {what} named {name!r}")


def _b64(value, field: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (ValueError, TypeError):
        raise KubeconfigError(f"kubeconfig {field} is not valid base64") from None


def parse(text: str) -> Target:
    """The current context's server and credentials, after the checks above."""
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError:
        raise KubeconfigError("kubeconfig is not valid YAML") from None
    if not isinstance(config, dict):
        raise KubeconfigError("kubeconfig is not a mapping")
    context_name = config.get("current-context")
    if not context_name:
        raise KubeconfigError("kubeconfig has no current-context")
    context = _named(config.get("contexts"), context_name, "context")
    cluster = _named(config.get("clusters"), context.get("cluster"), "cluster")
    user = _named(config.get("users"), context.get("user"), "user") if context.get("user") else {}
    for section, fields in (("cluster", cluster), ("user", user)):
        for name in _FILE_FIELDS:
            if fields.get(name):
                raise KubeconfigError(f"kubeconfig {section} field {name} names a file; only inline data "
                                      f"(-data fields) and tokens are accepted")
    server = str(cluster.get("server") or "")
    if not server:
        raise KubeconfigError("kubeconfig cluster has no server")
    insecure = bool(cluster.get("insecure-skip-tls-verify"))
    if insecure and not settings.KAPI_SYNC_INSECURE_KUBECONFIG_TLS:
        raise KubeconfigError("kubeconfig insecure-skip-tls-verify is not allowed on this server")
    token, cert, key = str(user.get("token") or ""), b"", b""
    if user.get("client-certificate-data"):
        cert = _b64(user["client-certificate-data"], "client-certificate-data")
        key = _b64(user.get("client-key-data") or "", "client-key-data")
    if user.get("auth-provider"):
        raise KubeconfigError("kubeconfig auth-provider plugins are not supported")
    if user.get("exec"):
        if not settings.KAPI_SYNC_INSECURE_KUBECONFIG_EXEC:
            raise KubeconfigError("kubeconfig exec plugins are not allowed on this server")
        raise KubeconfigError("kubeconfig exec plugins are not supported yet")
    refused = netallow.refused(server, settings.KAPI_SYNC_REMOTE_ALLOWED_NETWORKS, "a Sync")
    if refused:
        raise KubeconfigError(f"kubeconfig server {server}: {refused}")
    ca = _b64(cluster["certificate-authority-data"], "certificate-authority-data") \
        if cluster.get("certificate-authority-data") else b""
    return Target(server.rstrip("/"), ca, cert, key, token, str(user.get("username") or ""),
                  str(user.get("password") or ""), insecure)


def target_of(namespace: str, spec: dict, user, registry: Registry | None = None) -> Target | None:
    """The Sync's target (None: no ``spec.kubeConfig``), its Secret read as ``user``."""
    ref = kubeconfig_ref(spec)
    if ref is None:
        return None
    name, key = ref["name"], ref.get("key")
    rt = catalog().lookup("", "v1", "secrets")
    try:
        access.check(user, "get", rt, namespace, name)
        secret = (registry or Registry()).get(rt, namespace, name)
    except errors.StatusError as exc:
        raise KubeconfigError(f"kubeconfig Secret {name}: {exc.status.get('message', exc)}") from None
    data = secret.get("data") or {}
    keys = (key,) if key else _DEFAULT_KEYS
    found = next((k for k in keys if data.get(k)), None)
    if found is None:
        raise KubeconfigError(f"kubeconfig Secret {name} has no key {' or '.join(keys)}")
    return parse(base64.b64decode(data[found]).decode(errors="replace"))
