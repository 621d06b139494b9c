"""The PostgreSQL engine of the storage seam (:mod:`memtrove.db.engine`): the connection
(psycopg 3, the advisory write lock) and the catalogue."""
