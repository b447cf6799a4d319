"""Registry unit tests import Django-configured modules: configure Django first
(no database is used), so the folder also runs on its own."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()
