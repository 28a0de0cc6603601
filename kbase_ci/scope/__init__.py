"""Scoped indexes (docs/scopes.md): a separate, complete index holding only some notes.
`select` picks the notes, `scopebuild` builds them as an index (`donor` lends the main index's
vectors; one build of a scope at a time, under a kbase_ci.state lock), `source` opens one
for a query. Their
declarations are `.kbase.yml` settings (kbase_ci.vault.scopeconfig); where they live in
an index folder is kbase_ci.index.scopes."""
