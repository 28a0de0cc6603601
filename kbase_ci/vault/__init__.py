"""A vault: which files are notes (`files`), what `.kbase.yml` says (`config` and the
sections it validates: `notetypes`/`typeconfig`, `scopeconfig`, over `yamlconfig`), the
parse cache and note store (`cache`, `notestore`, `scanner`), how links resolve
(`resolver`, the Obsidian rules), how one is re-spelled (`rewrite`, `fileedit`), the
note-to-note link graph (`linkgraph`), user regexes on a linear-time engine
(`userregex`), and where and how every writer may write (`safefs`, with `generations`
for folders replaced whole while readers hold them)."""
