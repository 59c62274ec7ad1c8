"""Card-string writes, each in one transaction with its audit event: a person's edits (`translations`),
imports (`imports`), recomputing the checks' findings (`findings`) and the demo strings (`demo`)."""
