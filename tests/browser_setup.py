"""Test helper: Debian's Chromium for the browser tests, installed with apt when missing.

Playwright drives the system browser (`executable_path`); `playwright install` is never
used (browser builds cannot be downloaded here, Debian packages can). Only when apt itself
is impossible (no apt-get, or not root and no sudo) are the browser tests skipped.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = os.environ.get("CLEANER_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
INSTALL_TIMEOUT_S = 1200


class ChromiumUnavailable(Exception):
    """apt cannot be used on this machine: the caller skips."""


class ChromiumInstallFailed(Exception):
    """apt was there but the install failed: the caller fails."""


def _usable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def ensure_chromium() -> str:
    """Path of a Chromium executable, installing Debian's `chromium` package when missing."""
    if _usable(CHROMIUM):
        return CHROMIUM
    apt = shutil.which("apt-get")
    if apt is None:
        raise ChromiumUnavailable(f"{CHROMIUM} is missing and apt-get is not available to install Debian's chromium")
    prefix: list[str] = []
    if os.geteuid() != 0:
        sudo = shutil.which("sudo")
        if sudo is None:
            raise ChromiumUnavailable(f"{CHROMIUM} is missing; installing it needs root (or sudo) for apt-get")
        prefix = [sudo, "-n"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    # One install at a time (pytest-xdist workers, parallel runs): the dpkg lock is not a queue.
    lock_path = Path(tempfile.gettempdir()) / "webcleaner-chromium-install.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _usable(CHROMIUM):
            return CHROMIUM
        for cmd in ([*prefix, apt, "update", "-qq"], [*prefix, apt, "install", "-y", "-qq", "chromium"]):
            try:
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                                      stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired as exc:
                raise ChromiumInstallFailed(f"{' '.join(cmd)} timed out after {INSTALL_TIMEOUT_S}s") from exc
            if proc.returncode != 0:
                if prefix and "password" in proc.stderr.lower():
                    raise ChromiumUnavailable("installing chromium needs root; sudo asks for a password")
                raise ChromiumInstallFailed(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
    if not _usable(CHROMIUM):
        raise ChromiumInstallFailed(f"apt-get installed chromium but {CHROMIUM} is not there")
    return CHROMIUM



def chromium_or_skip() -> str:
    """ensure_chromium() for a test: skipped when Chromium cannot be had here, failed when installing it failed."""
    import pytest

    try:
        return ensure_chromium()
    except ChromiumUnavailable as exc:
        pytest.skip(f"no Chromium and no way to install it: {exc}")
    except ChromiumInstallFailed as exc:
        pytest.fail(f"installing Debian's chromium failed: {exc}")


@contextmanager
def scriptless_context(chromium: str) -> Iterator:
    """A Playwright browser context of the Chromium at `chromium` with scripts off, 1200 x 800: what the fidelity
    checks read pages in (tests and scripts alike)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=LAUNCH_ARGS)
        try:
            yield browser.new_context(java_script_enabled=False, viewport={"width": 1200, "height": 800})
        finally:
            browser.close()
