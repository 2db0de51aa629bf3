"""The catalog's tables, indexes and row-level security, created and upgraded by versioned migrations.

Everything lives in the PostgreSQL schema `sessionref`. `sessionref.schema_version` records each
migration applied; `migrate` (what `sessionref catalog init` runs, as the database's owner)
applies the missing ones in one transaction under an advisory lock, and refuses a catalog whose
version is newer than this code knows (`CATALOG_SCHEMA_NEWER`). `check_schema` is what every
other command runs first.

Access (docs/catalog.md, "Who sees what"): row-level security is enabled on every table. A row's
`owner` is `current_user` by default and every insert or update must keep it so; only the owner
may update or delete a row; a session and its messages are visible to its owner and to every role
that is a member of a role it is shared with (`pg_has_role(current_user, shared_with, 'MEMBER')`).
The database's owner (who ran `init`) owns the tables and administers the catalog: like any table
owner it is not held to the policies, so people publish as roles of their own. The two searches
are functions of the owner that apply the same rule for the caller (see `_SEARCH_FUNCTIONS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from sessionref.catalog.errors import (
    CATALOG_SCHEMA_MISSING,
    CATALOG_SCHEMA_NEWER,
    CatalogError,
)

SCHEMA: Final = "sessionref"
INDEXED_TEXT_CHARS: Final = 100_000
"""Characters of a message the full-text index reads (from its start): a tsvector holds at most
1 MB, and a first screen of hits never needs more of one message."""
SESSION_WORDS_BYTES: Final = 500_000
"""Bytes of a session's words (without positions) kept at most: past it they are unknown (NULL) and
the session is always read. A tsvector holds at most 1 MB of lexemes, and no session's words come
near this in practice (a bench session holds ~170 words, 1.7 kB)."""

_LOCK_KEY: Final = 0x5E55_10F5
"""The advisory lock `migrate` holds, so two owners running `init` at once apply each step once."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the schema: its version (1, 2, …), what it does, and its SQL."""

    version: int
    summary: str
    sql: str
    rewrites: tuple[str, ...] = ()
    """Tables of the `sessionref` schema the step rewrites or fills: vacuumed after the upgrade, so
    that their index-only reads stay index-only (a rewritten table has no page marked all-visible
    until a vacuum, and autovacuum does not count a rewrite as changes)."""


_VISIBLE_KEYS: Final = (
    "SELECT session_key FROM sessionref.shares WHERE pg_has_role(current_user, shared_with, 'MEMBER')"
)
_OWNS_SESSION: Final = (
    "EXISTS (SELECT 1 FROM sessionref.sessions s WHERE s.key = session_key AND s.owner = current_user)"
)

_SHARED_WITH_CALLER: Final = "sessionref.shared_with_caller()"
_VISIBLE_TO_CALLER: Final = "(owner = session_user OR key = ANY($7))"
"""Inside the search functions: $7 is `shared_with_caller()`, computed once per call."""
# The two searches run as SECURITY DEFINER functions of the catalog's owner, with the visibility rule
# written out for the login role (`session_user`: inside the function `current_user` is the owner).
# Why: under row-level security PostgreSQL never lets a non-leakproof operator (LIKE, @@) use an index
# below the policies, so a trigram or full-text index would never be used by a search run under them
# (docs/catalog.md, "Why the searches are functions"). Each function runs only fixed SQL; the caller
# supplies values, never SQL.
_MESSAGE_VISIBLE_TO_CALLER: Final = (
    f"(m.owner = session_user OR m.session_key = ANY((SELECT {_SHARED_WITH_CALLER})::bigint[]))"
)
_SEARCH_FUNCTIONS: Final = f"""
CREATE INDEX shares_with ON sessionref.shares (shared_with);

-- The sessions shared with the login role or a role it is a member of (what it may read besides its own).
CREATE FUNCTION sessionref.shared_with_caller() RETURNS bigint[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
    SELECT coalesce(array_agg(session_key), '{{}}') FROM sessionref.shares
    WHERE shared_with = ANY (ARRAY(SELECT oid FROM pg_roles WHERE pg_has_role(session_user, oid, 'MEMBER')))
$function$;

CREATE FUNCTION sessionref.rank_filter(p_rank integer) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $function$
    SELECT CASE p_rank
        WHEN 0 THEN 'folder = $2'
        WHEN 1 THEN 'cwd IS NULL'
        ELSE 'cwd IS NOT NULL AND ($2::text IS NULL OR folder IS DISTINCT FROM $2)' END
$function$;

-- Newest first, with early exit: for each rank, the matches among its p_newest most recent visible
-- sessions (for the last rank the scan stops at p_limit matches). For ranks 0 and 1 (small: sessions
-- of this folder's name, sessions without a cwd) a status row (id NULL) follows whose machine is
-- 'all' when the rank has no more sessions than were read, else 'more'.
CREATE FUNCTION sessionref.find_newest(
    p_pattern text, p_folder text, p_exclude_id text, p_exclude_machine text, p_limit integer,
    p_newest integer
) RETURNS TABLE (
    rank integer, id text, machine text, owner name, title text, cwd text, created_at bigint,
    updated_at bigint
)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
DECLARE
    visible text := '{_VISIBLE_TO_CALLER}';
    shared bigint[] := {_SHARED_WITH_CALLER};
    matching text := CASE WHEN p_pattern IS NULL THEN 'true' ELSE 'search LIKE $1' END;
    listed text := 'id, machine, owner, title, cwd, created_at, updated_at';
BEGIN
    FOR r IN 0..1 LOOP
        CONTINUE WHEN r = 0 AND p_folder IS NULL;
        RETURN QUERY EXECUTE format(
            'WITH recent AS MATERIALIZED (SELECT * FROM sessionref.sessions WHERE %s AND %s'
            '  ORDER BY updated_at DESC, key LIMIT $6)'
            ' (SELECT %s, %s FROM recent WHERE %s AND id <> $3 AND machine <> $4'
            '  ORDER BY updated_at DESC, key LIMIT $5)'
            ' UNION ALL SELECT %s, NULL, CASE WHEN count(*) < $6 THEN ''all'' ELSE ''more'' END,'
            '  NULL, NULL, NULL, NULL, NULL FROM recent',
            sessionref.rank_filter(r), visible, r, listed, matching, r)
        USING p_pattern, p_folder, p_exclude_id, p_exclude_machine, p_limit, p_newest, shared;
    END LOOP;
    RETURN QUERY EXECUTE format(
        'SELECT 2, %s FROM (SELECT * FROM sessionref.sessions WHERE %s AND %s'
        '  ORDER BY updated_at DESC, key LIMIT $6) recent'
        ' WHERE %s AND id <> $3 AND machine <> $4 ORDER BY updated_at DESC, key LIMIT $5',
        listed, sessionref.rank_filter(2), visible, matching)
    USING p_pattern, p_folder, p_exclude_id, p_exclude_machine, p_limit, p_newest, shared;
END
$function$;

-- The trigram index for one rank: every match (since p_since, when given), then the newest; the
-- date-ordered index scan is switched off, so it can never become a walk of the whole table.
CREATE FUNCTION sessionref.find_indexed(
    p_rank integer, p_pattern text, p_folder text, p_exclude_id text, p_exclude_machine text,
    p_limit integer, p_since bigint
) RETURNS TABLE (
    id text, machine text, owner name, title text, cwd text, created_at bigint, updated_at bigint
)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET enable_indexscan = off AS $function$
DECLARE
    visible text := '{_VISIBLE_TO_CALLER}';
    shared bigint[] := {_SHARED_WITH_CALLER};
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT id, machine, owner, title, cwd, created_at, updated_at FROM sessionref.sessions'
        ' WHERE %s AND %s AND search LIKE $1 AND ($6::bigint IS NULL OR updated_at >= $6)'
        ' AND id <> $3 AND machine <> $4 ORDER BY updated_at DESC, key LIMIT $5',
        sessionref.rank_filter(p_rank), visible)
    USING p_pattern, p_folder, p_exclude_id, p_exclude_machine, p_limit, p_since, shared;
END
$function$;

CREATE FUNCTION sessionref.search_messages(
    p_query tsquery, p_folder text, p_exclude_id text, p_exclude_machine text, p_examined integer,
    p_text_chars integer
) RETURNS TABLE (
    id text, seq bigint, role text, kind text, at bigint, text text, relevance real,
    same_folder boolean, updated_at bigint, examined bigint
)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
    WITH matched AS MATERIALIZED (
        SELECT m.session_key, m.seq, m.role, m.kind, m.time, left(m.text, p_text_chars) AS text,
               ts_rank(m.words, p_query) AS relevance
        FROM sessionref.messages m
        WHERE m.words @@ p_query AND {_MESSAGE_VISIBLE_TO_CALLER}
        LIMIT p_examined)
    SELECT s.id, matched.seq, matched.role, matched.kind, matched.time, matched.text, matched.relevance,
           p_folder IS NOT NULL AND s.folder IS NOT DISTINCT FROM p_folder, s.updated_at,
           (SELECT count(*) FROM matched)
    FROM matched JOIN sessionref.sessions s ON s.key = matched.session_key
    WHERE s.machine <> p_exclude_machine AND s.id IS DISTINCT FROM p_exclude_id
$function$;
"""

