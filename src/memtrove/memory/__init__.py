"""The agent's own memory: labelled entries in stores (:mod:`.entries`), near-duplicate
review (:mod:`.dedup`), store hygiene (:mod:`.hygiene`), the tool-call extraction queue
(:mod:`.queue`, secrets redacted by :mod:`memtrove.security.redaction`) and the prediction and behavior engines (:mod:`.rules`)."""
