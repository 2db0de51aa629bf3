"""The reference service: candidate discovery and snapshot preparation over any `SessionQuery`.

It depends on the contract (and pydantic for its configuration), never on the store, the agent
or the models: a backend implements the protocols in `protocols` (docs/architecture.md).
"""
