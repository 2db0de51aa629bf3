"""Regenerate the SVG screenshots in `screenshots/` (used by the README) from the test scenarios.

Run from the repository root: `.venv/bin/python scripts/screenshots.py [NAME ...]`
(no names = all). Each picture is the same state the snapshot tests pin, built by
`tests/tui/scenarios.py` over a fresh temporary store, so the images never drift from the tests.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "tui"))

from scenarios import SCENARIOS, Scenario  # noqa: E402
from textual.pilot import Pilot  # noqa: E402

OUT = ROOT / "screenshots"


def render(scenario: Scenario, out: Path) -> Path:
    """Run `scenario` headless and save its final frame as `out/<name>.svg`."""
    target = out / f"{scenario.name}.svg"
    with tempfile.TemporaryDirectory(prefix="sessionref-shot-") as tmp:
        harness, run_before = scenario.build(Path(tmp))

        async def auto_pilot(pilot: Pilot[Any]) -> None:
            await run_before(pilot)
            await pilot.pause()
            pilot.app.save_screenshot(filename=target.name, path=str(out))
            pilot.app.exit()

        harness.app.run(headless=True, size=scenario.size, auto_pilot=auto_pilot)
    return target


def main() -> None:
    """Render the requested scenarios (all by default) and list the files written."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help=f"any of: {', '.join(SCENARIOS)}")
    args = parser.parse_args()
    unknown = [name for name in args.names if name not in SCENARIOS]
    if unknown:
        parser.error(f"unknown screenshot(s): {', '.join(unknown)}")
    OUT.mkdir(exist_ok=True)
    for name in args.names or list(SCENARIOS):
        path = render(SCENARIOS[name], OUT)
        print(f"{path.relative_to(ROOT)}  —  {SCENARIOS[name].description}")


if __name__ == "__main__":
    main()
