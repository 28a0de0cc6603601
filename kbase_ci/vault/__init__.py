"""A vault: which files are notes (`notefiles`), what `.kbase.yml` says (`config` and the
sections it validates: the checks' `checkconfig`, `notetypes`/`typeconfig`, `scopeconfig`,
over `yamlconfig`), the parse cache and note store (`cache`, `notestore`, `scanner`;
summaries of notes left unparsed from a published index, `indexhints`, checked against
the notes' text by `hintcheck`), how links resolve
(`resolver`, over the Obsidian rules that need no vault: `linkrules`), how one is
re-spelled (`rewrite`, `fileedit`), the note-to-note link graph (`linkgraph`), user
regexes on a linear-time engine (`userregex`), and where every writer may write
(`safefs`; how it writes, atomically, is kbase_ci.state's)."""
