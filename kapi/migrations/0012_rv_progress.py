"""``kapi_rv_progress()``: the horizon's inputs, without waiting.

``kapi_rv_horizon()`` reads the sequence, then the writers in flight, and waits
(polling ``pg_locks`` every 0.2 ms) until they have ended. Each API process's
watch-cache listener asked for it at every announced write, and under a steady
stream of writes there is always one in flight: the listener's backend spent
its time in that loop (about 0.1-0.2 ms of PostgreSQL CPU per write, per
process). ``kapi_rv_progress()`` returns the same two readings once, in the
same order, plus the compaction mark, and leaves the waiting to the caller:
the listener keeps each reading and takes as its horizon the newest sequence
value whose writers have all ended by a later reading (``kapi.storage.watchcache``).

Why that is the horizon: a writer whose version is at or below the sequence
value read took the writers' advisory lock before that read (``kapi_next_rv``,
migration 0008) and holds it until its transaction ends, after it has left the
proc array; so once none of the writers of a reading holds the lock any more,
every version at or below that reading's sequence value is committed (and
visible) or rolled back.
"""

from importlib import import_module

from django.db import migrations

# The same two readings as kapi_rv_horizon(), from the same text.
_HORIZON = import_module("kapi.migrations.0008_horizon_writers")

SQL = rf"""
CREATE OR REPLACE FUNCTION kapi_rv_progress(OUT seq bigint, OUT writers text[], OUT compacted bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  {_HORIZON.READ_SEQUENCE}
  SELECT array_agg(x::text) INTO writers FROM (
    {_HORIZON.WRITERS_IN_FLIGHT}
  ) running;
  SELECT revision INTO compacted FROM kapi_compaction WHERE id = 1;
END
$$;
"""

REVERSE = "DROP FUNCTION kapi_rv_progress();"


class Migration(migrations.Migration):
    dependencies = [("kapi", "0011_work_item_hints_holder")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