_SEARCH_V2_SIGNATURE: Final = """\
    p_query tsquery, p_folder text, p_exclude_id text, p_exclude_machine text, p_examined integer,
    p_text_chars integer, p_terms text[] DEFAULT NULL, p_read integer DEFAULT 20000,
    p_read_most integer DEFAULT 100000, p_enough integer DEFAULT 40, p_rare integer DEFAULT 2,
    p_candidates integer DEFAULT 5000, p_common integer DEFAULT 20
) RETURNS TABLE (
    id text, seq bigint, role text, kind text, at bigint, text text, relevance real,
    same_folder boolean, updated_at bigint, complete boolean
)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off SET enable_sort = off"""
"""search_messages' parameters, result and settings (versions 2 and 5; 5 adds `jit = off`)."""
_SEARCH_V2_FIRST_PASS: Final = """\
DECLARE
    shared bigint[] := sessionref.shared_with_caller();
    indexed tsquery := p_query;
    terms tsquery[] := ARRAY(SELECT to_tsquery('simple', term) FROM unnest(p_terms) term);
    counts bigint[];
    first bigint;
    second bigint;
    third bigint;
    fourth bigint;
    common bigint;
    found bigint := 0;
    more bigint;
    read bigint;
    skipped bigint := 0;
    reach bigint := p_read;
BEGIN
    FOR pass IN 1..2 LOOP
        RETURN QUERY
        SELECT r.id, r.seq, r.role, r.kind, r.time, left(r.text, p_text_chars), ts_rank(r.words, p_query),
               p_folder IS NOT NULL AND r.folder IS NOT DISTINCT FROM p_folder, r.updated_at, NULL::boolean
        FROM (SELECT s.id, s.folder, s.updated_at, m.seq, m.role, m.kind, m.time, m.text, m.words
              FROM (SELECT v.key, v.id, v.folder, v.updated_at FROM sessionref.sessions v
                    WHERE (v.owner = session_user OR v.key = ANY(shared))
                      AND v.machine <> p_exclude_machine AND v.id IS DISTINCT FROM p_exclude_id
                    ORDER BY v.updated_at DESC, v.key) s
              CROSS JOIN LATERAL (SELECT n.seq, n.role, n.kind, n.time, n.text, n.words
                                  FROM sessionref.messages n WHERE n.session_key = s.key) m
              OFFSET skipped LIMIT reach - skipped) r
        WHERE r.words @@ p_query
        LIMIT p_examined - found;
        GET DIAGNOSTICS more = ROW_COUNT;
        found := found + more;
        IF pass = 2 OR found >= p_examined THEN
            RETURN QUERY SELECT NULL::text, NULL::bigint, NULL::text, NULL::text, NULL::bigint, NULL::text,
                NULL::real, NULL::boolean, NULL::bigint, false;
            RETURN;
        END IF;"""
"""Versions 2 and 5: the declarations, and each newest-first pass of up to two."""
_SEARCH_V2_ENOUGH: Final = """\
        IF read < p_read OR found >= p_enough THEN
            RETURN QUERY SELECT NULL::text, NULL::bigint, NULL::text, NULL::text, NULL::bigint, NULL::text,
                NULL::real, NULL::boolean, NULL::bigint, read < p_read;
            RETURN;
        END IF;"""
"""Versions 2 and 5: answered when every visible message was read or enough matched."""
_SEARCH_V2_RARE: Final = """\
        skipped := p_read;
        reach := greatest(p_read, least(p_read_most, p_read::bigint * p_enough * 2 / greatest(found, 1)));
    END LOOP;
    RETURN QUERY
    WITH candidates AS MATERIALIZED (
        SELECT m.session_key, m.seq, m.role, m.kind, m.time, m.words
        FROM sessionref.messages m
        WHERE m.words @@ indexed AND (m.owner = session_user OR m.session_key = ANY(shared))
        LIMIT p_candidates),
    matched AS MATERIALIZED (
        SELECT c.session_key, c.seq, c.role, c.kind, c.time, ts_rank(c.words, p_query) AS relevance
        FROM candidates c WHERE c.words @@ p_query LIMIT p_examined)
    SELECT s.id, matched.seq, matched.role, matched.kind, matched.time, left(t.text, p_text_chars),
           matched.relevance, p_folder IS NOT NULL AND s.folder IS NOT DISTINCT FROM p_folder,
           s.updated_at, NULL::boolean
    FROM matched JOIN sessionref.sessions s ON s.key = matched.session_key
    JOIN sessionref.messages t ON t.session_key = matched.session_key AND t.seq = matched.seq
    WHERE s.machine <> p_exclude_machine AND s.id IS DISTINCT FROM p_exclude_id
    UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        (SELECT count(*) FROM candidates) < p_candidates AND (SELECT count(*) FROM matched) < p_examined;
END
$function$;"""
"""Versions 2 and 5: reading on, then the full-text index for the rarest word."""

