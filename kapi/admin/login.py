"""The admin sign-in form with throttling of failed attempts (``throttle``)."""

from __future__ import annotations

import math

from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError

from kapi.admin import throttle

__all__ = ["ThrottledAuthenticationForm"]


class ThrottledAuthenticationForm(AdminAuthenticationForm):
    error_messages = {
        **AdminAuthenticationForm.error_messages,
        "throttled": (
            "Too many failed sign-in attempts for this account or from this address."
            " Sign-in is locked; try again in %(minutes)d minute(s)."
        ),
    }

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        address = throttle.client_address(self.request)
        wait = throttle.seconds_locked(username, address)
        if wait:
            # The site answers 429 with Retry-After (``KapiAdminSite.login``).
            self.request.kapi_login_retry_after = wait
            raise ValidationError(
                self.error_messages["throttled"],
                code="throttled",
                params={"minutes": math.ceil(wait / 60)},
            )
        try:
            cleaned = super().clean()
        except ValidationError:
            throttle.record_failure(username, address)
            raise
        throttle.reset(username, address)
        return cleaned
