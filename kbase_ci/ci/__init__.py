"""`kbase ci`: the GitHub Actions side of kbase.

`event` reads the runner's environment and event payload; `prreport` compares a PR's
head with its merge base; `records` holds the report and its JSON form; `render` and
`escape` turn it into Markdown, annotations and SARIF; `github` talks to the REST API
and `comment` keeps one living PR comment; `indexjob` rebuilds and publishes the index
branch on push; `artifact` reads a report back, as data, in the `workflow_run` companion.
"""
