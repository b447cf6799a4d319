"""The horizon waits until writers are out of the SNAPSHOT, not just the clog.

``pg_xact_status()`` reads the commit log, which says "committed" a moment
before the transaction leaves the proc array; until it does, new snapshots
still treat it as running and do not see its rows. Waiting on
``pg_xact_status`` let a reader that trusted the horizon miss such a row (seen
by the watch tests: an event lost between two delivered ones). Waiting until
each transaction is visible in a fresh snapshot (``pg_visible_in_snapshot``)
closes that window: any later statement's snapshot sees it too.
"""

from django.db import migrations

SQL = r"""
CREATE OR REPLACE FUNCTION kapi_rv_horizon(timeout_ms integer DEFAULT 10000) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  seq bigint;
  running xid8[];
  deadline timestamptz;
BEGIN
  SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END
    INTO seq FROM kapi_resource_version;
  SELECT array_agg(x) INTO running
    FROM pg_snapshot_xip(pg_current_snapshot()) AS x;
  IF running IS NULL THEN
    RETURN seq;
  END IF;
  deadline := clock_timestamp() + make_interval(secs => timeout_ms / 1000.0);
  LOOP
    -- Each statement of a VOLATILE function takes a new snapshot.
    SELECT array_agg(x) INTO running FROM unnest(running) AS x
      WHERE NOT pg_visible_in_snapshot(x, pg_current_snapshot());
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
