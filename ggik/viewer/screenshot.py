"""Screenshots of a running viewer with a headless Chromium (the distribution's package, e.g. Debian's ``chromium``):
what ``ggik view --screenshot FILE`` and the browser test use. WebGL runs in software (SwiftShader), so no GPU or
display is needed; nothing but the viewer's own address is loaded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ggik.errors import GGIKError

__all__ = ["find_browser", "screenshot", "BROWSERS"]

ATTEMPTS = 2  #: tries of a screenshot whose browser hangs
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")  #: looked up on PATH, in order


def find_browser() -> str | None:
    """The path of a Chromium-family browser on PATH (``$GGIK_BROWSER`` first, when set), or None."""
    for name in (os.environ.get("GGIK_BROWSER", ""), *BROWSERS):
        path = shutil.which(name) if name else None
        if path:
            return path
    return None


def screenshot(url: str, out: str | Path, width: int = 1280, height: int = 800, wait_ms: int = 8000) -> Path:
    """Load ``url`` in a headless Chromium of ``width`` x ``height`` pixels, let the page run ``wait_ms`` [ms] of
    virtual time (the viewer connects, receives its scene and renders), and write its screenshot as a PNG ``out``.

    GGIKError when no browser is found or it writes no image (its last error lines quoted)."""
    browser = find_browser()
    if browser is None:
        raise GGIKError(
            f"a screenshot needs a Chromium browser on PATH (one of {', '.join(BROWSERS)}; e.g. apt-get "
            "install chromium), or its path in $GGIK_BROWSER"
        )
    out = Path(out).resolve()
    if not out.parent.is_dir():
        raise GGIKError(f"--screenshot {out}: not a file in an existing folder")
    with tempfile.TemporaryDirectory(prefix="ggik-chromium-") as profile:
        shot = Path(profile) / "shot.png"
        command = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--virtual-time-budget={wait_ms}",
            f"--screenshot={shot}",
            url,
        ]
        for attempt in range(ATTEMPTS):  # a software-rendered page now and then never ends its virtual time
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=60 + wait_ms / 1e3)
                break
            except subprocess.TimeoutExpired:
                if attempt == ATTEMPTS - 1:
                    raise GGIKError(f"{browser} did not finish a screenshot of {url} in time") from None
        if not shot.is_file():
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise GGIKError(f"{browser} wrote no screenshot of {url} (exit status {done.returncode}):\n{tail}")
        shutil.move(str(shot), out)
    return out
