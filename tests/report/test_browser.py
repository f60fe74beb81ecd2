"""The HTML report in a real headless Chromium (Debian's `chromium`), driven by Playwright.

Needs `pip install playwright` (its Python package only: `playwright install` is never
run; the browser is /usr/bin/chromium, or $CHROMIUM). Skipped, with the reason, when
either is missing, unless HARNESS_REQUIRE_BROWSER=1 (CI), which makes that a failure.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.report import write_compare, write_report
from harness.report.render import task_anchor
from synthrun import header, synthetic_records, write_run

pytestmark = pytest.mark.browser

def open_report(browser, path: Path):
    """Opens a file:// page, recording console errors, page errors and any request
    that leaves the file (a self-contained report makes none)."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on("request", lambda r: problems.append(f"request: {r.url}") if r.url != path.as_uri() else None)
    response = page.goto(path.as_uri(), wait_until="load")
    assert response is None or response.ok
    return page, problems


def test_report_in_chromium(browser, tmp_path: Path):
    run = write_run(tmp_path / "run", header(oracle_feedback=True), synthetic_records())
    html = write_report(run)
    page, problems = open_report(browser, html)

    plot = page.locator("#plot-pass1-by-trial svg")
    plot.scroll_into_view_if_needed()
    assert plot.is_visible()
    box = plot.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 150, box
    compute = page.locator("#plot-compute svg").bounding_box()
    assert compute and compute["width"] > 300 and compute["height"] > 100

    banner = page.locator("#oracle-warning")
    assert banner.is_visible()
    color = banner.evaluate("e => getComputedStyle(e).backgroundColor")
    assert color == "rgb(204, 0, 0)"

    # the answer comes first: the top line above the run's details and every table
    top = page.locator("#answer .topline").first
    assert top.is_visible() and top.inner_text().startswith(
        "The lesson's own effect (feedback is reflexion without it): reflexion \u2212 feedback: ")
    cost = page.locator("#plot-cost svg").bounding_box()
    assert cost and cost["width"] > 300 and cost["height"] > 100
    assert top.bounding_box()["y"] < page.locator(".run-info").first.bounding_box()["y"]
    severe = page.locator('li.caveat[data-caveat="oracle"]')
    assert severe.evaluate("e => getComputedStyle(e).color") == "rgb(204, 0, 0)"

    # the model's "<script>" in code is text on the page, not a live element
    assert page.locator("script").count() == 0
    code = page.locator("pre.code").first
    assert "</pre><script>alert(1)</script>" in code.text_content()
    # per-task detail starts collapsed; one click opens an attempt
    assert page.locator("details.attempt[open]").count() == 0
    assert not code.is_visible()
    page.locator("details.attempt > summary").first.click()
    assert code.is_visible()

    # a per-task link lands on that task's detail section
    anchor = task_anchor("HumanEval/1")
    top = f"document.getElementById('{anchor}').getBoundingClientRect().top"
    page.evaluate("window.scrollTo(0, 0)")
    assert page.evaluate(top) > 1000  # below the first screen before the click
    page.locator("#per_task a", has_text="HumanEval/1").click()
    assert page.evaluate("location.hash") == f"#{anchor}"
    assert page.locator(f"#{anchor}").is_visible()
    assert 0 <= page.evaluate(top) < 1000 - 100  # scrolled to it (near the top unless the page ends)

    page.locator("#pass_at_k").scroll_into_view_if_needed()
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=False)
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000
    assert problems == []
    page.close()


def test_compare_report_in_chromium(browser, tmp_path: Path):
    a = write_run(tmp_path / "a", header("run-a"), synthetic_records("run-a"))
    b = write_run(tmp_path / "b", header("run-b"), synthetic_records("run-b"))
    html = write_compare([a, b], tmp_path / "cmp")
    page, problems = open_report(browser, html)
    box = page.locator("#plot-pass1-by-trial svg").bounding_box()
    assert box and box["width"] > 300 and box["height"] > 150
    shot = tmp_path / "compare.png"
    page.locator("#plot-pass1-by-trial").screenshot(path=str(shot))
    print(f"screenshot: {shot}")
    assert problems == []
    page.close()
