"""A real headless Chromium (Debian's package, driven by Playwright) for the
admin's browser tests, screenshots kept under ``test-artifacts/admin/``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["ARTIFACTS", "chromium", "shot", "sign_in"]

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "admin"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # serve's certificate is signed by its own CA, which Chromium does not know.
    "--ignore-certificate-errors",
]


@contextmanager
def chromium() -> Iterator[object]:
    """A browser; ``browser.new_context(...)`` gives each user a session of their own."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: scripts/test installs Debian's chromium package")
    from playwright import sync_api

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser):
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(20_000)
    return context.new_page()


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def sign_in(page, server, username: str = "admin", password: str | None = None) -> None:
    """Sign in through the form (the generated admin password by default)."""
    if password is None:
        password = (server.data_dir / "admin-password").read_text().strip()
    page.goto(server.url + "/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_load_state()
