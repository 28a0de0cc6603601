"""`kbase check` and the pre-commit hooks: the ordered check `registry` and its `rules`
(one module per check), what one hook run reports on (`hookshare`), what the commit
changes (`stagedchanges`, `breakage`, `anchorfate`), and repairing what a move broke
(`linkfix`, `notemove`). Never imports the index, queries or numeric libraries."""
