"""Writes of the telemetry sub-domain: ingest, retention, verdicts on unknown names."""
