"""The sync's change-log cursor becomes the runtime's ``sync`` feed cursor
(``kapi_feed_cursor``, owned by storage), its wake flag a row of
``kapi_wake_flag`` (named ``sync`` since 0010 of kapi)."""

from django.db import migrations

_MOVE_CURSOR = """
INSERT INTO kapi_feed_cursor (consumer, revision)
SELECT 'sync', revision FROM sync_change_cursor WHERE id = 1
ON CONFLICT (consumer) DO NOTHING;
-- The sync's timer named a task that is gone (kapi.sync.sweep).
DELETE FROM kapi_due_timer WHERE name = 'sync';
"""


class Migration(migrations.Migration):

    dependencies = [
        ('sync', '0004_work_items_on_the_runtime'),
    ]

    operations = [
        migrations.RunSQL(_MOVE_CURSOR, migrations.RunSQL.noop),
        migrations.DeleteModel(name='ChangeCursor'),
    ]
