"""Reads, query-count bounded whatever the catalog size."""
