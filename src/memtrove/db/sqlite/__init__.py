"""The SQLite engine of the storage seam (:mod:`memtrove.db.engine`): the connection, the
FTS5 text index, the sqlite-vec vector index and the catalogue. The only modules (with the
migrations and the ClawMem importer, whose input is a SQLite file) that write SQL only
SQLite accepts."""
