"""Every relative link in README.md and docs/ points at a file that exists, and at a heading it has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
FENCED_BLOCK = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def documents() -> list[Path]:
    """README.md and every Markdown file under docs/, in a stable order."""
    return [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").rglob("*.md"))]


def prose(markdown: str) -> str:
    """The Markdown without its fenced blocks and inline code, where link syntax is only text."""
    return INLINE_CODE.sub("", FENCED_BLOCK.sub("", markdown))


def heading_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = INLINE_CODE.sub(lambda code: code.group(0)[1:-1], heading).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every heading anchor of a Markdown text, repeated headings numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    result: set[str] = set()
    for match in HEADING.finditer(FENCED_BLOCK.sub("", markdown)):
        anchor = heading_anchor(match.group(1))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        result.add(anchor if count == 0 else f"{anchor}-{count}")
    return result


def broken_links(document: Path) -> list[str]:
    """The relative links of one document whose file or heading does not exist."""
    broken: list[str] = []
    for match in LINK.finditer(prose(document.read_text(encoding="utf-8"))):
        target = match.group(1)
        if EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        linked = (document.parent / path_part).resolve() if path_part else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked.read_text(encoding="utf-8"))):
            broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("document", documents(), ids=lambda path: str(path.relative_to(REPOSITORY)))
def test_every_relative_link_resolves(document: Path) -> None:
    assert broken_links(document) == []


def test_a_missing_file_and_a_missing_heading_are_caught(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## The `x` option, again\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#the-x-option-again) [gone](missing.md) [no heading](other.md#nope)\n"
        "`[code](missing.md)` [web](https://example.com/missing)\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["missing.md: no such file", "other.md#nope: no such heading"]
