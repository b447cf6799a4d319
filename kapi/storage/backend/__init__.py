"""kapi's Django database backend: PostgreSQL that fails fast while it is down."""
