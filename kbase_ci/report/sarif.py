"""SARIF 2.1.0 output that GitHub code scanning accepts (one run, rules from the registry)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kbase_ci import __version__
from kbase_ci.checks.checkregistry import all_codes, default_severities
from kbase_ci.parsed import Finding
from kbase_ci.report.findings import display_path

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def to_sarif(findings: Sequence[Finding], root: Path, repo_root: Path | None) -> dict[str, Any]:
    codes = all_codes()
    defaults = default_severities()
    rule_ids = list(codes)
    rules = [
        {
            "id": code,
            "name": f"{check}/{code}",
            "shortDescription": {"text": text},
            "fullDescription": {"text": text},
            "defaultConfiguration": {"level": defaults[code]},
            "properties": {"tags": ["markdown", check]},
        }
        for code, (check, text) in codes.items()
    ]
    base = repo_root or root
    results = []
    for f in findings:
        path = display_path(root, f.path, base).replace("\\", "/")
        # A URI reference: `#`, `?`, `%` and spaces in a note name are data, not syntax;
        # a non-UTF-8 name (surrogate escapes) becomes its own bytes, percent-encoded.
        raw = path.encode("utf-8", "surrogateescape")
        uri = quote(raw, safe="/")
        results.append({
            "ruleId": f.code,
            "ruleIndex": rule_ids.index(f.code) if f.code in codes else -1,
            "level": "error" if f.severity == "error" else "warning",
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": f.line, "startColumn": f.col},
                }
            }],
            # Stable across runs so code scanning tracks an alert instead of re-opening it.
            "partialFingerprints": {
                "kbase/v1": hashlib.sha256(
                    f"{path}\0{f.code}\0{f.message}".encode("utf-8", "surrogateescape")
                ).hexdigest()[:32],
            },
        })
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kbase",
                "semanticVersion": __version__,
                "informationUri": "https://pypi.org/project/kbase-ci/",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
