"""Worker leases name their holder, so a lease left by a killed process is reclaimed at once.

Until now a lease held by a process that died (``kill -9``, a crash, a closed laptop) blocked
the next run until its TTL ran out. The row now records who holds it: the host name, the pid
namespace (on Linux, so a pid is only compared within the namespace that gave it out), the pid
and the process start time (on Linux the start tick from ``/proc``, so a recycled pid is not
taken for the holder). Rows written before this migration have no holder and simply expire.
"""

NAME = "m011_lease_holders"

STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE worker_leases ADD COLUMN holder_host TEXT",
    "ALTER TABLE worker_leases ADD COLUMN holder_pid_namespace TEXT",
    "ALTER TABLE worker_leases ADD COLUMN holder_pid INTEGER",
    "ALTER TABLE worker_leases ADD COLUMN holder_started INTEGER",
)
