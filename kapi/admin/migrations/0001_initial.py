from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies: list = []

    operations = [
        migrations.CreateModel(
            name="KapiPermissions",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
            ],
            options={
                "verbose_name": "kapi permission",
                "permissions": [
                    ("edit_objects", "Can create, edit and delete Kubernetes objects"),
                    ("reveal_secrets", "Can reveal the values of Secrets"),
                ],
                "managed": False,
                "default_permissions": (),
            },
        ),
    ]
