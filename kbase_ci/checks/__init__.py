"""`kbase check` and the pre-commit hooks: the ordered check `registry` and its `rules`
(one module per check), what one hook run reports on (`hookshare`), what the commit
changes (`stagedchanges`, `breakage`, `anchorfate`), confident "did you mean"
(`suggestions`), and repairing links (`linkfix`, `notemove`). Never imports the index,
queries or numeric libraries."""
