"""memtrove's REST interface (``memtrove serve``): a FastAPI app over one Vault.

``create_app(vault, token=..., allowed_hosts=...)`` builds it; the caller owns the vault.
Routes (JSON in and out; OpenAPI docs at ``/docs``, schema at ``/openapi.json``)::

    GET  /health                      status, version, documents, embeddings pending
    GET  /stats                       vault status plus index health
    POST /search                      {query, mode, collection, content_type, since, until,
                                       min_score, intent, compact, limit}
    POST /retrieve                    the same; mode auto runs the full query pipeline
    GET  /documents/{docid}           one document
    GET  /documents?pattern=&max_bytes=&max_documents=
    GET  /timeline/{docid}?before=&after=&same_collection=
    GET  /graph/similar/{docid}?limit=
    POST /documents/{docid}/pin       {unpin?}
    POST /documents/{docid}/snooze    {until?, unsnooze?}   (until: now + 30 days)
    POST /documents/{docid}/forget
    GET  /collections
    GET  /sessions?limit=
    GET  /lifecycle/status
    POST /reindex                     {collection?, embed?}
    GET  /export                      every document, streamed JSON

Who may call it (see :mod:`memtrove.api.guard`): a Host header naming this server (421),
no other site's Origin (403), the bearer token when one is set (401), and
``Content-Type: application/json`` on every POST (415). No CORS headers, ever.
Caps: bodies at most 1 MB (413), every ``limit`` at most 50, unknown body fields 422.
Errors: ``{"error": "<one line>"}`` with the status a :class:`~memtrove.MemtroveError`
carries (400 bad input, 404 unknown docid, 409 ambiguous docid, ...), 401 for a missing or
wrong token, 500 ``internal error`` with no traceback; no error names a path of the server.
"""

from memtrove.api.app import create_app

__all__ = ["create_app"]