_SEARCH_MESSAGES_V2: Final = f"""
DROP FUNCTION sessionref.search_messages(tsquery, text, text, text, integer, integer);

-- Conversation search for a first screen (docs/catalog.md, "Conversation search: the first screen"):
-- 1. newest first: the messages of the most recent visible sessions, p_read of them, filtered by
--    p_query (they lie together on disk and stay cached, so reading them is cheap). Enough
--    matches (p_enough), or every visible message read: answered.
-- 2. a few matches (more than p_rare): at the rate measured, read on newest first as far as twice
--    p_enough should need (at most p_read_most messages).
-- 3. rare (p_rare or fewer): the full-text index. GIN's cost is the postings of every term it is
--    asked for, so it is asked for one term only, the rarest of p_terms (the query's words, a
--    prefix as `word:*`; the first four) among the messages just read, and p_query filters its
--    candidates; at most p_candidates of them are read (they are scattered on disk). When even
--    the rarest term matched more than p_common of the messages read, GIN would collect hundreds
--    of thousands of postings, so step 2 reads on newest first instead.
-- A status row (id NULL) ends the answer: `complete` is true when nothing that matches was left
-- unread. Static SQL under custom plans: each plan is chosen with the caller's values, and the
-- join and scan settings keep the newest-first read a walk of the recency index.
CREATE FUNCTION sessionref.search_messages(
{_SEARCH_V2_SIGNATURE}
SET max_parallel_workers_per_gather = 0 SET plan_cache_mode = force_custom_plan AS $function$
{_SEARCH_V2_FIRST_PASS}
        SELECT count(*), count(*) FILTER (WHERE r.words @@ terms[1]),
               count(*) FILTER (WHERE r.words @@ terms[2]), count(*) FILTER (WHERE r.words @@ terms[3]),
               count(*) FILTER (WHERE r.words @@ terms[4])
        INTO read, first, second, third, fourth FROM (
            SELECT m.words FROM (SELECT v.key FROM sessionref.sessions v
                    WHERE (v.owner = session_user OR v.key = ANY(shared))
                      AND v.machine <> p_exclude_machine AND v.id IS DISTINCT FROM p_exclude_id
                    ORDER BY v.updated_at DESC, v.key) s
            CROSS JOIN LATERAL (SELECT n.words FROM sessionref.messages n WHERE n.session_key = s.key) m
            LIMIT p_read) r;
        counts := ARRAY[first, second, third, fourth];
        FOR term IN 1..least(4, coalesce(array_length(terms, 1), 0)) LOOP
            IF common IS NULL OR counts[term] < common THEN
                common := counts[term];
                indexed := terms[term];
            END IF;
        END LOOP;
        common := coalesce(common, found);
{_SEARCH_V2_ENOUGH}
        EXIT WHEN found <= p_rare AND common <= p_common;
{_SEARCH_V2_RARE}
"""


_FIND_NEWEST_V3: Final = """
-- Newest first for title discovery, in static SQL (plans chosen with the caller's values): for the
-- two small ranks the read stops at p_limit matches instead of reading all p_newest sessions first;
-- only a rank left short is counted, to say whether it has sessions the read did not reach.
CREATE OR REPLACE FUNCTION sessionref.find_newest(
    p_pattern text, p_folder text, p_exclude_id text, p_exclude_machine text, p_limit integer,
    p_newest integer
) RETURNS TABLE (
    rank integer, id text, machine text, owner name, title text, cwd text, created_at bigint,
    updated_at bigint
)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan AS $function$
DECLARE
    shared bigint[] := sessionref.shared_with_caller();
    found bigint;
    total bigint;
BEGIN
    IF p_folder IS NOT NULL THEN
        RETURN QUERY
        SELECT 0, s.id, s.machine, s.owner, s.title, s.cwd, s.created_at, s.updated_at
        FROM (SELECT v.key, v.id, v.machine, v.owner, v.title, v.cwd, v.created_at, v.updated_at, v.search
              FROM sessionref.sessions v
              WHERE v.folder = p_folder AND (v.owner = session_user OR v.key = ANY(shared))
              ORDER BY v.updated_at DESC, v.key LIMIT p_newest) s
        WHERE (p_pattern IS NULL OR s.search LIKE p_pattern) AND s.id <> p_exclude_id
          AND s.machine <> p_exclude_machine
        ORDER BY s.updated_at DESC, s.key LIMIT p_limit;
        GET DIAGNOSTICS found = ROW_COUNT;
        total := p_newest;
        IF found < p_limit THEN
            SELECT count(*) INTO total FROM (
                SELECT 1 FROM sessionref.sessions v
                WHERE v.folder = p_folder AND (v.owner = session_user OR v.key = ANY(shared))
                LIMIT p_newest) counted;
        END IF;
        RETURN QUERY SELECT 0, NULL::text, CASE WHEN total < p_newest THEN 'all' ELSE 'more' END,
            NULL::name, NULL::text, NULL::text, NULL::bigint, NULL::bigint;
    END IF;
    RETURN QUERY
    SELECT 1, s.id, s.machine, s.owner, s.title, s.cwd, s.created_at, s.updated_at
    FROM (SELECT v.key, v.id, v.machine, v.owner, v.title, v.cwd, v.created_at, v.updated_at, v.search
          FROM sessionref.sessions v
          WHERE v.cwd IS NULL AND (v.owner = session_user OR v.key = ANY(shared))
          ORDER BY v.updated_at DESC, v.key LIMIT p_newest) s
    WHERE (p_pattern IS NULL OR s.search LIKE p_pattern) AND s.id <> p_exclude_id
      AND s.machine <> p_exclude_machine
    ORDER BY s.updated_at DESC, s.key LIMIT p_limit;
    GET DIAGNOSTICS found = ROW_COUNT;
    total := p_newest;
    IF found < p_limit THEN
        SELECT count(*) INTO total FROM (
            SELECT 1 FROM sessionref.sessions v
            WHERE v.cwd IS NULL AND (v.owner = session_user OR v.key = ANY(shared))
            LIMIT p_newest) counted;
    END IF;
    RETURN QUERY SELECT 1, NULL::text, CASE WHEN total < p_newest THEN 'all' ELSE 'more' END,
        NULL::name, NULL::text, NULL::text, NULL::bigint, NULL::bigint;
    RETURN QUERY
    SELECT 2, s.id, s.machine, s.owner, s.title, s.cwd, s.created_at, s.updated_at
    FROM (SELECT v.key, v.id, v.machine, v.owner, v.title, v.cwd, v.created_at, v.updated_at, v.search
          FROM sessionref.sessions v
          WHERE v.cwd IS NOT NULL AND (p_folder IS NULL OR v.folder IS DISTINCT FROM p_folder)
            AND (v.owner = session_user OR v.key = ANY(shared))
          ORDER BY v.updated_at DESC, v.key LIMIT p_newest) s
    WHERE (p_pattern IS NULL OR s.search LIKE p_pattern) AND s.id <> p_exclude_id
      AND s.machine <> p_exclude_machine
    ORDER BY s.updated_at DESC, s.key LIMIT p_limit;
END
$function$;
"""

JOINED_SEPARATORS: Final = " -_./:\\"
"""Characters pg_trgm would split words at that the `*_joined` columns replace by `JOINED_LETTER` (an ASCII
letter, a word character in every locale), so its trigrams span the boundaries between words."""
JOINED_LETTER: Final = "q"
LISTED_SEARCH_BYTES: Final = 800
"""Longest `search` (in bytes) the listing indexes hold as `search_short`: with the owner and the
machine an index entry stays within btree's limit (about 2,700 bytes); a longer one is NULL there
and decided from the table."""
_SEARCH_TEXT: Final = "lower(id || E'\\x1f' || coalesce(title, '') || E'\\x1f' || coalesce(cwd, ''))"


def _joined(text: str) -> str:
    """SQL for `text` with every `JOINED_SEPARATORS` character replaced by `JOINED_LETTER`."""
    separators = " || ".join(f"chr({ord(separator)})" for separator in JOINED_SEPARATORS)
    return f"translate({text}, {separators}, '{JOINED_LETTER * len(JOINED_SEPARATORS)}')"


_NAMES_JOINED: Final = _joined("lower(id || E'\\x1f' || coalesce(title, ''))")


def _bare(text: str) -> str:
    """SQL for `text` with every `JOINED_SEPARATORS` character removed."""
    separators = " || ".join(f"chr({ord(separator)})" for separator in JOINED_SEPARATORS)
    return f"translate({text}, {separators}, '')"


