"""What a page left in Chromium's console that a test counts as a problem (shared by the page
tests): errors and warnings, less the GPU driver's performance hints.

Chromium passes on the driver's KHR_debug messages; on a machine with a GPU the driver's
performance hints ("GL Driver Message (OpenGL, Performance, ...): GPU stall due to ReadPixels")
arrive as warnings. They tell where the driver waited, not that the page did anything wrong:
the live page reads every pass's texture back on purpose, to show and check its values."""
from __future__ import annotations

DRIVER_HINT = "GL Driver Message (OpenGL, Performance,"


def problems(driver) -> list:
    """The console's errors and warnings since it was last read, less the driver's performance
    hints (reading the log empties it)."""
    return [e for e in driver.get_log("browser")
            if e["level"] in ("SEVERE", "WARNING") and DRIVER_HINT not in e["message"]]
