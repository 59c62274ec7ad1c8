"""HITL approval requests arrive with the approvals issue; this app may import catalog, never the reverse."""
