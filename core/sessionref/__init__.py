"""sessionref: mention one AI chat session inside another.

The public API is re-exported here once the modules land.
"""
