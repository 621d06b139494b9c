"""What names a vault: a SQLite file's path, or a database server's URL.

A vault location is a ``Path`` (or a string naming a file) for a SQLite vault, and a string
starting with ``postgresql://`` or ``postgres://`` for a vault on PostgreSQL
(:func:`is_server_url` tells them apart, everywhere). A URL stays a string: ``Path`` would
fold its ``//``. A URL may hold a password, so what is shown, logged, compared across
processes or written to a file is :func:`shown_location`, the URL without it.

Standard library only (``urllib.parse`` and ``hashlib`` on first use), so the hooks' fast
path and the storage layer can both use it.
"""

from __future__ import annotations

__all__ = [
    "SERVER_SCHEMES",
    "has_password",
    "is_server_url",
    "location_key",
    "scratch_location",
    "shown_location",
    "url_schema",
]

SERVER_SCHEMES = ("postgresql://", "postgres://")


def is_server_url(location: object) -> bool:
    """Whether ``location`` is a server vault's URL (a string, never a ``Path``)."""
    return isinstance(location, str) and location.lstrip().lower().startswith(SERVER_SCHEMES)


def shown_location(location: object) -> str:
    """``location`` fit to show: a URL without its password (``user:password@`` or a
    ``password=`` parameter; user, host, port, database and the other parameters kept), a
    file's path as it is."""
    if not is_server_url(location):
        return str(location)
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(str(location).strip())
    if "@" in parts.netloc:
        credentials, _, host = parts.netloc.rpartition("@")
        user = credentials.partition(":")[0]
        parts = parts._replace(netloc=f"{user}@{host}" if user else host)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(key == "password" for key, _ in query):
        parts = parts._replace(query=urlencode([(k, v) for k, v in query if k != "password"]))
    return urlunsplit(parts)


def has_password(location: object) -> bool:
    """Whether ``location`` is a server's URL holding a password (left out where it is shown
    or written)."""
    return is_server_url(location) and shown_location(location) != str(location).strip()


def location_key(location: object) -> str:
    """A short name for ``location`` (16 hex digits of the SHA-256 of its shown form): the
    same vault under another password has the same key."""
    import hashlib

    shown = shown_location(location)
    return hashlib.sha256(shown.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def url_schema(location: str, default: str = "memtrove") -> str:
    """The ``schema`` parameter of a server vault's URL, as written (``default`` without
    one)."""
    from urllib.parse import parse_qsl, urlsplit

    query = parse_qsl(urlsplit(location.strip()).query, keep_blank_values=True)
    return next((value for key, value in query if key == "schema"), default)


def scratch_location(location: str, tag: str) -> str:
    """A server vault's URL with its schema replaced by a scratch schema beside it
    (``<schema>_scratch_<tag>``), password and other parameters kept."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(location.strip())
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "schema"]
    kept.append(("schema", f"{url_schema(location)}_scratch_{tag}"))
    return urlunsplit(parts._replace(query=urlencode(kept)))
