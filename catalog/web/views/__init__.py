"""Console pages. Thin: parse input, call one selector or service, render."""
