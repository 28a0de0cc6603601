"""The HTTP client huggingface_hub downloads through when kbase asks it to: caps and
timeouts the library does not have, enforced on every byte.

A hub (or whatever `HF_ENDPOINT` names) is untrusted: it may list a model smaller than
it sends, send an endless body, compress a bomb, answer slowly or not at all, or ask to
be retried forever (`429` with a long `Retry-After`). So, for every request made during
a download (`guarded`):

- connect and read timeouts are kbase's (`Limits`), whatever the library asks for, and
  the whole download has a deadline, checked at every request and every chunk;
- a response body may not exceed what the listing promised for that file (`expect`),
  nor the model's total `max_bytes`; other bodies (API answers) at most `_API_BYTES`;
- bodies must come uncompressed (`Accept-Encoding: identity`; anything else refused), so
  what is counted is what lands on disk;
- busy or failing answers (408, 429, 5xx) and transport errors in a body stop the
  download at once (`HubRefused`, which the library does not retry);
- Xet storage is off: every byte comes over this client, none through a side channel.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx2  # this module is imported only by a download (kbase_ci.state.downloads)

_API_BYTES = 16 << 20
"""A hub API answer (a model's file listing) larger than this is refused."""


class HubRefused(Exception):
    """A download stopped by one of kbase's limits, or by a hub that failed."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_bytes: int = 1 << 30
    """All files of one model together (`KBASE_MODEL_MAX_BYTES` overrides it)."""
    connect_seconds: float = 10.0
    read_seconds: float = 30.0
    """Silence allowed between two reads of an answer."""
    total_seconds: float = 1800.0
    """The whole download, the wait for another process's download of it included."""


class Budget:
    """What one download may still spend (state: bytes received, the deadline, the file
    being fetched and its listed size)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.total_seconds
        self.received = 0
        self.expect: int | None = None
        """The listed size of the file being fetched (None: an API call)."""
        self.label = ""

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise HubRefused(f"not done within {self.limits.total_seconds:.0f} s")

    def take(self, n: int, got: int) -> None:
        """Count `n` more bytes of an answer that has now sent `got`."""
        self.received += n
        if self.received > self.limits.max_bytes:
            raise HubRefused(f"more than {self.limits.max_bytes} bytes in all (the size "
                             "cap of one model)")
        cap = self.expect if self.expect is not None else _API_BYTES
        if got > cap:
            what = f"{self.label} is listed with {cap} bytes" if self.expect is not None \
                else f"an answer of more than {cap} bytes"
            raise HubRefused(f"the hub sent more than it said: {what}")
        self.check_time()


_CURRENT = threading.local()
_INSTALLED = False
_INSTALL_LOCK = threading.Lock()


def _budget() -> Budget:
    found: Budget | None = getattr(_CURRENT, "budget", None)
    return found if found is not None else Budget(Limits())


@contextmanager
def guarded(limits: Limits) -> Iterator[Budget]:
    """Route this thread's hub requests through the guarded client for the block."""
    _install()
    budget = Budget(limits)
    _CURRENT.budget = budget
    try:
        yield budget
    finally:
        _CURRENT.budget = None


def _install() -> None:
    global _INSTALLED
    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        import huggingface_hub
        from huggingface_hub import constants

        constants.HF_HUB_DISABLE_XET = True  # read when a download starts, not at import
        huggingface_hub.set_client_factory(_client)
        _INSTALLED = True


def _client() -> httpx2.Client:
    # No hub event hook: kbase decides offline itself (read at call time, see hubcache).
    return httpx2.Client(event_hooks={"request": [_on_request], "response": [_on_response]},
                         follow_redirects=True, timeout=None)


def _on_request(request: httpx2.Request) -> None:
    budget = _budget()
    budget.check_time()
    limits = budget.limits
    left = max(0.1, budget.deadline - time.monotonic())
    request.headers["Accept-Encoding"] = "identity"
    request.extensions["timeout"] = {
        "connect": min(limits.connect_seconds, left), "read": min(limits.read_seconds, left),
        "write": min(limits.read_seconds, left), "pool": min(limits.connect_seconds, left)}


def _on_response(response: httpx2.Response) -> None:
    code = response.status_code
    if code in (408, 429) or code >= 500:
        response.close()
        raise HubRefused(f"{response.request.url.host} answered HTTP {code}")
    if response.headers.get("Content-Encoding", "identity").lower() not in ("", "identity"):
        response.close()
        raise HubRefused("the hub sent a compressed answer although none was accepted")
    for name in ("X-Xet-Hash", "X-Xet-Refresh-Route"):
        response.headers.pop(name, None)
    if "xet" in response.headers.get("Link", "").lower():
        del response.headers["Link"]
    stream = response.stream
    assert isinstance(stream, httpx2.SyncByteStream)  # a sync client's answer
    response.stream = _Capped(stream, _budget())


class _Capped(httpx2.SyncByteStream):
    """A response body counted against the budget as it streams (state: the inner
    stream, the bytes it sent)."""

    def __init__(self, inner: httpx2.SyncByteStream, budget: Budget) -> None:
        self._inner, self._budget, self._got = inner, budget, 0

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                self._got += len(chunk)
                self._budget.take(len(chunk), self._got)
                yield chunk
        except httpx2.TimeoutException:
            raise HubRefused(f"no data for {self._budget.limits.read_seconds:.0f} s") from None
        except httpx2.TransportError as exc:
            raise HubRefused(f"the connection failed ({type(exc).__name__})") from None

    def close(self) -> None:
        self._inner.close()
