"""Indexing: collections -> documents -> fragments."""
