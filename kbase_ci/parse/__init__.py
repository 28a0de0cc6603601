"""Bytes of one note -> `ParsedNote` (kbase_ci.parsed): tree-sitter blocks (`grammar`,
`parser`), links and tags in inline text (`inline`, `linksyntax`), YAML frontmatter and
the links in its `properties`, sections (`outline`), heading and block anchors
(`anchors`), `kbase-ignore` comments (`suppressions`), what of the text is `prosemask`,
concept `conceptmentions` in it (which candidates are terms: `termrules`) and mentions of given
note names (`namematch`).
Knows nothing of other notes, the vault or git."""
