"""Strategies of the built-in resource types, one module per type."""
