"""Per-user kubeconfigs against the session server (``tests/auth``)."""

from tests.auth.conftest import make_user  # noqa: F401 - a fixture
