"""Vacuum keeps the pages of ``kapi_object`` and ``kapi_change`` (``vacuum_truncate = false``).

After a big namespace is purged, vacuum used to cut the emptied pages off the
end of ``kapi_object``, leaving a table of a few pages. The hot statements are
prepared (``kapi.storage.backend.statements``), and PostgreSQL builds a prepared
statement's generic plan from the table's size at that moment: for a table of
three pages a sequential scan is the cheaper plan for a lookup by key. That
plan then stayed while the next writes grew the table back to thousands of
rows, until autoanalyze invalidated it: measured, one ``kbench create`` of
4,000 ConfigMaps right after a purge made 2,732 sequential scans of
``kapi_object`` reading 5.5 million rows (each create's namespace lookup), where
a fresh server makes none. With the pages kept, the table's size still says
what a scan would cost, and the generic plan is the key index.

Truncation also takes an ACCESS EXCLUSIVE lock on the table, which every read
and write waits behind; every write inserts into ``kapi_change`` too, so it
keeps its pages for the same reason. The space is not lost: PostgreSQL reuses
the emptied pages for the next rows (``VACUUM FULL`` gives it back by hand).
"""

from django.db import migrations

TABLES = ("kapi_object", "kapi_change")

SQL = "".join(f"ALTER TABLE {table} SET (vacuum_truncate = false);\n" for table in TABLES)
REVERSE = "".join(f"ALTER TABLE {table} RESET (vacuum_truncate);\n" for table in TABLES)


class Migration(migrations.Migration):
    dependencies = [("kapi", "0012_rv_progress")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
