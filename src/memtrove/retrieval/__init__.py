"""Retrieval: keyword search, snippets, and (later) vectors, fusion, reranking and scoring."""
