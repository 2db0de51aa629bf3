"""The cases of the search quality benchmark (`bench_search_quality.py`): questions and titles.

Each `AnswerCase` is a session that answers a question, with near misses: sessions on the same
topic, sharing its words, that do not answer it. Questions are phrased as people and agents ask
them, with other word forms, typos and identifiers joined another way than in the answer.
Each `TitleCase` is a session title and a query a person types for it from memory.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AnswerCase:
    """`question` should find the session saying `asked` then `answer` first; `near` are other
    sessions' messages on the same topic."""

    name: str
    question: str
    asked: str
    answer: str
    near: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TitleCase:
    """`query` should find the session titled `title` in its first three rows."""

    title: str
    query: str


ANSWERS: tuple[AnswerCase, ...] = (
    AnswerCase(
        "export-oom",
        "why did the export job run out of memory?",
        "The nightly export keeps dying.",
        "The nightly export OOMs because it loads every invoice at once; streaming it in pages of 500 "
        "fixed it.",
        ("Export the invoices as CSV for the auditors.", "The memory graph of the web tier looks flat."),
    ),
    AnswerCase(
        "pricing-ttl",
        "what cache TTL did we settle on for the pricing service?",
        "How long should pricing entries stay cached?",
        "Settled: pricing cache entries now live 15 minutes, with 10 % jitter so they do not expire "
        "together.",
        ("The pricing page needs a new layout.", "Clear the build cache before the release."),
    ),
    AnswerCase(
        "deploy-freeze",
        "are we allowed to deploy on fridays?",
        "Can we ship on Friday?",
        "No deploys after Thursday noon: the release freeze covers Friday and the weekend.",
        ("The deploy script prints its version first.", "Friday's standup moved to 10."),
    ),
    AnswerCase(
        "jwt-rotation",
        "how often are the JWT signing keys rotated?",
        "When do the keys change?",
        "The JWT signing keys rotate every 30 days; the old key stays valid for 48 hours of overlap.",
        ("Add the JWT audience to the config.", "Keys of the dictionary must be strings."),
    ),
    AnswerCase(
        "pg-pool",
        "what size did we pick for the postgres connection pool?",
        "The workers time out waiting for a database connection.",
        "Raise the Postgres pool to 40 connections per worker and set a 5 second acquire timeout.",
        ("Postgres 16 is installed on the staging box.", "The swimming pool is closed on Monday."),
    ),
    AnswerCase(
        "payments-retries",
        "how many times does the payments client retry?",
        "What is the retry policy of the payments client?",
        "The payments client retries at most 3 times within a 2 s total budget, with exponential backoff.",
        ("Payments dashboard shows the daily totals.", "The client library was renamed."),
    ),
    AnswerCase(
        "crash-parser",
        "what made the parser crash on empty files",
        "The parser crashes on some inputs.",
        "It crashed because an empty file has no first line; the parser now returns an empty document.",
        ("The parser handles comments now.", "Empty the trash folder weekly."),
    ),
    AnswerCase(
        "index-rebuild",
        "when do we rebuild the search indexes",
        "Do the search indices need maintenance?",
        "We rebuild the search index every Sunday at 03:00 and after each schema migration.",
        ("The search box should keep focus.", "Index of the docs is out of date."),
    ),
    AnswerCase(
        "max-retries",
        "what is maxretries set to for the webhook sender",
        "Webhook deliveries give up too early.",
        "Set max_retries = 8 on the webhook sender, with a one minute cap between attempts.",
        ("The webhook sender signs every payload.", "The retries counter resets at midnight."),
    ),
    AnswerCase(
        "dependency-pin",
        "which dependancy did we pin because of the tls bug",
        "Builds broke after the upgrade.",
        "We pinned the requests dependency to 2.31 until the TLS regression in urllib3 is fixed.",
        ("The dependency graph is in the wiki.", "TLS certificates renew automatically."),
    ),
    AnswerCase(
        "flaky-ci",
        "why is the payments test flaky in CI",
        "The CI run fails one time in five.",
        "The payments retry test is flaky because it sleeps 100 ms and the CI runners are slower; "
        "it now waits on the event instead.",
        ("CI minutes are billed monthly.", "The payments team owns the ledger."),
    ),
    AnswerCase(
        "ci-speed",
        "how did we speed up the CI pipeline",
        "The pipeline takes 14 minutes.",
        "CI went from 14 to 4 minutes: dependencies are cached, tests run on 8 shards, lint runs first.",
        ("The pipeline badge is broken.", "Speed limits on the campus road."),
    ),
    AnswerCase(
        "oauth-scopes",
        "which oauth scopes does the github integration request",
        "What permissions does the GitHub app ask for?",
        "The GitHub integration requests the repo:read and workflow scopes, nothing else.",
        ("OAuth login page got a new logo.", "The integration tests take a while."),
    ),
    AnswerCase(
        "timezone-bug",
        "why were the reports off by one hour",
        "Reports show the wrong times.",
        "Reports were an hour off after daylight saving: timestamps were stored as local time; they are "
        "UTC now.",
        ("Reports are emailed on Monday.", "One hour of overlap for the meeting."),
    ),
    AnswerCase(
        "rate-limit",
        "what rate limit does the public api enforce",
        "Are clients throttled?",
        "The public API allows 100 requests per minute per token, with a burst of 20; beyond it, 429.",
        ("The public roadmap is on the website.", "Limit the page width to 80 characters."),
    ),
    AnswerCase(
        "backup-retention",
        "how long do we keep database backups",
        "What is our backup policy?",
        "Database backups are kept 35 days; monthly snapshots are retained for a year.",
        ("The backup job logs to syslog.", "Keep the database schema in git."),
    ),
    AnswerCase(
        "feature-flags",
        "where are feature flags configured",
        "How do I turn on the new checkout?",
        "Feature flags live in config/flags.yaml and are reloaded every 30 seconds without a restart.",
        ("The checkout page has a new button.", "Flags of countries in the picker."),
    ),
    AnswerCase(
        "log-level",
        "how do I change the logging level in production",
        "Too many debug lines in prod.",
        "Set LOG_LEVEL=warning in the production environment; the service reads it at start.",
        ("Logging in requires the VPN.", "Production deploys need two approvals."),
    ),
    AnswerCase(
        "migration-lock",
        "why did the schema migration lock the orders table",
        "The orders table was unavailable for minutes.",
        "Adding the column with a default rewrote the table and held an exclusive lock; "
        "we now add it nullable and backfill in batches.",
        ("Orders are exported nightly.", "The schema docs are generated."),
    ),
    AnswerCase(
        "image-resize",
        "what library resizes the uploaded images",
        "Uploads of photos are slow.",
        "Uploaded images are resized by libvips through pyvips, four times faster than Pillow here.",
        ("The library catalogue is online.", "Images in the docs need alt text."),
    ),
    AnswerCase(
        "queue-choice",
        "why did we choose rabbitmq over kafka",
        "Which message broker should we use?",
        "RabbitMQ: we need per-message acknowledgements and routing, not a replayable log, so Kafka was "
        "overkill.",
        ("Kafka talk at the meetup.", "The queue at the cafeteria was long."),
    ),
    AnswerCase(
        "session-timeout",
        "how long until an idle user session expires",
        "Users get logged out.",
        "Idle sessions expire after 30 minutes; the refresh token keeps a session alive up to 12 hours.",
        ("User research session on Thursday.", "The idle loop burns CPU."),
    ),
    AnswerCase(
        "docker-size",
        "how did we shrink the docker image",
        "The image is 1.2 GB.",
        "The Docker image shrank to 180 MB with a multi-stage build on python:slim and no build tools.",
        ("Docker desktop needs a licence.", "Shrink the font on mobile."),
    ),
    AnswerCase(
        "email-bounce",
        "what happens when an email bounces",
        "Some customers never get receipts.",
        "A hard bounce marks the address undeliverable and we stop sending; soft bounces retry for 3 days.",
        ("Email templates use MJML.", "The ball bounces off the wall."),
    ),
    AnswerCase(
        "gpu-memory",
        "why does training run out of gpu memory",
        "Training dies after a few steps.",
        "The GPU OOM comes from a batch size of 64 with fp32 activations; batch 16 with bf16 fits.",
        ("GPU prices dropped.", "Training for the new hires is on Friday."),
    ),
    AnswerCase(
        "search-latency",
        "what slowed down the search endpoint",
        "Search got slow last week.",
        "The search endpoint slowed down because the trigram index was dropped by a migration; restored it.",
        ("The search team is hiring.", "Endpoint names use kebab case."),
    ),
    AnswerCase(
        "csv-encoding",
        "why do exported csv files show garbled accents in excel",
        "Excel shows weird characters.",
        "Excel expects a BOM: exported CSV files are now written as UTF-8 with a byte order mark.",
        ("Excel training for finance.", "Accents in names must be kept."),
    ),
    AnswerCase(
        "cron-schedule",
        "when does the cleanup cronjob run",
        "Old temp files pile up.",
        "The cleanup cron job runs at 02:30 every night and deletes temp files older than 7 days.",
        ("Cleanup of the office on Friday.", "Cron syntax cheat sheet."),
    ),
    AnswerCase(
        "websocket-drops",
        "why do websocket connections drop after a minute",
        "Live updates stop.",
        "The load balancer closed idle websockets after 60 s; we send a ping every 25 seconds now.",
        ("Websocket support in the mobile app.", "A minute of silence."),
    ),
    AnswerCase(
        "secrets-storage",
        "where do we store api secrets",
        "Where do credentials go?",
        "Secrets are stored in Vault under kv/app/*, injected at deploy; never in the repository.",
        ("API docs are generated from the schema.", "Store opening hours."),
    ),
    AnswerCase(
        "memory-leak",
        "what caused the memory leak in the worker",
        "Workers grow to 4 GB.",
        "The leak was the per-request cache holding every parsed template; it is an LRU of 256 now.",
        ("Worker pools are sized per core.", "Memory lane: our first release."),
    ),
    AnswerCase(
        "translation-keys",
        "how are missing translations detected",
        "Some labels show their keys.",
        "A CI check fails when a translation key is missing from any locale file.",
        ("Translations are done by the agency.", "Missing the train again."),
    ),
)

TITLES: tuple[TitleCase, ...] = (
    TitleCase("Postgres 16 upgrade plan", "postgrse"),
    TitleCase("Postgres 16 upgrade plan", "pg 16 plan"),
    TitleCase("Migration to Postgres for the ledger", "migration postgres"),
    TitleCase("Speed up CI (14 → 4 min)", "ci speedup"),
    TitleCase("Fix flaky retry test in payments", "flaky payments"),
    TitleCase("Speed up CI (14 → 4 min)", "spdci"),
    TitleCase("Rotate JWT signing keys", "jwt rotate"),
    TitleCase("Webhook sender max_retries", "webhok retries"),
    TitleCase("Docker image diet", "dockr image"),
    TitleCase("Timezone bug in monthly reports", "reports timezone"),
)

BACKGROUND_TITLES: tuple[str, ...] = (
    "Postgres backup notes",
    "Plan the offsite",
    "CI runner costs",
    "Payments ledger export",
    "Flaky network at home",
    "Upgrade Node to 22",
    "Retry budget for search",
    "Docker compose for dev",
    "Monthly report template",
    "Image gallery layout",
    "Signing the release",
    "Speed of light trivia",
)
