"""What every app stands on: audit, tokens and bearer auth, API input, access and roles, sign-in throttling, the
per-catalog-version cache."""
