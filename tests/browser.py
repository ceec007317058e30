"""Headless Chromium for the tests: Debian's chromium driven by Playwright, one
browser per test module (conftest.py's ``chromium`` fixture), and each test's pages
opened on it in a context of their own (``open_page``), with what the page throws
collected."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from waiting import HANG_S

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def launch_chromium(playwright: Any) -> Any:
    """Debian's Chromium, headless, whose pages wait as long as the hang guard."""
    if not Path(CHROMIUM).exists():
        found = shutil.which("chromium")
        pytest.fail(
            f"headless Chromium is needed at {CHROMIUM} (found: {found or 'none'}); "
            "run ./scripts/setup, which installs Debian's chromium"
        )
    from playwright.sync_api import expect

    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    # Pages wait on events as the rest of the suite does: as long as a loaded machine
    # needs, HANG_S being only the guard against a hang (Playwright's own defaults,
    # 5 and 30 s, failed on a machine at load 20+).
    expect.set_options(timeout=HANG_S * 1000)
    new_context = browser.new_context

    def patient_context(**options: Any) -> Any:
        context = new_context(**options)
        context.set_default_timeout(HANG_S * 1000)
        return context

    browser.new_context = patient_context
    browser.new_page = lambda **options: patient_context(**options).new_page()
    return browser


@contextmanager
def open_page(browser: Any, url: str, width: int, height: int,
              **options: Any) -> Iterator[tuple[Any, list[str]]]:
    """A page of ``width`` x ``height`` CSS px in a context of its own, at ``url``:
    ``(page, errors)``, ``errors`` being what the page's scripts threw (their
    ``pageerror``s) from before it loaded. The context is closed at the end."""
    page = browser.new_page(viewport={"width": width, "height": height}, **options)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(url)
        yield page, errors
    finally:
        page.context.close()
