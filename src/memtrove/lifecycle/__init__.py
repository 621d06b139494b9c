"""Lifecycle: leases for long jobs, and later recall, feedback, decay and consolidation."""
