"""The horizon waits for every writer, and until its rows are visible.

Two gaps in the first version, both found by the watch tests:

* ``pg_snapshot_xip()`` lists only running transactions BELOW the snapshot's
  ``xmax``, which is the latest *completed* xid + 1: a writer whose xid was
  assigned after the last completion is running but not listed, so the
  horizon did not wait for it (the two-process consistency test lost events).
* ``pg_xact_status()`` reads the commit log, which says "committed" a moment
  before the transaction leaves the proc array; until then new snapshots do
  not see its rows.

Every transaction holds an exclusive lock on its own xid from assignment
(before ``kapi_next_rv()`` takes a version) until after it has left the proc
array. So: read the sequence, then collect the xid locks held at that point,
then wait until they are all released. Any statement after that sees every
version at or below the returned value that committed.
"""

from django.db import migrations

SQL = r"""
CREATE OR REPLACE FUNCTION kapi_rv_horizon(timeout_ms integer DEFAULT 10000) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  seq bigint;
  running xid[];
  deadline timestamptz;
BEGIN
  SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END
    INTO seq FROM kapi_resource_version;
  SELECT array_agg(l.transactionid) INTO running FROM pg_locks l
    WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
      AND l.pid <> pg_backend_pid();
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


class Migration(migrations.Migration):
    dependencies = [("kapi", "0003_compaction_mark")]
    operations = [migrations.RunSQL(SQL, migrations.RunSQL.noop)]
