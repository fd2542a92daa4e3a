"""A real headless browser for the HTML report: Debian's chromium driven by Playwright.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium``. Without it
the browser tests skip with the reason, except in CI (``CI`` set), where ``.ci/run``
installs chromium and a missing one is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run installs Debian's chromium (apt-get install chromium)")
        pytest.skip(f"the browser tests need Debian's chromium at {CHROMIUM} (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("the browser tests need the playwright package: pip install -e '.[test]'")

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Opened:
    """A report open in a browser page, with everything it tried to do."""

    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def open_all_groups(self) -> int:
        """Open every group (loading its details) and return how many there are."""
        groups = self.page.locator("details.group > summary")
        for i in range(groups.count()):
            groups.nth(i).click()
        self.page.wait_for_timeout(100)
        return int(groups.count())

    def assert_clean(self, url: str) -> None:
        """No console message of type error or warning, no page error, no dialog, no request but the page."""
        bad = [(kind, text) for kind, text in self.console if kind in ("error", "warning")]
        assert bad == [], bad
        assert self.errors == []
        assert self.dialogs == []
        assert self.requests == [url], self.requests


@pytest.fixture
def open_report(browser: Any) -> Iterator[Any]:
    contexts: list[Any] = []

    def open_(path: Path, fragment: str = "") -> Opened:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page)
        page.on("console", lambda m: opened.console.append((m.type, m.text)))
        page.on("pageerror", lambda e: opened.errors.append(str(e)))
        page.on("request", lambda r: opened.requests.append(r.url))

        def dialog(d: Any) -> None:
            opened.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)
        page.goto(path.as_uri() + (f"#{fragment}" if fragment else ""))
        page.wait_for_load_state("load")
        return opened

    yield open_
    for context in contexts:
        context.close()
