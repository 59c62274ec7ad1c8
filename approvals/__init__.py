"""HITL approvals: the suspend policy, approval requests, decisions, single-use consumption, expiry.

This app may import catalog; catalog never imports it (tests/test_architecture.py).
"""
