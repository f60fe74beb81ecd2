"""`harness view` in a real headless Chromium (Debian's `chromium`), driven by Playwright.

Navigation, filters, a diff shown, a live update arriving, and no console error or
request leaving 127.0.0.1. Skipped, with the reason, when Playwright or Chromium is
missing, unless HARNESS_REQUIRE_BROWSER=1 (CI), which makes that a failure. With
VIEW_SCREENSHOTS=<folder> the test leaves screenshots of each page there.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from viewruns import append, header, two_strategy_records, write_run

pytestmark = pytest.mark.browser

def _page(browser, base: str):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    # A fetch still in flight when the page navigates away (the runs page refreshes
    # itself from /api/runs) is cancelled by the browser: net::ERR_ABORTED, no fault.
    page.on("requestfailed", lambda r: None if r.failure == "net::ERR_ABORTED"
            else problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("request", lambda r: None if r.url.startswith(base) else problems.append(f"request left: {r.url}"))
    return page, problems


def _shot(page, name: str) -> None:
    folder = os.environ.get("VIEW_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=False)


def test_navigate_filter_diff(browser, serve, tmp_path: Path):
    root = tmp_path / "results"
    write_run(root / "run-a", header(), two_strategy_records())
    write_run(root / "run-b", header("run-b", created_at="2026-12-02T00:00:00+00:00"), two_strategy_records("run-b"))
    server = serve(root, {"run-b": "second look"})
    base = server.url.rstrip("/")
    page, problems = _page(browser, base)

    page.goto(server.url)
    _shot(page, "01-runs")
    rows = page.locator("#runs tbody tr")
    assert rows.count() == 2
    page.fill("#run-filter", "second")
    assert page.locator("#runs tbody tr:not(.hide)").count() == 1
    assert "second look" in page.locator("#runs tbody tr:not(.hide)").inner_text()
    page.fill("#run-filter", "")

    page.click("text=run-a")
    page.wait_for_url(f"{base}/runs/run-a")
    top = page.locator(".topline")
    assert top.inner_text().startswith("Total, against baseline (plain sampling): reflexion − baseline: +0.0 points")
    assert page.locator("#plot-trial svg").bounding_box()["width"] > 300
    _shot(page, "02-run")

    page.click("text=reflexion passes, baseline fails")
    page.wait_for_url(f"{base}/runs/run-a/tasks?category=fixed")
    assert page.locator("#tasks tbody tr").all_inner_texts()[0].startswith("T/fix")
    assert page.locator("#tasks tbody tr").count() == 1
    page.select_option("select[name=category]", "")
    page.wait_for_url("**/tasks?category=&q=")
    assert page.locator("#tasks tbody tr").count() == 4
    page.fill("input[name=q]", "none")
    page.click("#task-filter button")
    assert page.locator("#tasks tbody tr").count() == 1
    _shot(page, "03-tasks")

    page.click("#tasks >> text=T/none")
    page.wait_for_url(f"{base}/runs/run-a/tasks/T/none")
    trial2 = page.locator("#reflexion-1-t2")
    diff = trial2.locator("pre.diff")
    assert diff.is_visible()
    assert diff.locator(".d-add").first.inner_text().startswith("+    return x + 1")
    assert page.locator("#reflexion-1-t3 .unchanged").is_visible()
    trial2.locator(".tab[data-show=code]").click()
    assert trial2.locator("pre.code[data-pane=code]").is_visible() and not diff.is_visible()
    trial2.locator("details.prompt summary").click()
    page.wait_for_function("document.querySelector('#reflexion-1-t2 details.prompt').dataset.loaded === '1'")
    page.locator("#reflexion-1-t2 details.prompt .slot p").wait_for()
    trial2.locator(".tab[data-show=diff]").click()
    trial2.scroll_into_view_if_needed()
    _shot(page, "04-attempt")

    page.goto(f"{server.url}compare?run=run-a&run=run-b")
    assert page.locator(".topline.small").first.inner_text().startswith("reflexion (run-a) − reflexion (second look)")
    page.check("#only-differs")
    assert page.locator("#matrix tbody tr:not(.hide)").count() == 0  # the same outcomes everywhere
    _shot(page, "05-compare")
    assert problems == []


def test_live_update_arrives(browser, serve, tmp_path: Path):
    root = tmp_path / "results"
    records = two_strategy_records()
    run = write_run(root / "run-a", header(), records[:3], summary=False)  # T/fix only: running
    server = serve(root)
    page, problems = _page(browser, server.url.rstrip("/"))
    page.goto(f"{server.url}runs/run-a")
    assert page.locator("body").get_attribute("data-live-run") == "run-a"
    page.locator("#live").wait_for(state="visible")
    assert "fixed 1, broken 0 of 1 tasks" in page.locator(".topline").inner_text()
    page.evaluate("window.__updates = 0; document.addEventListener('view:updated', () => window.__updates++)")

    append(run, records[3:])  # the rest of the run lands
    page.wait_for_function("document.querySelector('.topline').textContent.includes('of 4 tasks')",
                           timeout=120_000)  # a hang guard: the page updates within seconds when it works
    assert "fixed 1, broken 1 of 4 tasks" in page.locator(".topline").inner_text()
    assert page.evaluate("window.__updates") >= 1
    _shot(page, "06-live")
    assert problems == []
