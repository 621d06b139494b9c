"""Which project a session worked in: ``session_log.project``, the project store's name
(the session's git repository folder, else its working folder), recorded with the handoff,
so a new session in the same project starts from that project's last handoff rather than
from whatever session ended last anywhere."""

NAME = "m019_session_project"

STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE session_log ADD COLUMN project TEXT",
    "CREATE INDEX session_log_project ON session_log (project, ended_at)",
)