_NAMES_BARE: Final = _bare("lower(id || E'\\x1f' || coalesce(title, ''))")
_NAMES_BARE_OF_V: Final = _bare("lower(v.id || E'\\x1f' || coalesce(v.title, ''))")
"""The same, of the row `v` (inside a function whose result has columns of those names)."""
_SEARCH_SHORT: Final = (
    f"CASE WHEN octet_length({_SEARCH_TEXT}) <= {LISTED_SEARCH_BYTES} THEN {_SEARCH_TEXT} END"
)
_RANK_OF_ROW: Final = (
    "CASE WHEN p_folder IS NOT NULL AND v.folder = p_folder THEN 0 WHEN v.cwd IS NULL THEN 1 ELSE 2 END"
)
_LISTING: Final = "(updated_at DESC, key) INCLUDE (owner, machine, search_short)"


def _read_rank(rank: int) -> str:
    """The part of `find_recent` that reads one rank (static SQL, planned with the caller's values)."""
    listed = {0: "v.folder = p_folder", 1: "v.cwd IS NULL", 2: "v.cwd IS NOT NULL"}[rank]
    rest = "(p_folder IS NULL OR t.folder IS DISTINCT FROM p_folder)" if rank == 2 else "true"
    has_rank = " AND p_folder IS NOT NULL" if rank == 0 else ""
    return f"""
    IF {rank} BETWEEN p_first_rank AND p_last_rank{has_rank} THEN
        RETURN QUERY
        SELECT {rank}, t.id, t.machine, t.owner, t.title, t.cwd, t.created_at, t.updated_at, m.matched,
               r.read = p_newest
        FROM (SELECT v.key, v.updated_at, v.search_short,
                     row_number() OVER (ORDER BY v.updated_at DESC, v.key) AS read
              FROM sessionref.sessions v
              WHERE {listed} AND (v.owner = session_user OR v.key = ANY(shared))
                AND v.machine <> p_exclude_machine
              ORDER BY v.updated_at DESC, v.key LIMIT p_newest) r
        JOIN sessionref.sessions t ON t.key = r.key
        CROSS JOIN LATERAL (SELECT (p_pattern IS NULL OR t.search LIKE p_pattern) AND t.id <> p_exclude_id
                                   AND {rest} AS matched) m
        WHERE (p_pattern IS NULL OR r.search_short LIKE p_pattern OR r.search_short IS NULL
               OR r.read = p_newest)
          AND (m.matched OR r.read = p_newest)
        ORDER BY r.updated_at DESC, r.key LIMIT p_limit;
    END IF;"""


_PLACES_MATCHING: Final = f"""\
    RETURN QUERY
    SELECT s.rank, s.id, s.machine, s.owner, s.title, s.cwd, s.created_at, s.updated_at
    FROM (SELECT {_RANK_OF_ROW} AS rank, v.key, v.id, v.machine, v.owner, v.title, v.cwd,
                 v.created_at, v.updated_at
          FROM sessionref.places p
          CROSS JOIN LATERAL (
              SELECT w.key FROM sessionref.sessions w
              WHERE md5(w.cwd) = p.digest AND w.cwd IS NOT NULL
                AND (w.owner = session_user OR w.key = ANY(shared)) AND w.machine <> p_exclude_machine
              ORDER BY w.updated_at DESC, w.key LIMIT p_limit + 1) newest
          JOIN sessionref.sessions v ON v.key = newest.key
          WHERE p.search LIKE p_pattern AND v.cwd = p.cwd AND v.id <> p_exclude_id) s
    WHERE s.rank >= p_first_rank
    ORDER BY s.rank, s.updated_at DESC, s.key LIMIT p_limit;"""
"""plpgsql in `find_indexed` (versions 4 and 6): the first `p_limit` sessions of every rank from
`p_first_rank` on among the newest sessions of each cwd matching `p_pattern`."""

_READ_NEWEST_V4: Final = f"""
-- Title discovery reads newest first from the listing indexes alone (docs/catalog.md, "Discovery"):
-- each rank has a btree in recency order that also holds what the read filters on (the owner, the
-- machine, the search text when it is short), so reading a session costs an index entry, not a
-- table page (a folder's sessions lie scattered over the table: 6 µs a session from the table,
-- under 1 µs from the index). The table is read for the matches only, to list them.
DROP FUNCTION sessionref.find_newest(text, text, text, text, integer, integer);
DROP FUNCTION sessionref.find_indexed(integer, text, text, text, text, integer, bigint);
DROP INDEX sessionref.sessions_search;
DROP INDEX sessionref.sessions_folder_recent;
DROP INDEX sessionref.sessions_without_cwd;
-- Trigrams across word boundaries: pg_trgm splits `search` at every space, so for two words typed
-- together the index could only say "both words somewhere" (22,000 candidates for 2,800 matches at
-- 1 M sessions). The trigram index is on the names (id, title) with their separators replaced by a
-- letter; `search` still decides each candidate exactly.
ALTER TABLE sessionref.sessions
    ADD COLUMN names_joined text GENERATED ALWAYS AS
        ({_NAMES_JOINED}) STORED,
    ADD COLUMN search_short text GENERATED ALWAYS AS ({_SEARCH_SHORT}) STORED;
CREATE INDEX sessions_names_joined ON sessionref.sessions USING gin (names_joined gin_trgm_ops);
-- A needle in a cwd is looked for among the distinct cwds (a few thousand, where sessions are a
-- million): a trigram index over every session's cwd had, for a needle such as `homa`, `hom` (of
-- `/home/`) in every row and `oma` in a busy project's: 140,000 candidates for no match. Every
-- session of a matching cwd matches, so its newest are read from `sessions_by_place`.
CREATE TABLE sessionref.places (
    digest text PRIMARY KEY,
    cwd text NOT NULL,
    search text GENERATED ALWAYS AS (lower(cwd)) STORED
);
ALTER TABLE sessionref.places ENABLE ROW LEVEL SECURITY;  -- no policy: read by the search functions only
CREATE INDEX places_search ON sessionref.places USING gin (search gin_trgm_ops);
INSERT INTO sessionref.places (digest, cwd)
    SELECT md5(cwd), cwd FROM sessionref.sessions WHERE cwd IS NOT NULL GROUP BY cwd;
CREATE FUNCTION sessionref.record_place() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
BEGIN
    INSERT INTO sessionref.places (digest, cwd) VALUES (md5(NEW.cwd), NEW.cwd) ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$function$;
CREATE TRIGGER sessions_place AFTER INSERT OR UPDATE OF cwd ON sessionref.sessions
    FOR EACH ROW WHEN (NEW.cwd IS NOT NULL) EXECUTE FUNCTION sessionref.record_place();
CREATE INDEX sessions_by_place ON sessionref.sessions (md5(cwd), updated_at DESC, key)
    INCLUDE (owner, machine) WHERE cwd IS NOT NULL;
CREATE INDEX sessions_folder_listing ON sessionref.sessions (folder, {_LISTING.removeprefix("(")};
CREATE INDEX sessions_without_cwd_listing ON sessionref.sessions {_LISTING} WHERE cwd IS NULL;
CREATE INDEX sessions_with_cwd_listing ON sessionref.sessions {_LISTING} WHERE cwd IS NOT NULL;
-- An index-only read skips the table only for pages vacuum has marked all-visible: vacuum the
-- sessions after every 1 % of them changed (autovacuum's default waits for 20 %).
ALTER TABLE sessionref.sessions SET (
    autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01);

-- Newest first, with early exit, for each rank from p_first_rank to p_last_rank (rank 0 only with a
-- folder): the matches (`matched`; all sessions: p_pattern NULL) among the p_newest most recent
-- visible sessions of the rank not published from p_exclude_machine, stopping at p_limit rows. The
-- p_newest-th session read comes too, matching or not (`last`): a read that ends without it has
-- read every session of the rank. The index's pages are cached, so a random page costs about a
-- sequential one.
CREATE FUNCTION sessionref.find_recent(
    p_first_rank integer, p_last_rank integer, p_pattern text, p_folder text, p_exclude_id text,
    p_exclude_machine text, p_limit integer, p_newest integer
) RETURNS TABLE (
    rank integer, id text, machine text, owner name, title text, cwd text, created_at bigint,
    updated_at bigint, matched boolean, last boolean
)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET enable_bitmapscan = off SET enable_seqscan = off SET enable_sort = off SET enable_hashjoin = off
SET enable_mergejoin = off SET random_page_cost = 1.1 SET max_parallel_workers_per_gather = 0
SET plan_cache_mode = force_custom_plan SET jit = off AS $function$
DECLARE
    shared bigint[] := {_SHARED_WITH_CALLER};
BEGIN{_read_rank(0)}{_read_rank(1)}{_read_rank(2)}
END
$function$;

-- The indexes for every rank from p_first_rank on: the first p_limit matches in the names (the
-- trigram index on names_joined, every match fetched in one bitmap scan, then p_pattern in
-- search), then the first p_limit in cwds (the newest p_limit sessions of each matching place:
-- all of a place's sessions have one rank), each in rank order, newest first within a rank. The
-- caller merges the two. For the names the date-ordered index scan is switched off, so it can
-- never become a walk of the whole table.
CREATE FUNCTION sessionref.find_indexed(
    p_first_rank integer, p_pattern text, p_joined text, p_folder text, p_exclude_id text,
    p_exclude_machine text, p_limit integer
) RETURNS TABLE (
    rank integer, id text, machine text, owner name, title text, cwd text, created_at bigint,
    updated_at bigint
)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET enable_indexscan = on SET enable_sort = on SET random_page_cost = 1.1
SET plan_cache_mode = force_custom_plan SET jit = off AS $function$
DECLARE
    shared bigint[] := {_SHARED_WITH_CALLER};
BEGIN
{_PLACES_MATCHING}
    PERFORM set_config('enable_indexscan', 'off', true);
    RETURN QUERY
    SELECT s.rank, s.id, s.machine, s.owner, s.title, s.cwd, s.created_at, s.updated_at
    FROM (SELECT {_RANK_OF_ROW} AS rank, v.key, v.id, v.machine, v.owner, v.title, v.cwd,
                 v.created_at, v.updated_at
          FROM sessionref.sessions v
          WHERE v.names_joined LIKE p_joined AND v.search LIKE p_pattern
            AND (v.owner = session_user OR v.key = ANY(shared))
            AND v.id <> p_exclude_id AND v.machine <> p_exclude_machine) s
    WHERE s.rank >= p_first_rank
    ORDER BY s.rank, s.updated_at DESC, s.key LIMIT p_limit;
END
$function$;
"""

