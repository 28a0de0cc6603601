"""Local state: the one home for what kbase keeps on disk between and during commands.
`files` renames files into place (atomic writes, compare-and-swap, directory swaps),
`folders` makes temp folders (hidden from git from their first byte), `locks` takes
locks (filelock), `generations` lets a reader keep the folder generation it opened,
`database` opens SQLite files, `memos` keeps the state store (one table per memo),
`hubcache` finds models in the Hugging Face cache, `downloads` fetches them
(huggingface_hub, capped and timed out through `hubclient`), `threads` tunes BLAS
threads (threadpoolctl), and `bounded` reads and decodes every file kbase did not write
(a regular file, no link out of its tree, a size cap, a decoding budget). Nothing else
in kbase renames, locks, makes temp files or downloads (import-linter and
tests/unit/test_architecture.py check that)."""
