"""Model downloads (kbase_ci.state.downloads) against a hub on 127.0.0.1 that misbehaves
on demand (tests/fakehub.py): found in the cache afterwards, offline too; an endless
body, a slow server and a server lying about sizes stopped by the caps and timeouts; an
interrupted download never looks complete; two processes download a model once."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO
from fakehub import COMMIT, FakeHub

from kbase_ci.errors import UsageError
from kbase_ci.state.downloads import download_model
from kbase_ci.state.hubcache import cached, repo_dir
from kbase_ci.state.hubclient import Limits

MODEL = "acme/tiny-static"
FILES = {"config.json": b'{"model_type": "model2vec"}', "modules.json": b"[]",
         "tokenizer.json": b'{"tok": 1}', "model.safetensors": b"w" * 300_000}


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    state = FakeHub(models={MODEL: dict(FILES)}).start()
    monkeypatch.setenv("HF_ENDPOINT", state.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    for name in ("HF_HUB_OFFLINE", "KBASE_OFFLINE", "KBASE_MODEL_MAX_BYTES"):
        monkeypatch.delenv(name, raising=False)
    yield state
    state.stop()


def _parts(tmp_path: Path) -> list[str]:
    """Partial files anywhere in the hub cache."""
    return sorted(p.name for p in (tmp_path / "hub-cache").rglob("*.incomplete"))


def test_a_download_is_found_in_the_cache_offline(hub: FakeHub, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    heard: list[tuple[str, int, int]] = []
    snap = download_model(MODEL, None, intent="build",
                          progress=lambda stage, done, total: heard.append((stage, done, total)))
    assert snap == repo_dir(MODEL) / "snapshots" / COMMIT
    assert {p.name: p.read_bytes() for p in snap.iterdir()} == FILES
    assert (repo_dir(MODEL) / "refs" / "main").read_text() == COMMIT
    weights = [h for h in heard if h[0] == f"downloading {MODEL} model.safetensors"]
    assert weights[-1][1:] == (300_000, 300_000)  # one progress, in bytes
    # the optional file before the required ones: until the last of those is in, the
    # snapshot is not a model (config.json comes first: it says the kind)
    fetched = [p.rsplit("/", 1)[-1] for m, p in hub.asked if m == "GET" and "/resolve/" in p]
    assert fetched == ["config.json", "modules.json", "model.safetensors", "tokenizer.json"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    asked = len(hub.asked)
    assert cached(MODEL, "model2vec") == snap
    with pytest.raises(UsageError, match="offline"):
        download_model(MODEL, "model2vec", intent="build")
    assert len(hub.asked) == asked  # not one request offline


def test_a_second_download_fetches_no_file_again(hub: FakeHub) -> None:
    download_model(MODEL, "model2vec", intent="build")
    download_model(MODEL, "model2vec", intent="configured")
    assert hub.gets("model.safetensors") == 1


def test_an_endless_body_stops_at_the_cap(hub: FakeHub, tmp_path: Path) -> None:
    hub.endless.add("model.safetensors")
    hub.listed["model.safetensors"] = 1000  # it says 1000 bytes and never stops
    started = time.monotonic()
    with pytest.raises(UsageError, match=r"sent more than it said: model\.safetensors is "
                                         r"listed with 1000 bytes") as err:
        download_model(MODEL, "model2vec", intent="manifest")
    assert "named by the index" in str(err.value)  # the intent is in the message
    assert time.monotonic() - started < 20
    assert cached(MODEL, "model2vec") is None and _parts(tmp_path) == []


def test_an_endless_body_of_an_unlisted_size_stops_at_the_model_cap(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hub.endless.add("model.safetensors")
    hub.listed["model.safetensors"] = None  # no size in the listing
    monkeypatch.setenv("KBASE_MODEL_MAX_BYTES", str(2 << 20))
    with pytest.raises(UsageError, match="more than 2097152 bytes in all"):
        download_model(MODEL, "model2vec", intent="build")
    assert cached(MODEL, "model2vec") is None and _parts(tmp_path) == []


def test_a_model_listed_above_the_cap_is_not_fetched(hub: FakeHub,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBASE_MODEL_MAX_BYTES", "100000")
    with pytest.raises(UsageError, match=r"more than the cap of 100000 .*KBASE_MODEL_MAX_BYTES"):
        download_model(MODEL, "model2vec", intent="build")
    assert hub.gets("model.safetensors") == 0  # refused from the listing alone


def test_a_server_lying_about_a_smaller_file_is_refused(hub: FakeHub, tmp_path: Path) -> None:
    """Listed (and announced by HEAD) with 10 bytes, it sends 300,000: refused after the
    10th byte, not after the 300,000th."""
    hub.listed["model.safetensors"] = 10
    with pytest.raises(UsageError, match="sent more than it said"):
        download_model(MODEL, "model2vec", intent="build")
    assert cached(MODEL, "model2vec") is None and _parts(tmp_path) == []


def test_a_server_that_never_answers_times_out(hub: FakeHub) -> None:
    hub.slow_headers = 30
    started = time.monotonic()
    with pytest.raises(UsageError, match="no answer within 1 s"):
        download_model(MODEL, "model2vec", intent="build",
                       limits=Limits(read_seconds=1, connect_seconds=1))
    assert time.monotonic() - started < 10


def test_a_server_that_stalls_in_a_body_times_out(hub: FakeHub, tmp_path: Path) -> None:
    hub.stall_after["model.safetensors"] = 1000
    started = time.monotonic()
    with pytest.raises(UsageError, match="no data for 1 s"):
        download_model(MODEL, "model2vec", intent="build", limits=Limits(read_seconds=1))
    assert time.monotonic() - started < 10
    assert cached(MODEL, "model2vec") is None and _parts(tmp_path) == []


def test_a_whole_download_has_a_deadline(hub: FakeHub) -> None:
    """A server that answers just often enough never trips the read timeout; the
    deadline of the whole download still ends it."""
    hub.stall_after["model.safetensors"] = 1000
    with pytest.raises(UsageError, match=r"not done within 2 s|no data for"):
        download_model(MODEL, "model2vec", intent="build",
                       limits=Limits(read_seconds=1.5, total_seconds=2))


def test_a_missing_required_file_is_named(hub: FakeHub) -> None:
    del hub.models[MODEL]["tokenizer.json"]
    with pytest.raises(UsageError, match=r"the hub has no tokenizer\.json for a model2vec"):
        download_model(MODEL, "model2vec", intent="build")


def test_an_unknown_model_is_a_clear_error(hub: FakeHub) -> None:
    with pytest.raises(UsageError, match=r"cannot download acme/missing .*HTTP 404"):
        download_model("acme/missing", "model2vec", intent="build")


def test_a_forged_commit_id_is_refused(hub: FakeHub, tmp_path: Path) -> None:
    hub.commit = "../../../outside"
    with pytest.raises(UsageError, match="named no commit"):
        download_model(MODEL, "model2vec", intent="build")
    assert not (tmp_path / "outside").exists()


def _downloader(tmp_path: Path, name: str, *, report_lock: bool = False
                ) -> subprocess.Popen[str]:
    """`download_model(MODEL)` in a process of its own. `report_lock`: before it downloads,
    its first line of output says whether another process holds the model's download lock
    (`held` or `free`), asked without waiting; everything the download then does runs
    before the first line (imports, limits), so the lock is the next thing it waits for."""
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests'}"}
    code = ("import sys\nfrom kbase_ci.errors import UsageError\n"
            "from kbase_ci.state.downloads import default_limits, download_model\n"
            "from kbase_ci.state.hubcache import cache_root, repo_dir\n"
            "from kbase_ci.state.locks import exclusive\n"
            "limits = default_limits()\n"
            "if sys.argv[2] == 'report':\n"
            "    lock = cache_root() / '.locks' / repo_dir(sys.argv[1]).name / "
            "'kbase-download.lock'\n"
            "    try:\n"
            "        with exclusive(lock, timeout=0):\n"
            "            print('free', flush=True)\n"
            "    except UsageError:\n"
            "        print('held', flush=True)\n"
            "try:\n"
            "    print(download_model(sys.argv[1], 'model2vec', intent='build', "
            "limits=limits))\n"
            "except UsageError as exc:\n    print(exc, file=sys.stderr)\n    sys.exit(2)\n")
    return subprocess.Popen([sys.executable, "-c", code, MODEL,
                             "report" if report_lock else "quiet"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=tmp_path, start_new_session=True)


def _wait_for(what: str, ok: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not callable(ok) or not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_an_interrupted_download_never_looks_complete(hub: FakeHub, tmp_path: Path) -> None:
    hub.stall_after["model.safetensors"] = 5000
    proc = _downloader(tmp_path, "a")
    weights = hashlib.sha256(FILES["model.safetensors"]).hexdigest()
    try:
        _wait_for("the partial weights",
                  lambda: any(p.startswith(weights) for p in _parts(tmp_path)))
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    snapshots = repo_dir(MODEL) / "snapshots" / COMMIT
    assert (snapshots / "config.json").is_file()  # some files were there already ...
    assert cached(MODEL, "model2vec") is None  # ... but not all it needs: no model
    assert _parts(tmp_path)  # what SIGKILL left (no code runs then) ...
    del hub.stall_after["model.safetensors"]
    assert download_model(MODEL, "model2vec", intent="build") == snapshots
    assert cached(MODEL, "model2vec") == snapshots
    assert _parts(tmp_path) == []  # ... is deleted by the next download


def test_two_processes_download_a_model_once(hub: FakeHub, tmp_path: Path) -> None:
    """The second process comes while the first is downloading (the hub holds back the
    weights until it says so): it finds the lock held, waits, then fetches nothing again.
    Without the lock it would say `free` and fetch the weights a second time."""
    gate = hub.gate["model.safetensors"] = threading.Event()
    first = _downloader(tmp_path, "a")
    procs = [first]
    try:
        # The first holds the lock from before its first request to after its last.
        _wait_for("a download of the weights", lambda: hub.gets("model.safetensors") >= 1)
        second = _downloader(tmp_path, "b", report_lock=True)
        procs.append(second)
        assert second.stdout is not None
        said = second.stdout.readline().strip()  # blocks until it asked (a pipe, no sleep)
        assert said == "held", said
        gate.set()
        outs = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    assert [p.returncode for p in procs] == [0, 0], outs
    assert {o.strip() for o, _ in outs} == {str(repo_dir(MODEL) / "snapshots" / COMMIT)}
    assert hub.gets("model.safetensors") == 1
    assert (repo_dir(MODEL) / "refs" / "main").read_text() == COMMIT


def test_a_cache_that_cannot_be_written_is_a_clear_error(hub: FakeHub, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("a file where the hub cache should be")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "file" / "hub"))
    with pytest.raises(UsageError, match="cannot download acme/tiny-static"):
        download_model(MODEL, "model2vec", intent="build")
