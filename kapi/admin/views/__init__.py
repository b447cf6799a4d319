"""Views of the admin UI, one module per page family."""
