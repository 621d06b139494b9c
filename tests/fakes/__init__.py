"""Deterministic fake backends that tests use in place of real model services."""
