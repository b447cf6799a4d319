"""A generation number bumped by every write to Django's users and groups.

API processes cache the identity of a Django user's token (``kapi.auth.
djangousers``) and look at this one row at most every 0.25 s: a deactivated or
deleted user, or a change of groups, reaches every process within that time,
whichever way the write was made (admin, manage.py, SQL). The bump is an UPDATE
of one row inside the writing transaction, so a reader sees the new number only
once the change itself is visible.
"""

from django.db import migrations

FORWARD = """
CREATE TABLE kapi_auth_generation (id integer PRIMARY KEY, generation bigint NOT NULL);
INSERT INTO kapi_auth_generation VALUES (1, 0);
CREATE FUNCTION kapi_bump_auth_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE kapi_auth_generation SET generation = generation + 1 WHERE id = 1;
  RETURN NULL;
END $$;
CREATE TRIGGER kapi_auth_user_changed AFTER UPDATE OR DELETE OR TRUNCATE ON auth_user
  FOR EACH STATEMENT EXECUTE FUNCTION kapi_bump_auth_generation();
CREATE TRIGGER kapi_auth_user_groups_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON auth_user_groups
  FOR EACH STATEMENT EXECUTE FUNCTION kapi_bump_auth_generation();
CREATE TRIGGER kapi_auth_group_changed AFTER UPDATE OR DELETE OR TRUNCATE ON auth_group
  FOR EACH STATEMENT EXECUTE FUNCTION kapi_bump_auth_generation();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS kapi_auth_group_changed ON auth_group;
DROP TRIGGER IF EXISTS kapi_auth_user_groups_changed ON auth_user_groups;
DROP TRIGGER IF EXISTS kapi_auth_user_changed ON auth_user;
DROP FUNCTION IF EXISTS kapi_bump_auth_generation();
DROP TABLE IF EXISTS kapi_auth_generation;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("kapi", "0005_lifecycle"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
