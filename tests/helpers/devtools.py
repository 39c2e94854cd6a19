"""A headless Chromium driven over the DevTools protocol (a websocket), for the Neo4j Browser
test: Debian's ``chromium`` package, no Playwright or Selenium. Only what the test needs:
navigate, evaluate JavaScript, type, drop files on the page (as a user drags them from a file
manager) and take screenshots."""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

__all__ = ["Chromium", "DevToolsError", "find_chromium"]


class DevToolsError(RuntimeError):
    """Chromium did not start, or a DevTools command failed."""


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Chromium:
    """One headless Chromium with one page; ``close()`` ends the process."""

    def __init__(self, binary: str, *, width: int = 1400, height: int = 900) -> None:
        self._profile = Path(tempfile.mkdtemp(prefix="graphmem-chromium-"))
        self._process = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--no-sandbox",  # root in CI containers
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._ws: ClientConnection | None = None
        self._next_id = 0
        self._stack = contextlib.ExitStack()
        try:
            self._ws = self._stack.enter_context(
                connect(self._page_socket(), max_size=64 * 1024 * 1024, open_timeout=30)
            )
        except BaseException:
            self.close()
            raise
        self.command("Page.enable")
        self.command("Runtime.enable")

    def _page_socket(self) -> str:
        """The page's websocket, from the port Chromium wrote to DevToolsActivePort."""
        import urllib.request

        active = self._profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise DevToolsError(f"chromium exited with {self._process.returncode}")
            if active.exists() and active.read_text().strip():
                port = active.read_text().split()[0]
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=5) as r:
                        targets = json.load(r)
                except OSError:
                    time.sleep(0.2)
                    continue
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    return str(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.2)
        raise DevToolsError("chromium did not open its DevTools port within 60 s")

    def command(self, method: str, **params: Any) -> dict[str, Any]:
        assert self._ws is not None
        self._next_id += 1
        ident = self._next_id
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv(timeout=120))
            if message.get("id") == ident:
                if "error" in message:
                    raise DevToolsError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.command(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise DevToolsError(f"{expression[:80]!r}: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def navigate(self, url: str) -> None:
        self.command("Page.navigate", url=url)

    def wait_for(self, expression: str, what: str, timeout: float = 60.0) -> Any:
        """Polls a JavaScript expression until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.25)
        raise DevToolsError(f"timed out after {timeout:g} s waiting for {what}")

    def wait(self, ready: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.25)
        raise DevToolsError(f"timed out after {timeout:g} s waiting for {what}")

    def click(self, selector: str) -> None:
        found = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return false; e.click(); return true; })()"
        )
        if not found:
            raise DevToolsError(f"nothing to click at {selector}")

    def type_text(self, text: str) -> None:
        self.command("Input.insertText", text=text)

    def drop_file(self, path: Path, x: int = 800, y: int = 450) -> None:
        """Drags a file from outside the browser and drops it at (x, y)."""
        data = {"items": [], "files": [str(path)], "dragOperationsMask": 1}
        for kind in ("dragEnter", "dragOver", "drop"):
            self.command("Input.dispatchDragEvent", type=kind, x=x, y=y, data=data)

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> None:
        params: dict[str, Any] = {"format": "png"}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        data = self.command("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(OSError):
                self._stack.close()
            self._ws = None
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
