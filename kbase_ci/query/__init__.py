"""Agent queries over the committed index: each declared once in the query registry
(`tools`: its parameters, how it runs, its text form), where the index comes from
(`discovery`), how fresh it is (`freshness`, with changed notes scored as a rebuild
would: `overlay`), the answers (search, read, links, explore, unlinked `mentions`,
context (`contextseeds`, `sectionfit`) and `bundle`, graph, gaps, status, ...) as typed
records (`answer`: their JSON at the edge; what a walk of the link graph says of itself:
`traversalinfo`), the words their choices take (`choices`), how far to trust a search
hit (`evidence`, `verdict`; a misspelt word read as the word meant: `misspell`), what an
answer costs an agent (`payload`, the lists it may cut, the primary one last:
`answerlists`), and which notes an unknown name means (`namesearch`)."""
