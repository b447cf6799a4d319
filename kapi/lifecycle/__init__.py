"""The deletion lifecycle: garbage collection, namespace termination, default
ServiceAccounts and the Events the workers record (Celery tasks in ``tasks``)."""
