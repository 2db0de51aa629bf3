"""`sessionref catalog init | status | publish | share | unshare`: the shared catalog (docs/catalog.md).

Every subcommand needs a catalog (`[catalog] url` or `$SESSIONREF_CATALOG_URL`; else
`CLI_CATALOG_NOT_CONFIGURED`). `init` is run once by the database's owner; `publish` is opt-in:
it sends only the sources `--sources` or `[catalog] publish` name (or the one `--session`), and
`--watch` keeps publishing until interrupted, retrying with backoff while the catalog is down.
`cli_catalog_link` is how the reading commands (`sessions`, `search`, `snapshot`) add the catalog.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import TYPE_CHECKING, Any, Final

from sessionref_tui.cli.output import EXIT_OK, note, safe_json
from sessionref_tui.cli.store_access import CliError, command_settings, open_cli_store, store_root
from sessionref_tui.display import relative_age

if TYPE_CHECKING:
    from sessionref.catalog.publisher import PublishReport
    from sessionref.host.catalog_link import CatalogLink
    from sessionref.host.settings import Settings

CLI_CATALOG_NOT_CONFIGURED: Final = "CLI_CATALOG_NOT_CONFIGURED"
CLI_NOTHING_TO_PUBLISH: Final = "CLI_NOTHING_TO_PUBLISH"
CLI_COMMAND_DEADLINE_SECONDS: Final = 5.0
"""How long a one-off command (`sessions`, `search`, `snapshot`) waits for the catalog: a script
wants the catalog's answer, not the keystroke deadline's."""

CATALOG_DESCRIPTION: Final = (
    "The shared session catalog on PostgreSQL: sessions published from every machine are listed, "
    "searched and mentioned on every machine that reads it ([catalog] url in config.toml or "
    "$SESSIONREF_CATALOG_URL). See docs/catalog.md."
)
PUBLISH_SOURCES_HELP: Final = (
    "what to publish: a comma-separated list of store, claude-code, codex, gemini, or all "
    "(default: [catalog] publish in config.toml; nothing is published unless named)"
)


def _publish_list(text: str) -> tuple[str, ...]:
    from sessionref.host.catalog_settings import parse_publish_list

    try:
        return parse_publish_list(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_catalog_parser(commands: Any, store: argparse.ArgumentParser) -> None:
    """Add `catalog` and its subcommands to the `sessionref` subparsers `commands`."""
    catalog = commands.add_parser(
        "catalog", help="The shared session catalog on PostgreSQL.", description=CATALOG_DESCRIPTION
    )
    actions = catalog.add_subparsers(dest="catalog_command", metavar="ACTION", required=True)
    actions.add_parser(
        "init", help="create or upgrade the catalog's schema (run by the database's owner)", parents=[store]
    )
    status = actions.add_parser(
        "status", help="where the catalog is, who you are, what was published and what waits", parents=[store]
    )
    status.add_argument("--json", action="store_true", help="print JSON instead of text")
    publish = actions.add_parser("publish", help="publish this machine's sessions (opt-in)", parents=[store])
    publish.add_argument(
        "--sources", dest="publish_sources", metavar="LIST", type=_publish_list, help=PUBLISH_SOURCES_HELP
    )
    publish.add_argument("--session", metavar="ID", help="publish only this session (a unique start works)")
    publish.add_argument("--watch", action="store_true", help="keep publishing changes until interrupted")
    for name, verb in (("share", "let ROLE (and its members) see"), ("unshare", "stop letting ROLE see")):
        action = actions.add_parser(name, help=f"{verb} one of your published sessions", parents=[store])
        action.add_argument("session_id", metavar="ID", help="the session's id")
        action.add_argument("--with", dest="role", required=True, metavar="ROLE", help="a PostgreSQL role")


def _conninfo(settings: Settings) -> str:
    if settings.catalog.url is None:
        raise CliError(
            CLI_CATALOG_NOT_CONFIGURED,
            "no catalog is configured: set [catalog] url in config.toml or $SESSIONREF_CATALOG_URL",
        )
    return settings.catalog.url.get_secret_value()


def _settings(args: argparse.Namespace) -> Settings:
    """The settings of the store `--store` names (its config.toml holds `[catalog]`), then the environment."""
    return command_settings(store_root(args))


def cli_catalog_link(settings: Settings) -> CatalogLink | None:
    """The catalog link of a one-off reading command (None without a catalog)."""
    if not settings.catalog.configured:
        return None
    from sessionref.host.catalog_link import open_catalog_link

    return open_catalog_link(settings.catalog, deadline=CLI_COMMAND_DEADLINE_SECONDS)


def cmd_catalog(args: argparse.Namespace) -> int:
    """`catalog ACTION`: run one catalog subcommand."""
    settings = _settings(args)
    conninfo = _conninfo(settings)
    handler = {
        "init": _init,
        "status": _status,
        "publish": _publish,
        "share": _share,
        "unshare": _share,
    }[args.catalog_command]
    return handler(args, settings, conninfo)


def _init(args: argparse.Namespace, settings: Settings, conninfo: str) -> int:
    from sessionref.catalog.connection import connect, translated
    from sessionref.catalog.conninfo import redact
    from sessionref.catalog.schema import LATEST_VERSION, migrate

    connection = connect(conninfo)
    try:
        with translated(conninfo, "creating the catalog's schema"):
            applied = migrate(connection)
    finally:
        connection.close()
    for step in applied:
        print(f"applied schema version {step.version}: {step.summary}")
    print(f"the catalog at {redact(conninfo)} is at schema version {LATEST_VERSION}")
    return EXIT_OK


def _open_checked(conninfo: str) -> tuple[Any, int]:
    from sessionref.catalog.connection import connect, translated
    from sessionref.catalog.schema import check_schema

    connection = connect(conninfo)
    try:
        with translated(conninfo, "checking the catalog's schema"):
            return connection, check_schema(connection)
    except BaseException:
        connection.close()
        raise


def _status(args: argparse.Namespace, settings: Settings, conninfo: str) -> int:
    from sessionref.catalog.connection import translated
    from sessionref.catalog.conninfo import redact
    from sessionref.catalog.sharing import status

    connection, version = _open_checked(conninfo)
    try:
        with translated(conninfo, "reading the catalog's status"):
            found = status(connection, version)
    finally:
        connection.close()
    waiting = _waiting(args, settings, conninfo)
    machine = settings.catalog.machine_name
    if args.json:
        print(
            safe_json(
                {
                    "catalog": redact(conninfo),
                    "server": found.server_version,
                    "database": found.database,
                    "role": found.role,
                    "schemaVersion": found.schema_version,
                    "machine": machine,
                    "publishes": list(settings.catalog.publish),
                    "published": [
                        {
                            "machine": item.machine,
                            "sessions": item.sessions,
                            "messages": item.messages,
                            "lastPublished": item.last_published_ms,
                        }
                        for item in found.published
                    ],
                    "waiting": waiting,
                    "visibleFromOthers": found.shared_with_me,
                    "sharesGiven": found.shares_given,
                }
            )
        )
        return EXIT_OK
    now = time.time() * 1000
    print(f"catalog    {redact(conninfo)} (PostgreSQL {found.server_version}, database {found.database})")
    print(f"you are    {found.role}, publishing as machine {machine}")
    print(f"schema     version {found.schema_version}")
    publishes = ", ".join(settings.catalog.publish) or "nothing (opt-in: [catalog] publish or --sources)"
    print(f"publishes  {publishes}")
    for item in found.published:
        when = relative_age(item.last_published_ms, now) if item.last_published_ms is not None else "-"
        here = " (this machine)" if item.machine == machine else ""
        counts = f"{item.sessions} sessions, {item.messages} messages"
        print(f"published  {counts} from {item.machine}{here}, {when} ago")
    if not found.published:
        print("published  nothing yet")
    print(f"waiting    {waiting if waiting is not None else '-'} sessions changed since they were published")
    visible = f"{found.shared_with_me} sessions of others visible to you"
    print(f"shared     {found.shares_given} shares given; {visible}")
    return EXIT_OK


def _waiting(args: argparse.Namespace, settings: Settings, conninfo: str) -> int | None:
    """Sessions of the configured sources not yet published at their current state (None: no store)."""
    from sessionref.catalog.publisher import Publisher

    if not settings.catalog.publish or not store_root(args).exists():
        return None
    store = open_cli_store(args, settings=settings)
    publisher = Publisher(
        conninfo, store, machine=settings.catalog.machine_name, sources=settings.catalog.publish
    )
    try:
        return len(asyncio.run(publisher.pending()))
    finally:
        publisher.close()
        store.close()


def _report_line(report: PublishReport) -> str:
    failed = f", {len(report.failed)} unreadable here" if report.failed else ""
    return (
        f"published {report.sessions} sessions ({report.messages} messages) in {report.seconds:.1f} s; "
        f"{report.unchanged} already current{failed}"
    )


def _publish(args: argparse.Namespace, settings: Settings, conninfo: str) -> int:
    from sessionref.catalog.publisher import PUBLISHABLE_SOURCES, Publisher, source_of
    from sessionref.service.session_ids import resolve_session_id

    sources = args.publish_sources if args.publish_sources is not None else settings.catalog.publish
    store = open_cli_store(args, settings=settings)
    try:
        only: tuple[str, ...] = ()
        if args.session is not None:
            session_id = asyncio.run(resolve_session_id(store, args.session))
            only = (session_id,)
            sources = (source_of(session_id),) if args.publish_sources is None else sources
        if not sources:
            raise CliError(
                CLI_NOTHING_TO_PUBLISH,
                "publishing is opt-in and nothing is chosen: name what to publish with --sources "
                f"({', '.join(PUBLISHABLE_SOURCES)}), [catalog] publish in config.toml, or --session ID",
            )
        publisher = Publisher(conninfo, store, machine=settings.catalog.machine_name, sources=sources)
        try:
            if args.watch:
                return _watch(publisher)
            report = asyncio.run(publisher.publish(only))
        finally:
            publisher.close()
    finally:
        store.close()
    print(_report_line(report))
    for session_id, problem in report.failed:
        note(f"{session_id}: {problem}")
    return EXIT_OK


def _watch(publisher: Any) -> int:
    from sessionref.catalog.conninfo import scrub

    def reported(report: PublishReport) -> None:
        if report.sessions or report.failed:
            print(_report_line(report), flush=True)

    def failed(error: Exception, wait: float) -> None:
        note(
            scrub(
                f"{getattr(error, 'code', '')}: {getattr(error, 'message', error)}; retrying in {wait:g} s",
                publisher.conninfo,
            )
        )

    async def run() -> None:
        await publisher.watch(asyncio.Event(), on_report=reported, on_error=failed)

    asyncio.run(run())
    return EXIT_OK


def _share(args: argparse.Namespace, settings: Settings, conninfo: str) -> int:
    from sessionref.catalog.connection import translated
    from sessionref.catalog.sharing import share, unshare

    connection, _version = _open_checked(conninfo)
    try:
        with translated(conninfo, f"{args.catalog_command} of a session"):
            if args.catalog_command == "share":
                count = share(connection, args.session_id, args.role)
                print(f"shared {args.session_id} with {args.role} ({count} new)")
            else:
                count = unshare(connection, args.session_id, args.role)
                print(f"{args.session_id} is no longer shared with {args.role} ({count} removed)")
    finally:
        connection.close()
    return EXIT_OK
