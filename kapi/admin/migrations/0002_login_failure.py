import django.db.models.functions.datetime
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("kapi_admin", "0001_initial")]

    operations = [
        migrations.CreateModel(
            name="LoginFailure",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("scope", models.CharField(max_length=8)),
                ("key", models.CharField(max_length=254)),
                ("at", models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
            ],
            options={
                "db_table": "kapi_admin_login_failure",
                "indexes": [models.Index(fields=["scope", "key", "at"], name="kapi_login_failure_key_at")],
            },
        ),
    ]
