"""What keeps secrets and injected instructions out: the redaction engine
(:mod:`.redaction`, shapes in :mod:`.patterns`) and the prompt-injection guard (:mod:`.guard`).
Pure text in, text out; nothing here touches the vault."""
