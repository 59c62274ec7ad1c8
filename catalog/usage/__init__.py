"""Runtime telemetry: what the assistant actually did, from its OpenTelemetry GenAI `execute_tool` spans."""
