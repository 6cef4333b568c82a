"""The documentation: the MkDocs site builds in strict mode, and every relative link in the README and docs/
resolves."""

import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)


def _prose(text: str) -> str:
    """The text with code blocks and code spans removed: brackets in code are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) gives a heading; GitHub's agrees for the headings used here."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {_slug(match) for match in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.MULTILINE)}


def _relative_links(page: Path) -> list[str]:
    return [
        target for target in LINK.findall(_prose(page.read_text())) if not re.match(r"[a-z][a-z0-9+.-]*:", target)
    ]  # http:, https:, mailto: are not checked here


def test_slug_matches_the_anchors_mkdocs_writes():
    assert (
        _slug("Speed of light: `solbench sol`, `solbench hw`, `solbench score`")
        == "speed-of-light-solbench-sol-solbench-hw-solbench-score"
    )
    assert _slug("Inputs: role-aware value ranges") == "inputs-role-aware-value-ranges"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_existing_files_and_headings(page):
    broken = []
    for target in _relative_links(page):
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(
                f"{target}: no file {destination.relative_to(ROOT) if ROOT in destination.parents else destination}"
            )
        elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
            broken.append(f"{target}: no heading with anchor #{anchor} in {destination.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


def test_the_link_check_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[ok](#title) [missing](other.md) [bad anchor](#nowhere) `[code](not-a-link.md)`\n")
    assert _relative_links(page) == ["#title", "other.md", "#nowhere"]
    assert _anchors(page) == {"title"}


def test_every_docs_page_is_in_the_site_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    missing = [
        p.name
        for p in sorted((ROOT / "docs").glob("*.md"))
        if not re.search(rf":\s+{re.escape(p.name)}\s*$", nav, re.MULTILINE)
    ]
    assert not missing, f"pages missing from mkdocs.yml's nav: {missing}"


def _shallow_nested_items(text: str) -> list[str]:
    """List items indented by 1 to 3 spaces: GitHub nests them, Python-Markdown (MkDocs) needs 4 and flattens them."""
    return [line for line in FENCE.sub("", text).splitlines() if re.match(r" {1,3}([-*+]|\d+\.) ", line)]


@pytest.mark.parametrize("page", PAGES[1:], ids=lambda p: str(p.relative_to(ROOT)))
def test_nested_lists_are_indented_four_spaces(page):
    shallow = _shallow_nested_items(page.read_text())
    assert not shallow, f"{page.relative_to(ROOT)}: indent nested list items by 4 spaces per level:\n" + "\n".join(
        shallow
    )


def test_the_indent_check_finds_a_shallow_item():
    assert _shallow_nested_items("- a\n  - b\n    - c\n1. d\n   - e\n```\n  - code\n```\n") == ["  - b", "   - e"]


def _stray_list_markers(html: str) -> list[str]:
    """Rendered text lines that begin with a list marker: an item Markdown read as the previous paragraph's text."""
    text = re.sub(r"<code>.*?</code>", "code", re.sub(r"<pre.*?</pre>", "", html, flags=re.DOTALL), flags=re.DOTALL)
    return [m.group(0).strip() for m in re.finditer(r"\n[ \t]*(?:[-*+]|\d+\.) \S.*", text)]


@pytest.mark.slow
def test_mkdocs_strict_build_passes(tmp_path):
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "architecture" / "index.html").is_file()
    stray = {
        str(page.relative_to(tmp_path)): _stray_list_markers(page.read_text())
        for page in (tmp_path / "site").rglob("index.html")
    }
    stray = {page: lines for page, lines in stray.items() if lines}
    assert not stray, f"list items rendered as text (put a blank line before them): {stray}"