_SEARCH_MESSAGES_V5: Final = f"""
-- Conversation search as in version 2, reading less: step 1's messages were read a second time
-- to count them and each word in them (15-20 ms of most keystrokes). Now the count comes from the
-- primary key alone (an index-only scan), and the words are counted only when the matches are
-- rare, where that choice of the index's word is made. JIT is off (see find_recent).
CREATE OR REPLACE FUNCTION sessionref.search_messages(
{_SEARCH_V2_SIGNATURE}
SET max_parallel_workers_per_gather = 0 SET plan_cache_mode = force_custom_plan SET jit = off
AS $function$
{_SEARCH_V2_FIRST_PASS}
        -- How many messages step 1 read: from the primary key alone (an index-only count).
        SELECT count(*) INTO read FROM (
            SELECT 1 FROM (SELECT v.key FROM sessionref.sessions v
                    WHERE (v.owner = session_user OR v.key = ANY(shared))
                      AND v.machine <> p_exclude_machine AND v.id IS DISTINCT FROM p_exclude_id
                    ORDER BY v.updated_at DESC, v.key) s
            CROSS JOIN LATERAL (SELECT 1 FROM sessionref.messages n WHERE n.session_key = s.key) m
            LIMIT p_read) r;
{_SEARCH_V2_ENOUGH}
        IF found <= p_rare THEN
            -- Rare: which word is rarest among the messages read (the index is asked for it only)?
            SELECT count(*) FILTER (WHERE r.words @@ terms[1]), count(*) FILTER (WHERE r.words @@ terms[2]),
                   count(*) FILTER (WHERE r.words @@ terms[3]), count(*) FILTER (WHERE r.words @@ terms[4])
            INTO first, second, third, fourth FROM (
                SELECT m.words FROM (SELECT v.key FROM sessionref.sessions v
                        WHERE (v.owner = session_user OR v.key = ANY(shared))
                          AND v.machine <> p_exclude_machine AND v.id IS DISTINCT FROM p_exclude_id
                        ORDER BY v.updated_at DESC, v.key) s
                CROSS JOIN LATERAL (SELECT n.words FROM sessionref.messages n WHERE n.session_key = s.key) m
                LIMIT p_read) r;
            counts := ARRAY[first, second, third, fourth];
            FOR term IN 1..least(4, coalesce(array_length(terms, 1), 0)) LOOP
                IF common IS NULL OR counts[term] < common THEN
                    common := counts[term];
                    indexed := terms[term];
                END IF;
            END LOOP;
            common := coalesce(common, found);
            EXIT WHEN common <= p_common;
        END IF;
{_SEARCH_V2_RARE}
"""

FILL_SESSION_WORDS: Final = """INSERT INTO sessionref.session_words (session_key, owner, updated_at, words)
    SELECT s.key, s.owner, s.updated_at, w.words
    FROM (SELECT m.session_key, sessionref.words_union(m.words) AS words
          FROM sessionref.messages m GROUP BY m.session_key) w
    JOIN sessionref.sessions s ON s.key = w.session_key"""
"""Every session's words gathered from its messages (schema version 6 on; a bulk load that bypassed
the words' triggers runs it after loading)."""

_MATCH_ROWS: Final = """RETURNS TABLE (
    id text, seq bigint, role text, kind text, at bigint, text text, relevance real,
    same_folder boolean, updated_at bigint, complete boolean
)"""
"""What conversation search returns: matching messages, then one status row (`complete`)."""
_NEWEST_FIRST_PLAN: Final = (
    "SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off SET enable_sort = off\n"
    "SET enable_bitmapscan = off SET enable_indexscan = on SET max_parallel_workers_per_gather = 0"
)
"""The plan conversation search pins (ordered index reads, nested loops); a step that needs another
sets it for itself and puts it back. Every setting named, so none leaks in from the caller."""


def _names_matching(names: str, visibility: str = "") -> str:
    """plpgsql: the first `p_limit` sessions of every rank from `p_first_rank` on whose names match
    (`names`, an indexed condition; `search` decides), visible to the caller (`visibility`
    appended to that condition: `IS TRUE` keeps it off the indexes)."""
    return f"""
        RETURN QUERY
        SELECT s.rank, s.id, s.machine, s.owner, s.title, s.cwd, s.created_at, s.updated_at
        FROM (SELECT {_RANK_OF_ROW} AS rank, v.key, v.id, v.machine, v.owner, v.title, v.cwd,
                     v.created_at, v.updated_at
              FROM sessionref.sessions v
              WHERE {names} AND v.search LIKE p_pattern
                AND (v.owner = session_user OR v.key = ANY(shared)){visibility}
                AND v.id <> p_exclude_id AND v.machine <> p_exclude_machine) s
        WHERE s.rank >= p_first_rank
        ORDER BY s.rank, s.updated_at DESC, s.key LIMIT p_limit;"""


