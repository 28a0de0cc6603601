"""The sections of docs/checks.md on weighing findings: severity, suppressions, the
hook's new-only rule and the config keys for them (`docs.render` puts them in place)."""

from __future__ import annotations

SEVERITY_EXAMPLE = """\
checks:
  severity:
    KB103: error          # a code: an ambiguous name now fails
    KB2: warning          # a code prefix: every tag code only warns
    handover: off         # a check name: not run at all
  per_path:
    "reference/**": [KB103]          # not reported in these notes (globs as vault.exclude)
    "journal/**": [tags, KB101]
links:
  unresolved: warning     # forward links to notes not written yet: reported, not failing
  unresolved_per_path:
    "drafts/**": off      # the first glob that matches wins
    "published/**": error
"""

SEVERITY = """\
## Severity

Every code has a default severity (the column above). An **error** fails `kbase check`
(exit 1); a **warning** is printed, marked `(warning)`, and fails only with
`--fail-on warning` (in a hook: `args: [--fail-on, warning]` in
`.pre-commit-config.yaml`; for `kbase ci` and the action's `fail-on` input, `new,warning`
or `all,warning`: docs/action.md). Exit 1 means a finding at or above `--fail-on`
remains; the summary line says when only warnings were found ("not failing").

```yaml
{example}```

- `checks.severity` takes a code, a code prefix or a check name, like `--select`; for a
  finding the most specific word wins (a code over a longer prefix over a shorter one
  over a check name). `off` is `ignore`: the code is not even looked for. Without an
  entry a code has its default, and a rule may report a weaker case of an error code as
  a warning (KB402's "check the code" phrases in free text).
- `checks.per_path`: path glob -> codes, prefixes or check names not reported in the
  notes the glob matches (ruff's `per-file-ignores`).
- `links.unresolved` weighs links to notes that do not exist (KB101/KB102 naming a note,
  not an attachment: a missing picture stays an error) when no change being checked
  explains them: a forward link to a note not yet written, an everyday Obsidian habit.
  A link that a rename or deletion in this commit (or, in CI, this PR) broke is always
  an error, reported with its cause. `links.unresolved_per_path` sets it per folder.
- A word that names no check or code is a config error at its line
  (`.kbase.yml:4:5: KB900 ... names KB1O3, which is no check, code or code prefix`),
  exit 2, whichever command reads the config.
- Every output carries the severity: text `(warning)`, JSON `severity` per finding and
  `summary.fail_on` / `summary.failing`, SARIF `level` (and each rule's
  `defaultConfiguration.level`), GitHub `::warning` / `::error` annotations.

### Warnings in the pre-commit hook

pre-commit shows a hook's output only when the hook fails, and a commit with warnings
alone passes. So the check hooks are `verbose: true` in `.pre-commit-hooks.yaml`: the
person committing sees every warning the commit introduces (KB205, KB103, KB901, ...):

```text
kbase check (input, links, sections, tags, frontmatter, handover, suppressions)...Passed
- hook id: kbase-check
- duration: 0.48s

notes/A.md:5:6: KB205 (warning) #Rust is spelled in another case in other notes: \
#rust (1 note); did you mean #rust?
kbase: 1 new (0 error(s), 1 warning(s)) in 1 file(s) (not failing: warnings fail with \
--fail-on warning); 2 of 5 notes checked
```

A clean commit prints one line there: `kbase: 1 of 5 notes checked, no problems`
(tests/slow/test_precommit.py commits both through real pre-commit).

To keep it quiet, in `.pre-commit-config.yaml`: `verbose: false` on the hook (warnings
are then seen in `kbase check`, the editor and CI only), or `args: [--fail-on, warning]`
to make them block instead; or turn a code off for good with `checks.severity` (`KB205:
off`). `kbase-fix-links` stays quiet unless it rewrote files.
"""

