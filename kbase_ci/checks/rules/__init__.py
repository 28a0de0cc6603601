"""One module per check of the registry (kbase_ci.checks.checkregistry), each a function of a
`CheckContext` yielding findings with stable codes."""
