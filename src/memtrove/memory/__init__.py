"""The agent's own memory: labelled entries in stores (:mod:`.entries`), near-duplicate
review (:mod:`.dedup`), store hygiene (:mod:`.hygiene`), the tool-call extraction queue
(:mod:`.queue`, :mod:`.redact`) and the prediction and behavior engines (:mod:`.rules`)."""
