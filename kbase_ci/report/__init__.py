"""Output formats shared by the CLI and CI: findings as text, JSON and GitHub annotations
(`findings`), SARIF (`sarif`), and escaping for each place untrusted text lands
(`escape`)."""
