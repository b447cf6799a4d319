"""Process-level plumbing: data directory, embedded PostgreSQL and Redis, TLS, serve."""
