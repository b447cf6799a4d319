"""The resourceVersion sequence, the functions that hand out and bound versions,
and the compaction marker."""

from django.db import migrations

NEXT_RV = r"""
CREATE SEQUENCE kapi_resource_version START 1;

-- Every write takes its version here. The transaction id is assigned FIRST, so a
-- transaction holding a version is always visible as running in any snapshot
-- taken after the version was handed out (kapi_rv_horizon relies on this).
CREATE FUNCTION kapi_next_rv() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_current_xact_id();
  RETURN nextval('kapi_resource_version');
END
$$;

-- A version H such that every transaction that took a version <= H has ended:
-- read the sequence, then (in a later statement, hence a later snapshot) wait
-- for every transaction running at that point. Raises after timeout_ms.
CREATE FUNCTION kapi_rv_horizon(timeout_ms integer DEFAULT 10000) RETURNS bigint
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
    SELECT array_agg(x) INTO running FROM unnest(running) AS x
      WHERE pg_xact_status(x) = 'in progress';
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

CREATE TABLE kapi_compaction (
  id integer PRIMARY KEY CHECK (id = 1),
  revision bigint NOT NULL
);
INSERT INTO kapi_compaction VALUES (1, 0);
"""

DROP = """
DROP TABLE kapi_compaction;
DROP FUNCTION kapi_rv_horizon(integer);
DROP FUNCTION kapi_next_rv();
DROP SEQUENCE kapi_resource_version;
"""


class Migration(migrations.Migration):
    dependencies = [("kapi", "0001_initial")]
    operations = [migrations.RunSQL(NEXT_RV, DROP)]
