#!/usr/bin/env bash
# Make sure the system libraries for headless OpenGL through EGL (Mesa's llvmpipe) are present.
# On Debian/Ubuntu: installs them with apt-get when run as root, otherwise names the packages to install.
# Also, optionally, Xvfb and xdotool, with which the tests open python -m gpgpu.show's GLFW window
# on a virtual display and press its keys: installed as root, otherwise those tests are skipped.
# Also, optionally, Chromium and its WebDriver, in which the tests open the page of
# python -m gpgpu.show --html: installed as root (Debian's chromium, chromium-driver), otherwise
# or where they cannot be installed (Ubuntu ships Chromium as a snap) those tests are skipped.
set -euo pipefail
packages="libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri"
window_packages="xvfb xdotool xauth"
browser_packages="chromium chromium-driver"
not_installed() {  # the packages among "$@" that dpkg does not have installed
    local out="" p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out="$out $p"
    done
    echo "$out"
}
if command -v dpkg-query >/dev/null 2>&1; then
    missing=$(not_installed $packages)
    window_missing=$(not_installed $window_packages)
    if [ -n "$window_missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing the window tests' packages:$window_missing"
        export DEBIAN_FRONTEND=noninteractive
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing $window_missing >/dev/null; } \
            || echo "note: could not install$window_missing; the window tests will be skipped" >&2
    fi
    browser_missing=$(not_installed $browser_packages)
    if [ -n "$browser_missing" ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            echo "installing the browser tests' packages:$browser_missing"
            export DEBIAN_FRONTEND=noninteractive
            { apt-get update -qq && apt-get install -y -qq --no-install-recommends $browser_missing >/dev/null; } \
                || echo "note: could not install$browser_missing; the browser tests (tests/test_show_html.py) will be skipped" >&2
        elif ! command -v chromedriver >/dev/null 2>&1; then
            echo "note: the browser tests (tests/test_show_html.py) need$browser_missing" \
                 "(sudo apt-get install$browser_missing); they are skipped without them" >&2
        fi
    fi
    missing=$(not_installed $packages)
    [ -z "$missing" ] && exit 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing system GL libraries:$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null
        exit 0
    fi
    echo "error: headless OpenGL needs these system packages:$missing" >&2
    echo "       install them with:  sudo apt-get install$missing" >&2
    exit 1
fi
# Not Debian/Ubuntu: check for the libraries themselves.
if ldconfig -p 2>/dev/null | grep -q 'libEGL.so.1' && ldconfig -p 2>/dev/null | grep -q 'libGL.so.1'; then
    exit 0
fi
echo "error: headless OpenGL needs libEGL.so.1 and libGL.so.1 with Mesa's EGL driver" >&2
echo "       (Debian/Ubuntu packages: $packages)" >&2
exit 1
