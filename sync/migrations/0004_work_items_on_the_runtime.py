"""The sync's work items move to the controller runtime's table
(``kapi_work_item``, ``sync.controllers``). The old rows are dropped (they are
re-derivable); instead every Sync and GitRepository is requested once."""

from django.db import migrations

_REQUEST_ALL = """
INSERT INTO kapi_work_item (controller, key, "group", resource, namespace, name, argument,
                            request_id, hints, generation, attempts, due)
SELECT CASE resource WHEN 'syncs' THEN 'sync' ELSE 'gitrepository' END,
       namespace || '/' || name, "group", resource, namespace, name, '', '',
       ARRAY['resync']::varchar[], 0, 0, now()
FROM kapi_object
WHERE "group" = 'sync.kapi.dev' AND resource IN ('syncs', 'gitrepositories')
ON CONFLICT (controller, key) DO NOTHING
"""


class Migration(migrations.Migration):

    dependencies = [
        ('sync', '0003_scan_wanted'),
        ('kapi', '0011_work_item_hints_holder'),
    ]

    operations = [
        migrations.DeleteModel(name='WorkItem'),
        migrations.RunSQL(_REQUEST_ALL, migrations.RunSQL.noop),
    ]
