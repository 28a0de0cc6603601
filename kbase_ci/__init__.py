"""kbase-ci: Git-native tooling for Markdown note vaults."""

__version__ = "0.1.0"
