"""The README's second set-up command is the one `.ci/run` runs, word for word."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def shell_blocks(markdown: str) -> list[str]:
    """The contents of the ```sh blocks of a Markdown text, in order."""
    blocks: list[str] = []
    current: list[str] | None = None
    for line in markdown.splitlines():
        if current is None and line.strip() == "```sh":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append("\n".join(current).strip())
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def test_the_readme_check_command_is_what_ci_runs() -> None:
    ci_command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    blocks = shell_blocks((ROOT / "README.md").read_text())
    assert blocks[0].endswith("sessionref demo")
    assert blocks[1] == ci_command


def test_shell_blocks_reads_only_sh_fences() -> None:
    text = "intro\n```sh\nfirst\n```\n```toml\nx = 1\n```\n```sh\nsecond\n```\n"
    assert shell_blocks(text) == ["first", "second"]
