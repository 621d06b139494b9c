"""Storage: the one SQLite file, its connection settings and its migrations."""
