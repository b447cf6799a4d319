"""Work items get the hints of the requests since the last run (the sync's
"drift") and a claim token, so that one runtime can run long reconciles (a
Sync) with a lease it extends."""

import django.contrib.postgres.fields
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('kapi', '0010_controller_runtime'),
    ]

    operations = [
        migrations.AddField(
            model_name='workitem',
            name='holder',
            field=models.UUIDField(null=True),
        ),
        migrations.AddField(
            model_name='workitem',
            name='hints',
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=32), default=list, size=None,
            ),
        ),
        migrations.RunSQL(
            "ALTER TABLE kapi_work_item ALTER COLUMN hints SET DEFAULT '{}'",
            migrations.RunSQL.noop,
        ),
    ]
