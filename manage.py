#!/usr/bin/env python
"""Django's command-line utility for kapi (serve, kubeconfig, migrate, ...)."""

import os
import sys


def _apply_data_dir(argv: list[str]) -> None:
    """Honour ``--data-dir DIR`` / ``--data-dir=DIR`` before settings are read.

    kapi's settings derive the database, broker and secret key from
    ``KAPI_DATA_DIR`` at import time, which is before any command parses its
    options; so the option is applied to the environment here.
    """
    for i, arg in enumerate(argv):
        if arg == "--":
            return
        if arg == "--data-dir" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--data-dir="):
            value = arg.split("=", 1)[1]
        else:
            continue
        os.environ["KAPI_DATA_DIR"] = os.path.abspath(os.path.expanduser(value))


def main() -> None:
    from kapi.runtime import startup

    startup.pause()
    _apply_data_dir(sys.argv[1:])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    import django
    from django.core.management import execute_from_command_line

    try:
        # What execute_from_command_line does first; here, so that the
        # collector runs again before the command does (kapi.runtime.startup).
        django.setup()
    finally:
        startup.resume()
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
