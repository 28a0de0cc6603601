"""Agent queries over the committed index: where it comes from (`location`), how fresh it
is (`freshness`, with changed notes scored as a rebuild would: `overlay`), the answers
(search, read, links, explore, status) as records that commands format, how far to trust
a search hit (`evidence`, `verdict`), what an answer costs an agent (`payload`), and
which notes an unknown name means (`namesearch`)."""
