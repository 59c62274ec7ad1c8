"""Reads of the telemetry sub-domain: tool health, the unknown-names board."""
