"""Pure code of the telemetry sub-domain: spans read into executions, duration histograms, the runtime safety checks."""
