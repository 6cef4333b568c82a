"""Every page in headless Chromium against a real `solbench serve` on 127.0.0.1, with the sample leaderboard
(written through the models into a SQLite file in tmp): content checked against queries.py, code hidden
before a set is frozen, private submissions invisible to others, no request off 127.0.0.1."""

from __future__ import annotations

import re
import runpy
import time
from pathlib import Path

import pytest

from service.conftest import LiveServer
from solbench.service.disclosure import HIDDEN

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SUBMISSIONS = 1500


def _skip_reason() -> str | None:
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (.ci/run installs it with apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401 - imported only to see whether it is installed
    except ImportError:
        return "the playwright package is missing (pip install playwright)"
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The sample leaderboard served by `solbench serve` (no workers), and a read session on its database."""
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from solbench.service.web.sample_data import HARDWARE, build_sample

    root = tmp_path_factory.mktemp("pages")
    started = time.perf_counter()
    sample = build_sample(root / "data", submissions=SUBMISSIONS)
    print(f"\nsample leaderboard of {sample.submissions} submissions built in {time.perf_counter() - started:.1f} s")
    settings = {
        "data_dir": str(root / "data"),
        "suites": [str(sample.suite_dir)],
        "hardware": HARDWARE,
        "workers": 0,
        "baselines": [],
    }
    server = LiveServer(root, settings, tmp_path_factory.mktemp("pages-cache"))
    server.sample = sample
    server.sessions = server.session_factory()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser(site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def visit(site, browser):
    """Open a path as anonymous or as a user (their API token); fails the test on any request off 127.0.0.1."""
    contexts, offsite = [], []

    def open_page(path: str, *, as_user: str | None = None, status: int = 200):
        headers = {"Authorization": f"Bearer {site.sample.tokens[as_user]}"} if as_user else {}
        context = browser.new_context(extra_http_headers=headers)
        contexts.append(context)
        page = context.new_page()
        page.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.startswith(site.url)
                else (offsite.append(route.request.url), route.abort())
            ),
        )
        started = time.perf_counter()
        response = page.goto(site.url + path)
        print(f"{path}: {(time.perf_counter() - started) * 1e3:.0f} ms ({SUBMISSIONS} submissions)")
        assert response.status == status, page.content()[:2000]
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert offsite == []


def cells(page, selector: str, row: int) -> list[str]:
    return [c.strip() for c in page.locator(f"{selector} tbody tr").nth(row).locator("td").all_inner_texts()]


def test_home_lists_sets_with_their_leaders_recent_firsts_and_activity(site, visit):
    from solbench.service import queries

    page = visit("/")
    with site.sessions() as session:
        board = queries.set_leaderboard(session, "L1")
        firsts = queries.recent_firsts(session, limit=10)
    first_row = cells(page, "#sets", 0)
    assert first_row[0] == "Level 1: memory-bound ops" and first_row[3] == board.rows[0].user
    assert first_row[4] == f"{board.rows[0].total:.3f}" and first_row[5].startswith("frozen ")
    assert cells(page, "#sets", 1)[5] == "open, code hidden"
    newest = cells(page, "#firsts", 0)
    assert newest[1] == firsts[0].user and newest[3] == f"{firsts[0].score:.3f}"
    assert newest[5] == f"#{firsts[0].submission_id}"
    assert page.locator("#total-submissions").inner_text() == str(site.sample.submissions)
    assert page.locator("figure svg polyline.trend").count() == 1


def test_set_leaderboard_ranks_users_by_the_mean_of_their_best_scores(site, visit):
    from solbench.service import queries

    page = visit("/sets/L2")
    with site.sessions() as session:
        board = queries.set_leaderboard(session, "L2")
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == min(len(board.rows), 50)
    for index in (0, 1, rows.count() - 1):
        expected = board.rows[index]
        assert cells(page, "#leaderboard", index)[:3] == [str(expected.rank), expected.user, f"{expected.total:.3f}"]
    assert page.locator("svg rect.bar").count() == min(len(board.rows), 20)
    assert "others' code is shown once the set is frozen" in page.inner_text(".subtitle")


def test_problem_page_shows_workloads_ranking_firsts_and_roofline(site, visit):
    from solbench.service import queries

    page = visit("/sets/L1/problems/softmax_rows_fp32")
    with site.sessions() as session:
        board = queries.problem_leaderboard(session, "softmax_rows_fp32")
    assert cells(page, "#workloads", 0)[:5] == ["softmax-B64", "B=64", "437 ns", "memory", "1.09 µs"]
    assert cells(page, "#ranking", 0)[:3] == ["1", board.entries[0].user, f"{board.entries[0].score:.3f}"]
    assert board.entries[0].harness_version in cells(page, "#ranking", 0)[4]
    timeline = page.locator("#timeline svg")
    assert timeline.locator("circle").count() == len(board.firsts)
    assert timeline.locator("title").nth(1).text_content().startswith(f"{board.firsts[0].user}: S = ")
    roofline = page.locator("#roofline svg")
    assert "ridge" in roofline.text_content() and roofline.locator("polyline.roof").count() == 1
    assert roofline.locator("circle").count() == len(board.entries)  # every best submission passed everywhere


def test_submission_page_shows_results_spread_findings_and_harness(site, visit):
    page = visit(f"/submissions/{site.sample.flagged_submission}")
    verdict = page.inner_text("#verdict")
    assert "PASSED" in verdict and "H200" in verdict and re.search(r"0\.1\.0\+[0-9a-f]{16}", verdict)
    assert page.locator("#results tbody tr").count() == 3 and cells(page, "#results", 0)[1] == "PASSED"
    assert page.locator("#spread svg line.spread").count() == 3
    assert "held out" in page.inner_text("#score-basis") and page.locator("#held-out-score").count() == 1
    # the set is open: others see the finding's rule and severity, not where in the code it is (disclosure.py)
    assert cells(page, "#findings", 0) == ["timer-import", "warn", "", HIDDEN]


def test_code_is_hidden_from_others_until_the_set_is_frozen(site, visit):
    hidden = visit(f"/submissions/{site.sample.open_set_submission}")
    assert "shown once set L2 is frozen" in hidden.inner_text("#code-hidden") and hidden.locator("#code").count() == 0
    own = visit(f"/submissions/{site.sample.open_set_submission}", as_user="bob")
    assert "def run(" in own.inner_text("#code")
    frozen = visit(f"/submissions/{site.sample.frozen_set_submission}")
    assert "carol's kernel for vector_add_fp32" in frozen.inner_text("#code")


def test_private_submissions_exist_only_for_their_owner(site, visit):
    private = site.sample.private_submission
    assert "There is no submission" in visit(f"/submissions/{private}", status=404).inner_text("main")
    assert visit(f"/submissions/{private}", as_user="alice").inner_text("h1").startswith(f"Submission #{private}")
    listed = visit("/users/alice?page=999").locator("#submissions tbody tr td:first-child").all_inner_texts()
    assert listed and f"#{private}" not in listed
    others_view = visit("/users/alice").inner_text(".subtitle")
    own_view = visit("/users/alice", as_user="alice").inner_text(".subtitle")
    total = lambda text: int(re.search(r"(\d+) submissions", text).group(1))  # noqa: E731 - a one-line helper next to its use
    assert total(own_view) > total(others_view)


def test_signing_in_through_the_form_comes_back_to_the_page_and_signing_out_forgets_it(site, visit):
    """Chromium's own Origin header passes the same-site check, and the cookie comes back on the next page."""
    private = site.sample.private_submission
    page = visit(f"/submissions/{private}", status=404)
    page.click("#account >> text=sign in")
    page.fill("#token", site.sample.tokens["alice"])
    page.click("#sign-in button")
    page.wait_for_url(f"**/submissions/{private}")
    assert page.inner_text("h1").startswith(f"Submission #{private}") and "alice" in page.inner_text("#account")
    page.click("#account button")
    page.wait_for_url(site.url + "/")
    assert "sign in" in page.inner_text("#account")
    assert page.goto(f"{site.url}/submissions/{private}").status == 404


def test_rescored_submission_shows_each_harness_release_and_what_changed(site, visit):
    page = visit(f"/submissions/{site.sample.rescored_submission}")
    history = page.inner_text("#history")
    assert "0.0.9+0123456789abcdef" in history and "T_SOL of softmax now counts the exp" in history


def test_user_page_paginates_newest_first(site, visit):
    from solbench.service import queries

    with site.sessions() as session:
        entries, total = queries.user_submissions(session, "alice", include_private=False, offset=50, limit=50)
    assert total > 50
    page = visit("/users/alice")
    assert f"page 1 of {-(-total // 50)} ({total} rows)" in page.inner_text(".pager")
    page.click("text=next →")
    page.wait_for_url("**/users/alice?page=2")
    assert cells(page, "#submissions", 0)[0] == f"#{entries[0].id}"
    assert page.locator("figure svg rect.bar").count() >= 1


def test_status_page_shows_queue_workers_hardware_and_evaluations_per_hour(site, visit):
    page = visit("/status")
    queue = page.inner_text("#queue")
    assert re.search(r"2\s+queued", queue) and re.search(r"1\s+running", queue)
    workers = {cells(page, "#workers", i)[0]: cells(page, "#workers", i) for i in range(3)}
    assert workers["gpu-worker-1"][3] == "busy" and workers["gpu-worker-2"][3] == "idle"
    assert workers["old-box"][3] == "gone"
    assert cells(page, "#hardware", 0)[:4] == ["H200", "NVIDIA H200 SXM 141GB", "2", "4.8 TB/s"]
    assert page.locator("#per-hour svg circle").count() == 48
    page.click("#workers a")  # the job gpu-worker-1 is running
    assert "not evaluated yet (running)" in page.inner_text("#verdict")
    assert page.locator("#results").inner_text().count("No result yet.") == 1


def test_unknown_pages_say_what_is_missing(visit):
    assert "There is no problem set 'nope'" in visit("/sets/nope", status=404).inner_text("main")
    assert "There is no user" in visit("/users/nobody", status=404).inner_text("main")


def test_screenshot_script_writes_a_png_per_page(site, browser, tmp_path):
    """scripts/page-screenshots' browser part against this module's server (the script's own build and server
    start are the same calls as the fixture's)."""
    script = runpy.run_path(str(ROOT / "scripts" / "page-screenshots"), run_name="page_screenshots")
    lines = script["shoot_with"](browser, site.url, site.sample, tmp_path, 900)
    print("\n".join(lines))
    shots = sorted(p.name for p in tmp_path.glob("*.png"))
    assert shots == sorted(f"{name}.png" for name in script["pages"](site.sample))
    assert shots == sorted(p.name for p in (ROOT / "docs" / "service-pages").glob("*.png"))
    assert all((tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in shots)
