"""A throwaway PostgreSQL server for the tests of shared studies: a cluster made by `initdb` in a temporary folder,
started with `pg_ctl` on a free local port, removed after the tests of the module.

PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user (Debian's package creates it)
or else `nobody`. Without the binaries (`initdb`, `pg_ctl` on the PATH or in Debian's /usr/lib/postgresql/<v>/bin)
the tests that need the server are skipped with how to install them; `.ci/run` installs them.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def postgres_binary(name: str) -> str | None:
    """`name` (initdb, pg_ctl) on the PATH, else the newest of Debian's installed versions."""
    found = shutil.which(name) or sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found if isinstance(found, str) else (found[-1] if found else None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_user() -> str | None:
    """Who runs the server: this user, or as root `postgres` (else `nobody`), since PostgreSQL refuses root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    pytest.skip("running as root with neither a postgres nor a nobody user to run PostgreSQL as")


@pytest.fixture(scope="module")
def postgresql() -> Iterator[str]:
    """The URL of a fresh PostgreSQL database (trust authentication; the password in the URL is never checked)."""
    initdb, pg_ctl = postgres_binary("initdb"), postgres_binary("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip(
            "PostgreSQL's initdb and pg_ctl are not installed: apt-get install postgresql (Debian), or put them on "
            "the PATH; .ci/run installs them"
        )
    user = server_user()
    folder = Path(tempfile.mkdtemp(prefix="textcls-pg-"))
    if user:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    data, port = folder / "data", free_port()
    run = {"user": user, "check": True, "capture_output": True, "text": True, "cwd": folder}
    try:
        subprocess.run([initdb, "-D", str(data), "-U", "sweeps", "--auth=trust", "--no-sync"], **run)
        options = f"-k {folder} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run([pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "server.log"), "-w", "start"], **run)
    except subprocess.CalledProcessError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {error.stderr or error.stdout}") from None
    try:
        yield f"postgresql://sweeps:secret@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], **{**run, "check": False})
        shutil.rmtree(folder, ignore_errors=True)