SUPPRESSIONS = """\
## Suppressions

Inline, in the note itself, for one place that is right as it is:

```markdown
<!-- kbase-ignore KB101 -->
A link to [[Next Quarter Plan]], written next week.

Text [[Draft]] %% kbase-ignore KB101 -- kept until the draft lands %%

<!-- kbase-ignore-file KB103 -->
```

- `<!-- kbase-ignore CODES -->` or Obsidian's `%% kbase-ignore CODES %%`: alone on its
  line, it silences the next non-blank line; sharing a line with text, that line.
  `kbase-ignore-file` silences the whole note. CODES are codes, prefixes or check names
  separated by spaces or commas; none at all means every code; ` -- ` starts a reason.
- Comments in code (fenced or indented blocks, code spans) are text, not suppressions,
  and so are comments in the frontmatter: use `kbase-ignore-file` or `checks.per_path`
  for frontmatter findings. Only a real comment counts: the same text inside math
  (`$$ ... $$`, `$...$`), a wikilink, a link destination, an HTML attribute value, after
  a backslash or inside another comment silences nothing (docs/security.md).
- A suppression that silenced nothing is reported as KB901 (a warning; like ruff's
  RUF100), so stale ones do not pile up; so is a word in one that names no check or
  code. A suppression is called unused only when the run looked for every code it
  names (`--select tags` cannot tell whether a `kbase-ignore KB101` is still needed).
  `checks.severity: {KB901: off}` turns this off.
"""

SUMMARY = ("kbase: 1 new (1 error(s), 0 warning(s)) in 1 file(s), 2 pre-existing (not "
           "blocking; --all-findings shows them); 1 of 7 notes checked")

NEW_ONLY = """\
## The hook blocks what the commit introduces

`kbase check --staged` (the `kbase-check` hook) reports and fails on the findings this
commit introduces, not on problems the notes already had at HEAD:

```text
Notes.md:5:9: KB101 [[Brand New Gap]]: no note named `Brand New Gap`
{summary}
```

- Findings are matched with HEAD's as the PR report matches a PR's with its merge base
  (`kbase_ci/checks/findingmatch.py`, one matcher for both): same path after this
  commit's renames, same code, same message without positions and "did you mean". Of
  several identical findings in one note, those on lines the commit wrote are new.
- Links this commit breaks (renames, deletions, removed headings) are new by
  definition, and so is every finding of a note the commit adds.
- `--all-findings` reports and fails on every finding of the checked notes, old ones
  too; the JSON output lists the old ones under `pre_existing` either way.
- Cost: HEAD is asked only when a finding is left, and only about the notes holding
  one, checked against the staged notes with the changed ones swapped back (their HEAD
  versions are parsed anyway, cache first) and, for an edit that renames, adds or
  removes nothing links can find, the resolver the staged check built. On the 38k-note
  tldr vault a one-note edit costs the same CPU as before with or without old findings
  in the note (docs/hook-speed.md, "New-only").
- A staged `.kbase.yml` is validated by the hook (a commit that only changes it is
  checked: `vault.folderz` is a KB900 at its line, exit 2), and a changed policy
  re-checks the notes it can affect against HEAD's policy: a new `tags.allowed` checks
  the notes with tags, a change to `vault`, `links`, `checks`, `frontmatter` or `types`
  every note; `index`, `embeddings`, `scopes` and `handover` re-check nothing.
- **Which `.kbase.yml`**: `kbase check --staged` and `kbase fix --staged` judge the
  commit with the `.kbase.yml` staged in git's index (none staged: the defaults), never
  the work tree's: an unstaged edit of it neither loosens the hook nor hides a staged
  file's KB900, whatever runs the hook (pre-commit, lefthook, husky, a plain
  `.git/hooks/pre-commit`, an agent). `--config FILE` still names a file explicitly; a
  staged symbolic link is read as the work tree's file. Without `--staged` the work
  tree's file is used, as before.
- **A policy change is said, not hidden**: when the staged `.kbase.yml` judges notes
  otherwise than HEAD's (`checks`, `vault`, `links`, `tags`, `frontmatter`, `types`), the
  commit is checked again under HEAD's settings and the hook prints (stderr; JSON:
  `policy_change`) the sections changed and what HEAD's settings would report that the
  new ones do not, e.g. `B.md:3:5: KB101 [[Old]]: `Old.md` was deleted in this commit`
  after `checks.severity: {{links: off}}`. It does not fail the commit: a team may change
  its policy. The PR report does the same against the base (docs/action.md).
- `kbase check NEW.md` on a note not yet `git add`ed checks it as it is in the work tree
  (untracked notes resolve as Obsidian sees them) and says it is untracked; files git
  ignores are still left out, with the usual notice.
"""
