"""The graph over the vault: typed edges between documents (:mod:`.relations`) and
subject-predicate-object facts about named entities (:mod:`.triples`)."""
