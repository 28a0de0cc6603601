"""The few GitHub REST calls `kbase ci` makes, on the standard library's urllib.

Why not PyGithub: installed into a fresh venv it pulls ten distributions (requests,
urllib3, PyJWT, cryptography, PyNaCl, cffi, ...), +30 MB of site-packages, ~7 s of
install on a cold runner and 0.3 s of import, for five endpoints (docs/action.md).
`base_url` is `GITHUB_API_URL`, so GitHub Enterprise Server works unchanged. A 5xx or
a dropped connection is retried once; a 403 is `Forbidden`, which callers treat as
"this token may not write" (a fork PR), not as a failure.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from kbase_ci import __version__
from kbase_ci.errors import GitHubError

_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
_MAX_PAGES = 100


class Forbidden(GitHubError):
    """403: the token lacks the permission (a fork PR's read-only GITHUB_TOKEN)."""


@dataclass(frozen=True, slots=True)
class Comment:
    id: int
    body: str
    author: str
    url: str


@dataclass(frozen=True, slots=True)
class PullRef:
    number: int
    head_sha: str
    state: str


@dataclass(frozen=True, slots=True)
class _Response:
    status: int
    headers: dict[str, str]
    data: Any


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """urllib copies every header, Authorization included, into a redirected request;
    a redirect off the API's origin is refused (it surfaces as the 3xx HTTPError)."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                         headers: Any, newurl: str) -> urllib.request.Request | None:
        old, new = urlsplit(req.full_url), urlsplit(newurl)
        if (old.scheme, old.netloc) != (new.scheme, new.netloc):
            return None
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_SameOriginRedirects)


class GitHubClient:
    """One repository on one GitHub host, with one token (state: none but settings)."""

    def __init__(self, api_url: str, token: str, repository: str, *, timeout: float = 30.0,
                 retry_delay: float = 2.0) -> None:
        self.api_url = api_url.rstrip("/")
        self.repository = repository
        self._token = token
        self._timeout = timeout
        self._retry_delay = retry_delay
        parts = urlsplit(self.api_url)
        self._origin = (parts.scheme, parts.netloc)

    # -- endpoints ---------------------------------------------------------------------
    def viewer(self) -> str | None:
        """Login of the token's user; None for a GITHUB_TOKEN or an app token, which
        may not read `/user` (their comments are by `github-actions[bot]` or the app)."""
        try:
            data = self._request("GET", "/user").data
        except GitHubError as exc:
            if exc.status in (401, 403, 404):
                return None
            raise
        login = data.get("login") if isinstance(data, dict) else None
        return login if isinstance(login, str) else None

    def comments(self, number: int) -> list[Comment]:
        return [_comment(c) for c in self._pages(f"{self._repo()}/issues/{number}/comments")]

    def create_comment(self, number: int, body: str) -> Comment:
        resp = self._request("POST", f"{self._repo()}/issues/{number}/comments", {"body": body})
        return _comment(resp.data)

    def update_comment(self, comment_id: int, body: str) -> Comment:
        resp = self._request("PATCH", f"{self._repo()}/issues/comments/{comment_id}",
                             {"body": body})
        return _comment(resp.data)

    def pulls_for_commit(self, sha: str) -> list[PullRef]:
        return [_pull(p) for p in self._pages(f"{self._repo()}/commits/{sha}/pulls")]

    def open_pulls(self) -> list[PullRef]:
        return [_pull(p) for p in self._pages(f"{self._repo()}/pulls", "state=open")]

    # -- plumbing ----------------------------------------------------------------------
    def _repo(self) -> str:
        return "/repos/" + quote(self.repository, safe="/")

    def _pages(self, path: str, query: str = "") -> list[Any]:
        url: str | None = f"{self.api_url}{path}?per_page=100" + (f"&{query}" if query else "")
        items: list[Any] = []
        for _ in range(_MAX_PAGES):
            if url is None:
                break
            resp = self._request("GET", url)
            if not isinstance(resp.data, list):
                raise GitHubError(f"GET {path}: expected a JSON array", resp.status)
            items.extend(resp.data)
            m = _NEXT.search(resp.headers.get("link", ""))
            url = m.group(1) if m else None
        return items

    def _request(self, method: str, path_or_url: str, body: Any = None) -> _Response:
        url = path_or_url if "://" in path_or_url else self.api_url + path_or_url
        parts = urlsplit(url)
        if (parts.scheme, parts.netloc) != self._origin:
            # A pagination link elsewhere must not receive the token.
            raise GitHubError(f"refusing to send the token to {parts.scheme}://{parts.netloc}")
        data = json.dumps(body).encode() if body is not None else None
        for attempt in (1, 2):
            req = urllib.request.Request(url, data=data, method=method, headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self._token}",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": f"kbase-ci/{__version__}",
                **({"Content-Type": "application/json"} if data is not None else {}),
            })
            try:
                with _OPENER.open(req, timeout=self._timeout) as resp:
                    raw = resp.read()
                    headers = {k.lower(): v for k, v in resp.headers.items()}
                    return _Response(resp.status, headers, json.loads(raw) if raw else None)
            except urllib.error.HTTPError as exc:
                status = exc.code
                message = _message(exc)
                if status >= 500 and attempt == 1:
                    time.sleep(self._retry_delay)
                    continue
                what = f"{method} {parts.path}: HTTP {status}: {message}"
                raise (Forbidden(what, status) if status == 403 else GitHubError(what, status)) \
                    from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt == 1:
                    time.sleep(self._retry_delay)
                    continue
                raise GitHubError(f"{method} {parts.path}: {exc}") from None
            except ValueError as exc:
                raise GitHubError(f"{method} {parts.path}: response is not JSON: {exc}") \
                    from None
        raise AssertionError("unreachable")  # pragma: no cover


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        data = json.loads(exc.read() or b"{}")
    except ValueError:
        return exc.reason if isinstance(exc.reason, str) else ""
    msg = data.get("message") if isinstance(data, dict) else None
    return msg if isinstance(msg, str) else str(exc.reason)


def _comment(c: Any) -> Comment:
    if not isinstance(c, dict) or not isinstance(c.get("id"), int):
        raise GitHubError("a comment in the API response has no id")
    user = c.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    body = c.get("body")
    return Comment(c["id"], body if isinstance(body, str) else "",
                   login if isinstance(login, str) else "",
                   str(c.get("html_url") or ""))


def _pull(p: Any) -> PullRef:
    if not isinstance(p, dict) or not isinstance(p.get("number"), int):
        raise GitHubError("a pull request in the API response has no number")
    head = p.get("head")
    sha = head.get("sha") if isinstance(head, dict) else None
    return PullRef(p["number"], sha if isinstance(sha, str) else "", str(p.get("state") or ""))
