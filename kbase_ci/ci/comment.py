"""One living PR comment: found by its hidden marker *and* its author, never duplicated.

Matching the marker alone would let anyone who pastes it steer which comment the bot
edits (and the bot may not edit other people's comments anyway). The author is the
token's user (`GET /user`); a GITHUB_TOKEN or an app token may not read `/user`, and
then the author is `github-actions[bot]`, or whatever `author` names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kbase_ci.ci.github import Forbidden, GitHubClient

ACTIONS_BOT = "github-actions[bot]"
CommentStatus = Literal["created", "updated", "unchanged", "forbidden"]


@dataclass(frozen=True, slots=True)
class CommentResult:
    status: CommentStatus
    number: int
    comment_id: int | None = None
    url: str = ""
    detail: str = ""
    """For `forbidden`: the API's words."""


def comment_author(client: GitHubClient, override: str | None = None) -> str:
    if override:
        return override
    return client.viewer() or ACTIONS_BOT


def _same(a: str, b: str) -> bool:
    return a.replace("\r\n", "\n").strip() == b.replace("\r\n", "\n").strip()


def upsert_comment(client: GitHubClient, number: int, body: str, marker: str, *,
                   author: str | None = None) -> CommentResult:
    """Create the PR's report comment, or update ours in place; leave it alone when the
    body is unchanged. A 403 anywhere returns `forbidden` instead of raising."""
    if marker not in body:
        raise ValueError("the comment body must carry the marker")
    try:
        me = comment_author(client, author)
        ours = [c for c in client.comments(number) if marker in c.body and c.author == me]
        if ours:
            c = ours[0]
            if _same(c.body, body):
                return CommentResult("unchanged", number, c.id, c.url)
            c = client.update_comment(c.id, body)
            return CommentResult("updated", number, c.id, c.url)
        c = client.create_comment(number, body)
        return CommentResult("created", number, c.id, c.url)
    except Forbidden as exc:
        return CommentResult("forbidden", number, detail=str(exc))


def pull_numbers_for(client: GitHubClient, head_sha: str) -> list[int]:
    """Open PRs whose head is `head_sha`, asked of the API: a `workflow_run` payload lists
    no PRs for a fork, and an artifact's own claim is never trusted."""
    found = {p.number for p in client.pulls_for_commit(head_sha)
             if p.head_sha == head_sha and p.state == "open"}
    if not found:
        found = {p.number for p in client.open_pulls() if p.head_sha == head_sha}
    return sorted(found)
