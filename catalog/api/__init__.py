"""The catalog's API endpoints (revisions, findings, owners), mounted by condor_admin.api."""
