"""kapi: a Kubernetes-compatible API server on Django and PostgreSQL."""
