"""Operability: Prometheus metrics, structured logs and the request id.

* :mod:`kapi.observability.metrics` – the metric objects (a leaf module: any
  layer may count something);
* :mod:`kapi.observability.collectors` – values read at scrape time (stored
  objects, change log, queue depth);
* :mod:`kapi.observability.exposition` – the ``/metrics`` text, one process or
  all of them (``PROMETHEUS_MULTIPROC_DIR``);
* :mod:`kapi.observability.context` – the request id of the current request or
  task;
* :mod:`kapi.observability.logs` – JSON log lines;
* :mod:`kapi.observability.middleware` – one metric sample and one log line per
  request;
* :mod:`kapi.observability.tasks` – the same for every Celery task, and the
  request id carried from a request into the tasks it causes.
"""
