"""The horizon waits for the transactions that took a resourceVersion, and only
for them.

Before, ``kapi_rv_horizon()`` waited for every transaction holding a
transaction id, whatever it wrote: the lifecycle work table, the feed's
cursor, the request-origin rows, change-log compaction, an operator's psql
session. Every consistent read waits on the horizon, so any long background
transaction stalled every request (issue #20: a compaction running for
minutes made each request wait the full 10 s and fail).

Now ``kapi_next_rv()`` also takes a transaction-scoped advisory lock keyed by
the backend (``pg_advisory_xact_lock(class, pid)``: one key per backend, so
writers never wait on each other, and no lock-table hot spot), after assigning
the transaction id and before taking the version. The horizon reads the
sequence, then collects, in ONE read of ``pg_locks`` (one snapshot of the lock
table), the transaction-id locks of the backends holding that advisory lock,
and waits until those are released, as before (the xid lock is released only
after the transaction has left the proc array, so its rows are then visible).

Why nothing is missed: a writer whose version is at or below the sequence
value read took the advisory lock before that read; it holds it, and its xid
lock, until it ends. A subtransaction that took a version and rolled back
releases the advisory lock with its rows, and nothing of it needs waiting for.
"""

from importlib import import_module

from django.db import migrations

#: First key of the writers' advisory locks ("kapi" "rv": 0x6B72).
WRITER_CLASS = 0x6B72

#: plpgsql: the last resourceVersion handed out, into ``seq``.
READ_SEQUENCE = """SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END
    INTO seq FROM kapi_resource_version;"""

#: SQL: the transaction ids (column ``x``) of the backends other than this one
#: that hold the writers' advisory lock, in one read of ``pg_locks``.
WRITERS_IN_FLIGHT = f"""SELECT unnest(array_agg(l.transactionid) FILTER (WHERE l.locktype = 'transactionid')) AS x
    FROM pg_locks l
    WHERE l.granted AND l.pid <> pg_backend_pid()
      AND ((l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock')
           OR (l.locktype = 'advisory' AND l.classid = {WRITER_CLASS} AND l.objsubid = 2))
    GROUP BY l.pid
    HAVING bool_or(l.locktype = 'advisory')"""

SQL = rf"""
CREATE OR REPLACE FUNCTION kapi_next_rv() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_current_xact_id();
  PERFORM pg_advisory_xact_lock({WRITER_CLASS}, pg_backend_pid());
  RETURN nextval('kapi_resource_version');
END
$$;

CREATE OR REPLACE FUNCTION kapi_rv_horizon(timeout_ms integer DEFAULT 10000) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  seq bigint;
  running xid[];
  deadline timestamptz;
BEGIN
  {READ_SEQUENCE}
  SELECT array_agg(x) INTO running FROM (
    {WRITERS_IN_FLIGHT}
  ) writers;
  IF running IS NULL THEN
    RETURN seq;
  END IF;
  deadline := clock_timestamp() + make_interval(secs => timeout_ms / 1000.0);
  LOOP
    SELECT array_agg(l.transactionid) INTO running FROM pg_locks l
      WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
        AND l.transactionid = ANY(running);
    EXIT WHEN running IS NULL;
    IF clock_timestamp() > deadline THEN
      RAISE EXCEPTION 'kapi: writes in flight did not finish within % ms', timeout_ms
        USING ERRCODE = '57014';
    END IF;
    PERFORM pg_sleep(0.0002);
  END LOOP;
  RETURN seq;
END
$$;
"""

#: 0002's kapi_next_rv and 0004's horizon, for unapplying.
REVERSE = import_module("kapi.migrations.0004_horizon_xid_locks").SQL + r"""
CREATE OR REPLACE FUNCTION kapi_next_rv() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_current_xact_id();
  RETURN nextval('kapi_resource_version');
END
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("kapi", "0007_request_origin")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
