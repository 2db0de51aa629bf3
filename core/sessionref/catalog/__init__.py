"""The shared session catalog on PostgreSQL (docs/catalog.md).

Sessions from every machine that publishes to one PostgreSQL database are listed, searched and
captured on every machine that reads it. This package is the only one that talks to PostgreSQL
(psycopg 3, the optional `sessionref[catalog]` extra): `schema` creates and upgrades the tables
and their row-level security, `publisher` sends this machine's snapshot projections, `reader`
answers the service's read protocols, `sharing` grants and revokes visibility. Nothing imports
this package unless a catalog is configured, and importing it does not import psycopg: only
`connection` does, when a connection is opened.
"""
