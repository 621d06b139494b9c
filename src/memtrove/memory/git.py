"""The little of git the memory store needs: the repository root, the current branch and
the branches that exist. Any failure (no git, not a repository, a timeout) answers None."""

from __future__ import annotations

from pathlib import Path

__all__ = ["current_branch", "list_branches", "project_store_for", "repository_root"]

GIT_TIMEOUT = 5.0


def _git(directory: Path, *arguments: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(directory), *arguments],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, ValueError, subprocess.SubprocessError):  # ValueError: a NUL in the path
        return None
    return done.stdout if done.returncode == 0 else None


def repository_root(directory: Path) -> Path | None:
    out = _git(directory, "rev-parse", "--show-toplevel")
    return Path(out.strip()) if out and out.strip() else None


def current_branch(directory: Path) -> str | None:
    out = _git(directory, "symbolic-ref", "--quiet", "--short", "HEAD")
    return out.strip() or None if out else None


def list_branches(directory: Path) -> list[str] | None:
    """Local branch names, or None outside a git repository."""
    out = _git(directory, "for-each-ref", "--format=%(refname:short)", "refs/heads")
    if out is None:
        return None
    return [line.strip() for line in out.splitlines() if line.strip()]


def project_store_for(directory: Path) -> str:
    """The project store's (unslugified) name: the repository's folder, else ``directory``'s."""
    root = repository_root(directory)
    return (root or directory.resolve()).name or "project"
