"""The app under load: `app.py` started as a subprocess on a free loopback port, driven by concurrent clients.

Each client is its own `gradio_client.Client` calling the `classify` endpoint with both models, as a user's
script would. A request counts as an error when it raises or when the app answers `{"error": ...}`.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from core.processes import ROOT, exit_error, start_command

logger = logging.getLogger(__name__)

START_TIMEOUT_S = 600.0  # loading both models on a busy 2-core machine can take minutes


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_mb(pid: int) -> float | None:
    """A live process's peak resident memory (VmHWM), in MB; None where /proc does not say."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def start_app(runs: list[Path], port: int, log_file: Path) -> subprocess.Popen:
    cmd = [sys.executable, str(ROOT / "app.py"), "--runs", *map(str, runs), "--port", str(port), "--host", "127.0.0.1"]
    logger.info("Starting the app: %s (log: %s)", " ".join(cmd[1:]), log_file)
    return start_command(cmd, log_file, env={"GRADIO_ANALYTICS_ENABLED": "False"})


def wait_until_serving(url: str, process: subprocess.Popen, log_file: Path, timeout: float = START_TIMEOUT_S) -> None:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise exit_error(process, log_file)
        try:
            with urllib.request.urlopen(url + "config", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1.0)
    raise TimeoutError(f"app.py did not serve {url} within {timeout:.0f} s; see its log {log_file}.")


def load_test(url: str, texts: list[str], requests: int, clients: int, choice: str = "both") -> dict:
    """Sends `requests` classify calls from `clients` concurrent clients; returns errors and latency percentiles."""
    from gradio_client import Client

    lock = threading.Lock()
    queue = list(range(requests))
    latencies: list[float] = []
    failures: list[str] = []

    def worker() -> None:
        client = Client(url, verbose=False)
        while True:
            with lock:
                if not queue:
                    return
                i = queue.pop()
            start = time.perf_counter()
            try:
                answer = client.predict(texts[i % len(texts)], choice, api_name="/classify")
                problem = answer.get("error") if isinstance(answer, dict) else f"unexpected answer {answer!r}"
            except Exception as error:  # noqa: BLE001 - any failure of a request is what this counts
                problem = f"{type(error).__name__}: {error}"
            elapsed = (time.perf_counter() - start) * 1000
            with lock:
                latencies.append(elapsed)
                if problem:
                    failures.append(str(problem))

    with ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(worker) for _ in range(clients)]:
            future.result()
    return {
        "requests": requests,
        "clients": clients,
        "errors": len(failures),
        "p50_ms": float(np.percentile(latencies, 50)),
        "p95_ms": float(np.percentile(latencies, 95)),
        "first_errors": sorted(set(failures))[:3],
    }


def measure_app(runs: list[Path], texts: list[str], log_file: Path, requests: int = 200, clients: int = 8) -> dict:
    """Starts the app on the runs, loads it, and stops it; adds the app's peak memory and start-up time."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    start = time.perf_counter()
    process = start_app(runs, port, log_file)
    try:
        wait_until_serving(url, process, log_file)
        startup = time.perf_counter() - start
        logger.info(
            "The app serves %s after %.0f s; sending %d requests from %d clients", url, startup, requests, clients
        )
        result = load_test(url, texts, requests, clients)
        result["peak_rss_mb"] = peak_rss_mb(process.pid)
        result["startup_s"] = startup
        return result
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
