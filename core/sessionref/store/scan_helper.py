"""`python -m sessionref.store.scan_helper`: a helper process of a big first scan (see `first_scan`)."""

import sys

from sessionref.store.first_scan import serve

if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
