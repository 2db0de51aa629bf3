"""A throwaway PostgreSQL server for the catalog tests: initdb into a temporary folder, a Unix socket
in that folder, no TCP, stopped at the end.

initdb refuses to run as root, so as root the server runs as the unprivileged `postgres` user
(`runuser`); as any other user it runs as that user. `PostgresServer.start` raises
`ServerUnavailable` when the binaries are missing or the server cannot start.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

PG_BIN_DIRS: Final = (
    "/usr/lib/postgresql/17/bin",
    "/usr/lib/postgresql/16/bin",
    "/usr/lib/postgresql/15/bin",
)
SUPERUSER: Final = "postgres"
UNPRIVILEGED_USER: Final = "postgres"
TEST_SETTINGS: Final = "-c fsync=off"


class ServerUnavailable(Exception):
    """No PostgreSQL server could be started here (binaries missing, initdb or pg_ctl failed)."""


def _binary(name: str) -> str:
    for folder in PG_BIN_DIRS:
        candidate = Path(folder) / name
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise ServerUnavailable(f"PostgreSQL's {name} was not found (install postgresql)")
    return found


@dataclass
class PostgresServer:
    """One server: its data folder, its socket folder, and how to run its tools as its user."""

    folder: Path
    as_root: bool = field(default_factory=lambda: os.geteuid() == 0)

    @property
    def data(self) -> Path:
        """The cluster's data directory."""
        return self.folder / "data"

    @property
    def socket_dir(self) -> Path:
        """The folder holding the server's Unix socket."""
        return self.folder

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        full = ["runuser", "-u", UNPRIVILEGED_USER, "--", *command] if self.as_root else list(command)
        done = subprocess.run(full, capture_output=True, text=True, check=False)
        if check and done.returncode != 0:
            raise ServerUnavailable(f"{command[0]} failed: {done.stderr.strip()[-2000:]}")
        return done

    @classmethod
    def create(cls, folder: Path | None = None) -> PostgresServer:
        """A new cluster in `folder` (created; default a fresh temporary one) its user can read."""
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix="sessionref-pg-"))
        else:
            folder.mkdir(parents=True)
        server = cls(folder)
        if server.as_root:
            shutil.chown(folder, UNPRIVILEGED_USER, UNPRIVILEGED_USER)
        server._run(
            _binary("initdb"),
            "-D",
            str(server.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )
        return server

    def start(self, *, settings: str = TEST_SETTINGS) -> None:
        """Start the server on a Unix socket in `folder` only (no TCP), and wait until it accepts.

        `settings` are more `-c name=value` options (the tests' default skips fsync: a test server's
        data need not survive a power cut; the benchmark passes durable ones)."""
        options = f"-k {self.socket_dir} -c listen_addresses='' -c max_connections=60 {settings}"
        self._run(
            _binary("pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-w",
            "-l",
            str(self.folder / "log"),
            "start",
        )

    def stop(self, *, mode: str = "fast") -> None:
        """Stop the server (`mode` "immediate" kills it without a clean shutdown, like a crash)."""
        self._run(_binary("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def conninfo(self, role: str = SUPERUSER, database: str = "postgres", password: str | None = None) -> str:
        """A keyword/value connection string for `role` on `database` over the socket."""
        secret = f" password={password}" if password else ""
        return f"host={self.socket_dir} dbname={database} user={role}{secret}"

    def url(self, role: str, database: str) -> str:
        """The same connection as a `postgresql://` URI (the socket folder as the `host` parameter)."""
        return f"postgresql://{role}@/{database}?host={self.socket_dir}"

    def remove(self) -> None:
        """Stop the server and delete its folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass(frozen=True)
class Catalog:
    """A database with a migrated catalog: its owner's and each person's connection string."""

    server: PostgresServer
    database: str
    owner: str

    def url(self, role: str) -> str:
        """The connection string of `role` (a person, or the owner) on this database."""
        return self.server.conninfo(role, self.database)

    def admin(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        """Run `sql` as the server's superuser on this database (test set-up only)."""
        import psycopg

        with psycopg.connect(self.server.conninfo(database=self.database), autocommit=True) as connection:
            cursor = connection.execute(sql, params or None)
            return cursor.fetchall() if cursor.description else []
