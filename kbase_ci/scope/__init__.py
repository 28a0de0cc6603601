"""Scoped indexes (issue 10): a separate, complete index holding only some notes.

Light on import: `config` imports `spec` while loading `.kbase.yml`.
"""
