"""Compaction marks: which revision the horizon had reached at what time."""

from django.db import migrations

SQL = """
CREATE TABLE kapi_compaction_mark (
  revision bigint PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX kapi_compaction_mark_at ON kapi_compaction_mark (at);
"""


class Migration(migrations.Migration):
    dependencies = [("kapi", "0002_resource_version")]
    operations = [migrations.RunSQL(SQL, "DROP TABLE kapi_compaction_mark;")]
