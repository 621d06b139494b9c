"""Conversation import: reading chat exports into exchanges, and moving vaults in and out."""
