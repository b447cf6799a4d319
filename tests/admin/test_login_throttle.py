"""Throttling of failed admin sign-ins with the Django test client: per user
name, per client address, reset by a success, lifted once failures age out."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from kapi.admin import throttle
from kapi.admin.models import LoginFailure

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"
LOCKED = "Too many failed sign-in attempts"


def _attempt(client, username: str, password: str, address: str):
    return client.post(
        LOGIN,
        {"username": username, "password": password, "next": "/admin/"},
        REMOTE_ADDR=address,
    )


def _signed_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == "/admin/"


def test_five_failures_lock_the_user_name_from_any_address(client, staff):
    first = time.monotonic()
    for i in range(throttle.LIMIT_PER_USER):
        response = _attempt(client, "viewer", "wrong", f"10.0.1.{i}")
        assert response.status_code == 200
        assert b"Please enter the correct username and password" in response.content
    # Even the right password from a fresh address is refused now.
    response = _attempt(client, "VIEWER", "pw", "10.0.1.99")
    assert response.status_code == 429
    assert LOCKED in response.content.decode()
    assert "try again in 15 minute(s)" in response.content.decode()
    # Until the first failure is 15 minutes old (however long the attempts took).
    assert 900 - (time.monotonic() - first) - 1 <= int(response["Retry-After"]) <= 900
    response = _attempt(client, "viewer", "pw", "10.0.1.99")
    assert response.status_code == 429 and "_auth_user_id" not in client.session
    # Another user is not affected.
    other = staff.__class__.objects.create_user("other", password="pw2", is_staff=True)
    assert _signed_in(_attempt(client, other.username, "pw2", "10.0.1.99"))
    # Once the failures are older than the window, the user may sign in again.
    LoginFailure.objects.update(
        at=timezone.now() - throttle.WINDOW - timedelta(seconds=1)
    )
    client.logout()
    assert _signed_in(_attempt(client, "viewer", "pw", "10.0.1.99"))


def test_many_failures_from_one_address_lock_the_address(client, staff):
    for i in range(throttle.LIMIT_PER_ADDRESS):
        assert _attempt(client, f"guess-{i}", "wrong", "10.0.2.1").status_code == 200
    response = _attempt(client, "viewer", "pw", "10.0.2.1")
    assert response.status_code == 429 and LOCKED in response.content.decode()
    assert _signed_in(_attempt(client, "viewer", "pw", "10.0.2.2"))


def test_a_success_resets_the_count(client, staff):
    for _ in range(throttle.LIMIT_PER_USER - 1):
        _attempt(client, "viewer", "wrong", "10.0.3.1")
    assert _signed_in(_attempt(client, "viewer", "pw", "10.0.3.1"))
    client.logout()
    for _ in range(throttle.LIMIT_PER_USER - 1):
        _attempt(client, "viewer", "wrong", "10.0.3.1")
    assert _signed_in(_attempt(client, "viewer", "pw", "10.0.3.1"))
    assert not LoginFailure.objects.filter(key__in=["viewer", "10.0.3.1"]).exists()
