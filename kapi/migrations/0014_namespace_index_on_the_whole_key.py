"""``kapi_object_namespace`` becomes an index on (namespace, group, resource,
name): the whole key, led by the namespace.

The one-column index served the queries of a whole namespace (its deletion,
the admin's browsing) and stood in the way of every lookup by key. Without
statistics (a new database before its first autoanalyze) or with statistics
that do not know the namespace (taken just after a purge), PostgreSQL
estimates one row for ``namespace = $3`` as for the unique key, and the
smaller index costs less: a get or update by key read every object of the
namespace (EXPLAIN of the prepared get on a new database: ``Index Scan using
kapi_object_namespace``, the other key columns as a filter). With the whole
key in it, whichever of the two indexes the planner takes finds the one row.
Not unique: the key's own index already enforces that, and a second check on
every insert would cost a search for nothing.
"""

from django.db import migrations

SQL = """
CREATE INDEX kapi_object_namespace_key ON kapi_object (namespace, "group", resource, name);
DROP INDEX kapi_object_namespace;
ALTER INDEX kapi_object_namespace_key RENAME TO kapi_object_namespace;
"""

REVERSE = """
CREATE INDEX kapi_object_namespace_only ON kapi_object (namespace);
DROP INDEX kapi_object_namespace;
ALTER INDEX kapi_object_namespace_only RENAME TO kapi_object_namespace;
"""


class Migration(migrations.Migration):
    dependencies = [("kapi", "0013_keep_pages_after_purge")]
    operations = [migrations.RunSQL(SQL, REVERSE)]
