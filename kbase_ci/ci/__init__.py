"""`kbase ci`: the GitHub Actions side of kbase.

`job` is the flow of one run; `event` reads the runner's environment and event payload;
`prreport` compares a PR's head with its merge base (`revisions`, `conceptgaps`);
`cireport` holds the report, the records its JSON is written from and read back from;
`render` turns it into Markdown and
annotations, `outputs` writes them; `github` talks to the REST API
and `comment` keeps one living PR comment; `indexjob` rebuilds and publishes the index
branch on push; `artifact` reads a report back, as data, in the `workflow_run` companion.
"""

from kbase_ci.extras import require

require("ci", "kbase_ci.ci (`kbase ci`)")
