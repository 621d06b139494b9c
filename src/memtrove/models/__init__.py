"""Model backends: embedders, rerankers and LLMs behind small Protocols."""
