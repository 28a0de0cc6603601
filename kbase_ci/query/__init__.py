"""Agent queries over the committed index: where it comes from, how fresh it is, and the
answers (search, read, links, explore, status) as records that commands format."""