def _status_row(complete: str) -> str:
    """plpgsql: conversation search's status row, `complete` being its SQL value."""
    return (
        "RETURN QUERY SELECT NULL::text, NULL::bigint, NULL::text, NULL::text, NULL::bigint, NULL::text,"
        f" NULL::real, NULL::boolean, NULL::bigint, {complete};"
    )


_VISIBLE_PAST_STEP_ONE: Final = """(sw.owner = session_user OR sw.session_key = ANY(shared))
                  AND (sw.updated_at + 0 < last_updated
                       OR (sw.updated_at + 0 = last_updated AND sw.session_key > last_key))"""
"""Inside conversation search's step 2: a row of `session_words` the caller may see, past step 1
(`+ 0`: past step 1 is nearly every session, which an index would read: 97 against 12 ms)."""


_SESSION_WORDS_V6: Final = f"""
-- Conversation search reads a session's words before its messages (docs/catalog.md, "Conversation
-- search: the first screen"). `session_words` holds every word of a session's messages, without
-- positions: a superset kept by triggers on every write path (a word is never taken back when a
-- message changes or goes, which only costs a check), or NULL past {SESSION_WORDS_BYTES:,} bytes
-- (unknown: always read). Checking it costs ~1 µs a session, where
-- reading the session's messages costs ~1 µs a message; its GIN index finds the sessions holding a
-- rare word. Read by the search functions only (no policy: nobody else reads it).
CREATE FUNCTION sessionref.words_add(p_words tsvector, p_more tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $function$
    SELECT CASE WHEN pg_column_size(p_words) + pg_column_size(more) > {SESSION_WORDS_BYTES} THEN NULL
                ELSE p_words || more END
    FROM strip(p_more) more
$function$;
CREATE AGGREGATE sessionref.words_union(tsvector) (
    SFUNC = sessionref.words_add, STYPE = tsvector, INITCOND = ''
);
CREATE TABLE sessionref.session_words (
    session_key bigint PRIMARY KEY REFERENCES sessionref.sessions (key) ON DELETE CASCADE,
    owner name NOT NULL,
    updated_at bigint NOT NULL,
    words tsvector
);
ALTER TABLE sessionref.session_words ENABLE ROW LEVEL SECURITY;
{FILL_SESSION_WORDS};
CREATE INDEX session_words_recent ON sessionref.session_words (updated_at DESC, session_key);
CREATE INDEX session_words_unknown ON sessionref.session_words (updated_at DESC, session_key)
    WHERE words IS NULL;
CREATE INDEX session_words_words ON sessionref.session_words USING gin (words);

CREATE FUNCTION sessionref.gather_words() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
BEGIN
    INSERT INTO sessionref.session_words AS sw (session_key, owner, updated_at, words)
    SELECT s.key, s.owner, s.updated_at, n.words
    FROM (SELECT w.session_key, sessionref.words_union(w.words) AS words
          FROM written_messages w GROUP BY w.session_key) n
    JOIN sessionref.sessions s ON s.key = n.session_key
    ON CONFLICT (session_key) DO UPDATE SET words = sessionref.words_add(strip(sw.words), excluded.words);
    RETURN NULL;
END
$function$;
CREATE TRIGGER messages_words_inserted AFTER INSERT ON sessionref.messages
    REFERENCING NEW TABLE AS written_messages FOR EACH STATEMENT EXECUTE FUNCTION sessionref.gather_words();
CREATE TRIGGER messages_words_updated AFTER UPDATE ON sessionref.messages
    REFERENCING NEW TABLE AS written_messages FOR EACH STATEMENT EXECUTE FUNCTION sessionref.gather_words();

CREATE FUNCTION sessionref.follow_session() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
BEGIN
    UPDATE sessionref.session_words SET owner = NEW.owner, updated_at = NEW.updated_at
    WHERE session_key = NEW.key;
    RETURN NULL;
END
$function$;
CREATE TRIGGER sessions_words_follow AFTER UPDATE OF owner, updated_at ON sessionref.sessions
    FOR EACH ROW WHEN ((OLD.owner, OLD.updated_at) IS DISTINCT FROM (NEW.owner, NEW.updated_at))
    EXECUTE FUNCTION sessionref.follow_session();

-- The matching messages of `p_sessions`, in that order, that the caller may read.
CREATE FUNCTION sessionref.session_matches(
    p_sessions bigint[], p_query tsquery, p_folder text, p_exclude_id text, p_exclude_machine text,
    p_limit bigint, p_text_chars integer, p_shared bigint[]
) {_MATCH_ROWS}
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
{_NEWEST_FIRST_PLAN}
SET jit = off
AS $function$
    SELECT s.id, m.seq, m.role, m.kind, m.time, left(m.text, p_text_chars), ts_rank(m.words, p_query),
           p_folder IS NOT NULL AND s.folder IS NOT DISTINCT FROM p_folder, s.updated_at, NULL::boolean
    FROM unnest(p_sessions) c(key)
    JOIN sessionref.sessions s ON s.key = c.key
    CROSS JOIN LATERAL (SELECT n.seq, n.role, n.kind, n.time, n.text, n.words FROM sessionref.messages n
                        WHERE n.session_key = s.key AND n.words @@ p_query ORDER BY n.seq) m
    WHERE (s.owner = session_user OR s.key = ANY(p_shared))
      AND s.machine <> p_exclude_machine AND s.id IS DISTINCT FROM p_exclude_id
    LIMIT p_limit
$function$;

-- Title discovery's index step, as in version 4 with two changes (docs/catalog.md, "Discovery"):
-- * the newest sessions of each matching cwd are joined by key: at 200,000 sessions the planner
--   hashed the whole sessions table for it instead (a rare 3-letter needle such as `niv`: 155 ms,
--   6 ms by key);
-- * several words are asked for in the names with their separators removed (`p_bare`): a
--   separator replaced by a letter made the trigrams across a word boundary common ones (every
--   title has them), so two common words typed together read their long posting lists (`nokefu
--   ci`: 13.6 ms in the index, 3,627 candidates; without separators 5.0 ms, 2,550). Removing
--   characters from a title and from a needle alike keeps every match: `search` decides. The
--   visibility is checked on the rows (`IS TRUE`): ANDed as a bitmap of the owner's 500,000
--   sessions it cost 133 ms.
CREATE INDEX sessions_names_bare ON sessionref.sessions USING gin (({_NAMES_BARE}) gin_trgm_ops);
DROP FUNCTION sessionref.find_indexed(integer, text, text, text, text, text, integer);
CREATE FUNCTION sessionref.find_indexed(
    p_first_rank integer, p_pattern text, p_joined text, p_folder text, p_exclude_id text,
    p_exclude_machine text, p_limit integer, p_bare text
) RETURNS TABLE (
    rank integer, id text, machine text, owner name, title text, cwd text, created_at bigint,
    updated_at bigint
)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
SET enable_indexscan = on SET enable_sort = on SET enable_hashjoin = off SET enable_mergejoin = off
SET random_page_cost = 1.1 SET plan_cache_mode = force_custom_plan SET jit = off AS $function$
DECLARE
    shared bigint[] := {_SHARED_WITH_CALLER};
BEGIN
{_PLACES_MATCHING}
    PERFORM set_config('enable_indexscan', 'off', true);
    IF p_bare IS NOT NULL THEN{_names_matching(f"{_NAMES_BARE_OF_V} LIKE p_bare", " IS TRUE")}
    ELSE{_names_matching("v.names_joined LIKE p_joined")}
    END IF;
END
$function$;

DROP FUNCTION sessionref.search_messages(tsquery, text, text, text, integer, integer, text[], integer,
    integer, integer, integer, integer, integer);
-- Conversation search in up to three steps, each bounded (docs/catalog.md):
-- 1. the newest `p_walk` sessions, each session's words checked first (the finished words; at most
--    `p_first` of them pass), the messages of those holding every term read;
-- 2. when few sessions held the finished words (an estimated `p_estimate_most` in the catalog), the
--    words' index gives the newest `p_candidates` sessions past step 1 holding every term;
-- 3. otherwise, walk on `p_walk_more` sessions (at most `p_checked_more` read) until twice
--    `p_enough` matches were found.
CREATE FUNCTION sessionref.search_messages(
    p_query tsquery, p_folder text, p_exclude_id text, p_exclude_machine text, p_examined integer,
    p_text_chars integer, p_terms text[] DEFAULT NULL, p_walk integer DEFAULT 10000,
    p_first integer DEFAULT 1000, p_enough integer DEFAULT 40, p_estimate_most integer DEFAULT 1000,
    p_candidates integer DEFAULT 400, p_walk_more integer DEFAULT 15000,
    p_checked_more integer DEFAULT 600
) {_MATCH_ROWS}
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
{_NEWEST_FIRST_PLAN}
SET plan_cache_mode = force_custom_plan SET jit = off
AS $function$
DECLARE
    shared bigint[] := sessionref.shared_with_caller();
    every_term tsquery;
    whole_words tsquery;
    walked bigint[];
    holds boolean[];
    passing bigint[];
    got bigint := 0;
    more bigint := 0;
    last_updated bigint;
    last_key bigint;
    sessions_known bigint;
    estimate float8;
BEGIN
    -- A session's words have no positions: a phrase is checked there as its words.
    IF p_terms IS NULL OR cardinality(p_terms) = 0 THEN
        every_term := to_tsquery('simple', regexp_replace(p_query::text, '<[0-9-]+>', '&', 'g'));
        whole_words := every_term;
    ELSE
        every_term := to_tsquery('simple', array_to_string(p_terms, ' & '));
        whole_words := coalesce(to_tsquery('simple', nullif(array_to_string(
            ARRAY(SELECT t FROM unnest(p_terms) t WHERE t NOT LIKE '%:*'), ' & '), '')), every_term);
    END IF;
    -- 1. The newest sessions holding the finished words; of those, the ones holding every term.
    SELECT array_agg(w.session_key), array_agg(w.words IS NULL OR ts_match_vq(w.words, every_term))
    INTO walked, holds FROM (
        SELECT r.session_key, r.words FROM (
            SELECT sw.session_key, sw.owner, sw.words FROM sessionref.session_words sw
            ORDER BY sw.updated_at DESC, sw.session_key LIMIT p_walk) r
        WHERE (r.owner = session_user OR r.session_key = ANY(shared))
          AND (r.words IS NULL OR ts_match_vq(r.words, whole_words))
        LIMIT p_first) w;
    walked := coalesce(walked, '{{}}');
    passing := ARRAY(SELECT k FROM unnest(walked, holds) u(k, h) WHERE h);
    RETURN QUERY SELECT * FROM sessionref.session_matches(passing, p_query, p_folder, p_exclude_id,
        p_exclude_machine, p_examined, p_text_chars, shared);
    GET DIAGNOSTICS got = ROW_COUNT;
    IF got >= p_examined THEN
        {_status_row("false")}
        RETURN;
    END IF;
    -- Where step 1 stopped: its last session holding the finished words, or the last one read.
    IF cardinality(walked) >= p_first THEN
        SELECT sw.updated_at, sw.session_key INTO last_updated, last_key FROM sessionref.session_words sw
        WHERE sw.session_key = walked[cardinality(walked)];
    ELSE
        SELECT sw.updated_at, sw.session_key INTO last_updated, last_key FROM sessionref.session_words sw
        ORDER BY sw.updated_at DESC, sw.session_key OFFSET p_walk - 1 LIMIT 1;
        IF NOT FOUND THEN  -- every session was read
            {_status_row("true")}
            RETURN;
        END IF;
    END IF;
    IF got >= p_enough THEN
        {_status_row("false")}
        RETURN;
    END IF;
    SELECT c.reltuples::bigint INTO sessions_known FROM pg_class c
    WHERE c.oid = 'sessionref.session_words'::regclass;
    estimate := CASE WHEN cardinality(walked) >= p_first THEN 'infinity'::float8
                     ELSE cardinality(walked)::float8 / p_walk * greatest(sessions_known, p_walk) END;
    IF estimate <= p_estimate_most THEN
        -- 2. Few sessions hold the finished words: their index, past step 1, newest first (a
        --    session whose words are unknown is read too). The rest of the terms are checked on
        --    the rows (`ts_match_vq`): asking the index for a short prefix costs its every word.
        PERFORM set_config('enable_bitmapscan', 'on', true);
        PERFORM set_config('enable_sort', 'on', true);
        PERFORM set_config('enable_indexscan', 'off', true);
        passing := ARRAY(
            SELECT c.session_key FROM (
                SELECT sw.session_key, sw.updated_at FROM sessionref.session_words sw
                WHERE sw.words @@ whole_words AND ts_match_vq(sw.words, every_term)
                  AND {_VISIBLE_PAST_STEP_ONE}
                UNION ALL
                SELECT sw.session_key, sw.updated_at FROM sessionref.session_words sw
                WHERE sw.words IS NULL AND {_VISIBLE_PAST_STEP_ONE}) c
            ORDER BY c.updated_at DESC, c.session_key LIMIT p_candidates);
        PERFORM set_config('enable_bitmapscan', 'off', true);
        PERFORM set_config('enable_sort', 'off', true);
        PERFORM set_config('enable_indexscan', 'on', true);
        RETURN QUERY SELECT * FROM sessionref.session_matches(passing, p_query, p_folder, p_exclude_id,
            p_exclude_machine, p_examined - got, p_text_chars, shared);
        GET DIAGNOSTICS more = ROW_COUNT;
        {_status_row("cardinality(passing) < p_candidates AND got + more < p_examined")}
        RETURN;
    END IF;
    -- 3. Many sessions hold the finished words, few of their messages match: read on newest first.
    passing := ARRAY(
        SELECT r.session_key FROM (
            SELECT sw.session_key, sw.owner, sw.words FROM sessionref.session_words sw
            WHERE sw.updated_at < last_updated OR (sw.updated_at = last_updated AND sw.session_key > last_key)
            ORDER BY sw.updated_at DESC, sw.session_key LIMIT p_walk_more) r
        WHERE (r.owner = session_user OR r.session_key = ANY(shared))
          AND (r.words IS NULL OR ts_match_vq(r.words, every_term))
        LIMIT p_checked_more);
    RETURN QUERY SELECT * FROM sessionref.session_matches(passing, p_query, p_folder, p_exclude_id,
        p_exclude_machine, least(p_examined, 2 * p_enough) - got, p_text_chars, shared);
    {_status_row("false")}
END
$function$;
"""

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        1,
        "sessions, messages and shares with trigram, full-text indexes and row-level security",
        f"""
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE sessionref.sessions (
    key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL CHECK (length(id) BETWEEN 1 AND 400),
    owner name NOT NULL DEFAULT current_user,
    machine text NOT NULL CHECK (length(machine) BETWEEN 1 AND 200),
    source text NOT NULL,
    title text,
    cwd text,
    folder text GENERATED ALWAYS AS (substring(cwd FROM '([^/\\\\]+)[/\\\\]*$')) STORED,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    through_seq bigint,
    format_version integer NOT NULL DEFAULT 0,
    messages integer NOT NULL DEFAULT 0,
    published_at timestamptz NOT NULL DEFAULT now(),
    search text GENERATED ALWAYS AS
        (lower(id || E'\\x1f' || coalesce(title, '') || E'\\x1f' || coalesce(cwd, ''))) STORED,
    UNIQUE (owner, machine, id)
);
CREATE INDEX sessions_recent ON sessionref.sessions (updated_at DESC, key);
CREATE INDEX sessions_folder_recent ON sessionref.sessions (folder, updated_at DESC, key);
CREATE INDEX sessions_without_cwd ON sessionref.sessions (updated_at DESC, key) WHERE cwd IS NULL;
CREATE INDEX sessions_by_id ON sessionref.sessions (id text_pattern_ops);
CREATE INDEX sessions_search ON sessionref.sessions USING gin (search gin_trgm_ops);

CREATE TABLE sessionref.messages (
    session_key bigint NOT NULL REFERENCES sessionref.sessions (key) ON DELETE CASCADE,
    seq bigint NOT NULL,
    owner name NOT NULL DEFAULT current_user,
    role text NOT NULL CHECK (role IN ('user', 'assistant')),
    kind text NOT NULL CHECK (kind IN ('message', 'checkpoint')),
    time bigint NOT NULL,
    text text NOT NULL,
    words tsvector GENERATED ALWAYS AS
        (to_tsvector('simple'::regconfig, left(text, {INDEXED_TEXT_CHARS}))) STORED,
    PRIMARY KEY (session_key, seq)
);
CREATE INDEX messages_words ON sessionref.messages USING gin (words);

CREATE TABLE sessionref.shares (
    session_key bigint NOT NULL REFERENCES sessionref.sessions (key) ON DELETE CASCADE,
    shared_with oid NOT NULL,
    owner name NOT NULL DEFAULT current_user,
    shared_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_key, shared_with)
);

ALTER TABLE sessionref.sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY sessions_read ON sessionref.sessions FOR SELECT
    USING (owner = current_user OR key IN ({_VISIBLE_KEYS}));
CREATE POLICY sessions_insert ON sessionref.sessions FOR INSERT WITH CHECK (owner = current_user);
CREATE POLICY sessions_update ON sessionref.sessions FOR UPDATE
    USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY sessions_delete ON sessionref.sessions FOR DELETE USING (owner = current_user);

ALTER TABLE sessionref.messages ENABLE ROW LEVEL SECURITY;
CREATE POLICY messages_read ON sessionref.messages FOR SELECT
    USING (owner = current_user OR session_key IN ({_VISIBLE_KEYS}));
CREATE POLICY messages_insert ON sessionref.messages FOR INSERT
    WITH CHECK (owner = current_user AND {_OWNS_SESSION});
CREATE POLICY messages_update ON sessionref.messages FOR UPDATE
    USING (owner = current_user) WITH CHECK (owner = current_user AND {_OWNS_SESSION});
CREATE POLICY messages_delete ON sessionref.messages FOR DELETE USING (owner = current_user);

ALTER TABLE sessionref.shares ENABLE ROW LEVEL SECURITY;
CREATE POLICY shares_read ON sessionref.shares FOR SELECT
    USING (owner = current_user OR pg_has_role(current_user, shared_with, 'MEMBER'));
CREATE POLICY shares_insert ON sessionref.shares FOR INSERT
    WITH CHECK (owner = current_user AND {_OWNS_SESSION});
CREATE POLICY shares_delete ON sessionref.shares FOR DELETE USING (owner = current_user);

{_SEARCH_FUNCTIONS}
GRANT USAGE ON SCHEMA sessionref TO PUBLIC;
GRANT SELECT ON sessionref.schema_version TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON sessionref.sessions, sessionref.messages TO PUBLIC;
GRANT SELECT, INSERT, DELETE ON sessionref.shares TO PUBLIC;
""",
    ),
    Migration(
        2,
        "conversation search newest first, the full-text index only for rare words",
        _SEARCH_MESSAGES_V2,
    ),
    Migration(3, "title discovery newest first stops at a first screen", _FIND_NEWEST_V3),
    Migration(
        4,
        "title discovery newest first from covering indexes, reads on; trigrams across words",
        _READ_NEWEST_V4,
        rewrites=("sessions", "places"),
    ),
    Migration(5, "conversation search counts what it read from the primary key", _SEARCH_MESSAGES_V5),
    Migration(
        6,
        "conversation search checks a session's words first; titles' names without separators",
        _SESSION_WORDS_V6,
        rewrites=("session_words",),
    ),
)
"""Every schema step, oldest first; a new step is appended, never edited once released."""

