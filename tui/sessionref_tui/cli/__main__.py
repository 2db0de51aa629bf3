"""`python -m sessionref_tui.cli`: the same as the `sessionref` script."""

import sys

from sessionref_tui.cli import main

sys.exit(main())
