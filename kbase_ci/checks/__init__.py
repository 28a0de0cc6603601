"""`kbase check` and the pre-commit hooks: the ordered check `checkregistry` and its `rules`
(one module per check), how much each finding weighs and which are silenced (`policy`),
what one hook run reports on (`hookbatch`), what the commit changes (`stagedchanges`,
`notechanges`, the links it breaks: `breakage`, the lines it wrote: `writtenlines`,
`anchorfate`, `swappedstore`, a staged `configchange`), which findings it
introduces (`newonly`, with the PR report's `findingmatch`), confident "did you mean"
(`suggestions`), and repairing links (`linkfix`, `notemove`). Never imports the index,
queries or numeric libraries."""
