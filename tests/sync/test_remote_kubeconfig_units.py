"""What a tenant's kubeconfig may not make kapi do (``sync.kubeconfig``): no
plugins, no skipped TLS verification, no files of kapi's host, no addresses
only the server can reach; and what it gives when it is fine."""

from __future__ import annotations

import base64
import os

import django
import pytest
import yaml


@pytest.fixture(scope="module")
def parse():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    django.setup()
    from sync.kubeconfig import parse

    return parse


def _config(cluster: dict, user: dict) -> str:
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": cluster}], "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    })


def _refusal(parse, text: str) -> str:
    from sync.kubeconfig import KubeconfigError

    with pytest.raises(KubeconfigError) as raised:
        parse(text)
    return str(raised.value)


def test_refused_kubeconfigs(parse):
    from django.test import override_settings

    public = {"server": "https://192.0.2.10:6443"}  # TEST-NET: a reachable network
    with override_settings(KAPI_SYNC_REMOTE_ALLOWED_NETWORKS="", KAPI_SYNC_INSECURE_KUBECONFIG_TLS=False,
                           KAPI_SYNC_INSECURE_KUBECONFIG_EXEC=False):
        assert "exec plugins are not allowed" in _refusal(parse, _config(public, {"exec": {"command": "sh"}}))
        assert "auth-provider" in _refusal(parse, _config(public, {"auth-provider": {"name": "gcp"}}))
        assert "insecure-skip-tls-verify" in _refusal(
            parse, _config({**public, "insecure-skip-tls-verify": True}, {"token": "t"}))
        assert "names a file" in _refusal(parse, _config(public, {"tokenFile": "/etc/shadow"}))
        assert "names a file" in _refusal(
            parse, _config({**public, "certificate-authority": "/etc/ssl/ca.pem"}, {"token": "t"}))
        for server in ("https://127.0.0.1:6443", "https://169.254.169.254", "https://[::1]:6443",
                       "https://0.0.0.0:6443"):
            assert "may not reach" in _refusal(parse, _config({"server": server}, {"token": "t"}))
        assert "http or https" in _refusal(parse, _config({"server": "file:///etc/passwd"}, {"token": "t"}))
        assert "current-context" in _refusal(parse, "apiVersion: v1\nkind: Config\n")
        assert "not valid YAML" in _refusal(parse, "{")
    with override_settings(KAPI_SYNC_REMOTE_ALLOWED_NETWORKS="127.0.0.0/8",
                           KAPI_SYNC_INSECURE_KUBECONFIG_TLS=True):
        ca = base64.b64encode(b"CA").decode()
        target = parse(_config({"server": "https://127.0.0.1:6443/", "certificate-authority-data": ca,
                                "insecure-skip-tls-verify": True}, {"token": "secret-token"}))
        assert (target.server, target.ca_pem, target.token, target.insecure) == \
            ("https://127.0.0.1:6443", b"CA", "secret-token", True)
        assert "secret-token" not in repr(target) and "secret-token" not in target.digest


def test_the_admin_summary_names_the_target(parse):
    from kapi.admin.views.syncs import summary

    remote = summary({"status": {"target": {"server": "https://cluster.example:6443", "version": "v1.28.7"}}})
    assert (remote["target"], remote["target_version"]) == ("https://cluster.example:6443", "v1.28.7")
    assert summary({"status": {}})["target"] == ""
