"""Git: the only package that runs it (import-linter checks that). `process` starts git;
the other modules name the questions: `repo` (roots, HEAD, commits, remotes), `listing`
(ls-files, ls-tree, status), `objects` (cat-file, object ids), `diff` (the staged change
set, a PR's changes), `history`, `worktree` (mv, add), `indexbranch` (the `kbase-index`
branch: refs, plumbing commits, leased pushes)."""
