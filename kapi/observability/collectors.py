"""Metrics read at scrape time from the database and the broker.

These are facts about shared state, not about one process, so the process that
answers the scrape reads them once (kube reads ``apiserver_storage_objects``
from etcd the same way) instead of every process counting them:

* ``apiserver_storage_objects`` by resource;
* ``kapi_change_log_rows`` and ``kapi_change_log_compacted_revision`` (etcd's
  ``etcd_debugging_mvcc_db_total_size``-like view of the history kept);
* ``kapi_celery_queue_length`` by queue (tasks waiting in the broker).

A source that cannot be read (the database or broker is down) is skipped and
counted in ``kapi_scrape_errors``; the scrape itself still answers.
"""

from __future__ import annotations

import logging

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

__all__ = ["SharedStateCollector"]

log = logging.getLogger(__name__)

_QUEUES = ("celery",)


class SharedStateCollector(Collector):
    """Reads the database and the broker when ``/metrics`` is scraped."""

    def collect(self):
        errors = GaugeMetricFamily(
            "kapi_scrape_errors", "Sources that could not be read in this scrape.",
            labels=["source"],
        )
        try:
            yield from self._database()
        except Exception as exc:
            log.warning("metrics: database not readable: %s", exc)
            errors.add_metric(["database"], 1)
        try:
            yield from self._broker()
        except Exception as exc:
            log.warning("metrics: broker not readable: %s", exc)
            errors.add_metric(["broker"], 1)
        yield errors

    @staticmethod
    def _database():
        from kapi.storage import default_storage

        storage = default_storage()
        objects = storage.count_by_resource()
        rows, compacted = storage.change_log_size(), storage.compacted_revision()
        family = GaugeMetricFamily(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind.",
            labels=["resource"],
        )
        for (group, resource), count in objects.items():
            family.add_metric([f"{resource}.{group}" if group else resource], count)
        yield family
        yield GaugeMetricFamily(
            "kapi_change_log_rows", "Rows in the change log (watch history).", value=rows
        )
        yield GaugeMetricFamily(
            "kapi_change_log_compacted_revision",
            "The change log holds no history at or below this revision.",
            value=compacted or 0,
        )

    @staticmethod
    def _broker():
        from django.conf import settings

        url = settings.CELERY_BROKER_URL
        if not url.startswith(("redis://", "rediss://", "unix://", "redis+socket://")):
            return
        import redis

        client = redis.Redis.from_url(
            url.replace("redis+socket://", "unix://"), socket_timeout=1, socket_connect_timeout=1
        )
        try:
            family = GaugeMetricFamily(
                "kapi_celery_queue_length", "Tasks waiting in a Celery queue.", labels=["queue"]
            )
            for queue in _QUEUES:
                family.add_metric([queue], client.llen(queue))
            yield family
        finally:
            client.close()
