"""Issue 24 item 5: scheduler addresses and worker counts that cannot work fail in one line
(exit 2, naming the parameter) instead of hanging, allocating exabytes or "internal error"."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from attnrank_lite.engine import parallel

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
BASE = ["--d", "2", "--n", "50", "--beta", "2", "4", "--eps", "0.25"]


def _sweep(tmp_path, *args, env=None, timeout=120):
    e = dict(os.environ, PYTHONPATH=str(ROOT), ATTNRANK_PROGRESS="0", **(env or {}))
    if not env:
        e.pop("ATTNRANK_SCHEDULER", None)
    return subprocess.run([sys.executable, "-m", "attnrank_lite", "sweep", *BASE, "--store",
                           str(tmp_path / "s.sqlite"), *args], cwd=ROOT, env=e, capture_output=True,
                          text=True, timeout=timeout)


def _one_line(proc, *words):
    err = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert len(err.splitlines()) == 1 and err.startswith("error:"), err
    for w in words:
        assert w in err, err
    return err


@pytest.mark.parametrize("address", ["tcp://[::1:99999", "tcp://127.0.0.1:99999", "inproc://x",
                                     "tcp://127.0.0.1", "127.0.0.1:8786"])
def test_a_malformed_address_is_refused(tmp_path, address):
    _one_line(_sweep(tmp_path, "--scheduler", address), "--scheduler", "tcp://HOST:PORT")
    with pytest.raises(ValueError, match="scheduler"):
        parallel.check_scheduler_address(address)


def test_a_malformed_address_in_the_environment_names_the_variable(tmp_path):
    _one_line(_sweep(tmp_path, env={"ATTNRANK_SCHEDULER": "inproc://x"}), "ATTNRANK_SCHEDULER")


def test_good_addresses_pass_the_check():
    for a in ("tcp://127.0.0.1:8786", "tcp://[::1]:8786", "tls://scheduler.example:443"):
        assert parallel.check_scheduler_address(a) == a


def _server(mode: str):
    """A TCP server that is not Dask: it accepts and says nothing, or sends garbage bytes."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held = []

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            held.append(c)
            if mode == "bytes":
                c.sendall(b"\xff" * 64)

    threading.Thread(target=serve, daemon=True).start()
    return srv, f"tcp://127.0.0.1:{srv.getsockname()[1]}"


@pytest.mark.parametrize("mode", ["silent", "bytes"])
def test_a_server_that_is_not_dask_gives_up_in_one_line(tmp_path, monkeypatch, mode):
    srv, address = _server(mode)
    try:
        monkeypatch.setattr(parallel, "CONNECT_TIMEOUT_S", 2.0)
        with pytest.raises(parallel.SchedulerUnreachable, match="no Dask scheduler"):
            with parallel.dask_executor(scheduler=address):
                pass
    finally:
        srv.close()


def test_too_many_workers_are_refused_before_any_start(tmp_path):
    err = _one_line(_sweep(tmp_path, "--workers", "100000"), "--workers", "at most")
    assert str(parallel.max_local_workers()) in err
    with pytest.raises(ValueError, match="workers must be at most"):
        with parallel.dask_executor(workers=100000):
            pass


def test_the_worker_cap_is_bounded_by_the_cores():
    assert 1 <= parallel.max_local_workers() <= (os.cpu_count() or 1)
