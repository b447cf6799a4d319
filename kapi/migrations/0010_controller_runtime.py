"""One controller runtime: the lifecycle's work table becomes the runtime's
(``kapi_work_item``, keyed by controller and key), its cursor a row of the
storage's per-consumer change-feed cursors, its ``wanted`` flag a row of
``kapi_wake_flag``. Existing work items and the cursor position are kept."""

from django.db import migrations, models

_MOVE_CURSOR = """
INSERT INTO kapi_feed_cursor (consumer, revision)
SELECT 'lifecycle', revision FROM kapi_lifecycle_cursor WHERE id = 1;
INSERT INTO kapi_wake_flag (name, wanted) VALUES ('lifecycle', true);
-- The lifecycle's timer named a task that is gone (kapi.lifecycle.sweep).
DELETE FROM kapi_due_timer WHERE name = 'lifecycle';
"""


class Migration(migrations.Migration):

    dependencies = [
        ('kapi', '0009_due_timer'),
    ]

    operations = [
        migrations.RemoveConstraint(model_name='work', name='kapi_lifecycle_work_item'),
        migrations.RenameModel(old_name='Work', new_name='WorkItem'),
        migrations.AlterModelTable(name='workitem', table='kapi_work_item'),
        migrations.RenameIndex(
            model_name='workitem', new_name='kapi_work_item_due', old_name='kapi_lifecycle_work_due',
        ),
        migrations.RenameField(model_name='workitem', old_name='kind', new_name='controller'),
        migrations.AlterField(
            model_name='workitem', name='controller', field=models.CharField(max_length=32),
        ),
        migrations.RenameField(model_name='workitem', old_name='uid', new_name='key'),
        migrations.AlterField(
            model_name='workitem',
            name='key',
            field=models.CharField(db_collation='C', max_length=512),
        ),
        migrations.RenameField(model_name='workitem', old_name='policy', new_name='argument'),
        migrations.AlterField(
            model_name='workitem', name='argument', field=models.CharField(blank=True, max_length=32),
        ),
        migrations.AddConstraint(
            model_name='workitem',
            constraint=models.UniqueConstraint(fields=('controller', 'key'), name='kapi_work_item_key'),
        ),
        migrations.CreateModel(
            name='ChangeFeedCursor',
            fields=[
                ('consumer', models.CharField(max_length=64, primary_key=True, serialize=False)),
                ('revision', models.BigIntegerField(default=0)),
            ],
            options={'db_table': 'kapi_feed_cursor'},
        ),
        migrations.CreateModel(
            name='WakeFlag',
            fields=[
                ('name', models.CharField(max_length=64, primary_key=True, serialize=False)),
                ('wanted', models.BooleanField(db_default=False, default=False)),
            ],
            options={'db_table': 'kapi_wake_flag'},
        ),
        migrations.RunSQL(_MOVE_CURSOR, migrations.RunSQL.noop),
        migrations.DeleteModel(name='FeedCursor'),
    ]
