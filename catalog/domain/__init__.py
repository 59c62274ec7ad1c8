"""Pure domain code for the catalog: plain functions over plain values, no Django imports.

A test guards that nothing in this package imports Django.
"""
