"""memtrove over the Model Context Protocol: ``memtrove mcp`` (stdio, or ``--http``).

:mod:`memtrove.mcp.tools` holds the tools as plain functions over a vault;
:mod:`memtrove.mcp.server` (the only module importing the MCP SDK, which is slow to import)
registers them. Import the server module only when serving.
"""

__all__ = ["DEFAULT_HTTP_PORT"]

DEFAULT_HTTP_PORT = 7439  # ``memtrove mcp --http``; the REST API (``memtrove serve``) has 7438
