"""Bytes of one note -> `ParsedNote` (kbase_ci.parsed): tree-sitter blocks (`grammar`,
`parser`), links and tags in inline text (`inline`, `linksyntax`), YAML frontmatter and
the links in its `properties`, sections (`outline`), heading and block anchors
(`anchors`), `kbase-ignore` comments (`suppressions`) and concept `mentions` (which
candidates are terms: `termrules`). Knows nothing of other notes, the vault or git."""