LATEST_VERSION: Final = MIGRATIONS[-1].version


def _applied_version(cursor: Any) -> int | None:
    """The newest version recorded in the catalog, or None when it has no `schema_version` table."""
    cursor.execute("SELECT to_regclass('sessionref.schema_version') IS NOT NULL")
    if not cursor.fetchone()[0]:
        return None
    cursor.execute("SELECT coalesce(max(version), 0) FROM sessionref.schema_version")
    version: int = cursor.fetchone()[0]
    return version


def _refuse_newer(version: int) -> None:
    if version > LATEST_VERSION:
        raise CatalogError(
            CATALOG_SCHEMA_NEWER,
            f"the catalog's schema is version {version}, newer than this sessionref knows "
            f"(up to {LATEST_VERSION}): upgrade sessionref on this machine",
        )


def migrate(connection: Any) -> list[Migration]:
    """Create or upgrade the catalog's schema in one transaction; the steps applied (none: current).

    `CATALOG_SCHEMA_NEWER` when the catalog is newer than `LATEST_VERSION` (nothing is changed).
    """
    with connection.transaction(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        cursor.execute("CREATE SCHEMA IF NOT EXISTS sessionref")
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS sessionref.schema_version ("
            " version integer PRIMARY KEY,"
            " summary text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now(),"
            " applied_by name NOT NULL DEFAULT current_user)"
        )
        current = _applied_version(cursor) or 0
        _refuse_newer(current)
        applied: list[Migration] = []
        for step in MIGRATIONS:
            if step.version <= current:
                continue
            cursor.execute(step.sql)
            cursor.execute(
                "INSERT INTO sessionref.schema_version (version, summary) VALUES (%s, %s)",
                (step.version, step.summary),
            )
            applied.append(step)
    _vacuum_rewritten(connection, applied)
    return applied


def _vacuum_rewritten(connection: Any, applied: list[Migration]) -> None:
    """`VACUUM (ANALYZE)` the tables `applied` steps rewrote (outside a transaction, as VACUUM must be)."""
    tables = sorted({table for step in applied for table in step.rewrites})
    if not tables:
        return
    autocommit = connection.autocommit
    connection.autocommit = True
    try:
        for table in tables:
            connection.execute(f"VACUUM (ANALYZE) sessionref.{table}")
    finally:
        connection.autocommit = autocommit


def check_schema(connection: Any) -> int:
    """The catalog's schema version, when this code can use it; else a coded error saying who acts.

    `CATALOG_SCHEMA_MISSING` when there is no catalog (or an older one): the database's owner runs
    `sessionref catalog init`. `CATALOG_SCHEMA_NEWER` when it is newer than this code.
    """
    with connection.cursor() as cursor:
        version = _applied_version(cursor)
    if not connection.autocommit:
        connection.rollback()
    if version is None or version == 0:
        raise CatalogError(
            CATALOG_SCHEMA_MISSING,
            "this database has no sessionref catalog yet: its owner runs `sessionref catalog init`",
        )
    _refuse_newer(version)
    if version < LATEST_VERSION:
        raise CatalogError(
            CATALOG_SCHEMA_MISSING,
            f"the catalog's schema is version {version}, older than this sessionref needs "
            f"({LATEST_VERSION}): the database's owner runs `sessionref catalog init` to upgrade it",
        )
    return version
