"""Typed notes (handover, question, answer, discovery, decision): `completeness` against
their type, `scoring`, `placeholders` and `sectionitems` (what a section says),
`fieldvalues`, `skeleton` (`kbase new`), `latest` (`kbase handover latest`), and
`handovers` across a vault or a PR."""
