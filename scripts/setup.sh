#!/usr/bin/env bash
# Installs what `make build` / `make test` / `make demo` need, skipping anything
# already present at the right version. Safe to run repeatedly (CI runs it on a
# fresh machine, developers run it on every `make test`).
#
#   - Rust target wasm32-unknown-unknown          (rustup)
#   - wasm-bindgen-cli == the wasm-bindgen crate   (cargo install, version from Cargo.lock)
#   - wasm-pack                                    (cargo install)
#   - chromium + chromium-driver, firefox-esr,     (Debian apt, only if missing)
#     webkit2gtk-driver, xvfb, xauth
#   - geckodriver                                  (cargo install, pinned)
#   - redis-server                                 (Debian apt, only if missing; lapse/redis tests)
#   - node_modules from package-lock.json          (npm ci; done by the Makefile, see `node_modules/.package-lock.json`)
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_PACK_VERSION="${WASM_PACK_VERSION:-0.15.1}"
say() { printf 'setup: %s\n' "$*"; }

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "setup: '$1' not found; install it first ($2)" >&2; exit 1; }
}
need cargo  "https://rustup.rs"
need rustup "https://rustup.rs"
need node   "Node.js >= 20.19"
need npm    "comes with Node.js"

# --- Rust wasm target ---------------------------------------------------------
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "wasm32-unknown-unknown target: present"
else
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# --- wasm-bindgen-cli, pinned to the crate's exact version ---------------------
# Cargo.lock is authoritative; fall back to the `=x.y.z` requirement in Cargo.toml.
wb_version="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock 2>/dev/null || true)"
if [ -z "$wb_version" ]; then
  wb_version="$(sed -n 's/^wasm-bindgen *= *"=\{0,1\}\([0-9.]*\)".*/\1/p' Cargo.toml | head -n1)"
fi
[ -n "$wb_version" ] || { echo "setup: cannot find the wasm-bindgen version in Cargo.lock/Cargo.toml" >&2; exit 1; }
have_wb="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
have_runner="$(wasm-bindgen-test-runner --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have_wb" = "$wb_version" ] && [ "$have_runner" = "$wb_version" ]; then
  say "wasm-bindgen-cli $wb_version: present"
else
  say "installing wasm-bindgen-cli $wb_version (have: ${have_wb:-none})"
  # No --locked: the published lockfile of wasm-bindgen-cli does not build with this toolchain.
  cargo install wasm-bindgen-cli --version "$wb_version" --force
fi

# --- wasm-pack ----------------------------------------------------------------
have_wp="$(wasm-pack --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have_wp" = "$WASM_PACK_VERSION" ]; then
  say "wasm-pack $WASM_PACK_VERSION: present"
else
  say "installing wasm-pack $WASM_PACK_VERSION (have: ${have_wp:-none})"
  cargo install wasm-pack --version "$WASM_PACK_VERSION" --force
fi

# --- Browsers (Debian): Chromium, Firefox ESR, WebKitGTK ----------------------
# Chromium + chromedriver: playwright-core's page tests and wasm-pack --chrome.
# Firefox ESR: the engines test (through geckodriver) and wasm-pack --firefox.
# WebKitWebDriver + MiniBrowser (webkit2gtk-driver) under Xvfb: WebKit has no
# headless mode here. redis-server: the lapse/redis and adapter tests start
# their own on a free port. One apt run for whatever is missing.
apt_missing=()
[ -x /usr/bin/chromium ] || apt_missing+=(chromium)
[ -x /usr/bin/chromedriver ] || apt_missing+=(chromium-driver)
[ -x /usr/bin/firefox-esr ] || apt_missing+=(firefox-esr)
[ -x /usr/bin/WebKitWebDriver ] || apt_missing+=(webkit2gtk-driver)
[ -x /usr/bin/Xvfb ] || apt_missing+=(xvfb)
[ -x /usr/bin/xauth ] || apt_missing+=(xauth)
command -v redis-server >/dev/null 2>&1 || apt_missing+=(redis-server)
if [ "${#apt_missing[@]}" = 0 ]; then
  say "chromium, chromedriver, firefox-esr, WebKitWebDriver, Xvfb, redis-server: present"
else
  say "installing ${apt_missing[*]} (apt)"
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  # Another apt run on the machine (a parallel setup) holds the lock for a while.
  $sudo apt-get -o DPkg::Lock::Timeout=600 update
  $sudo apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${apt_missing[@]}"
  # The redis-server package starts a system service on 6379; nothing here uses it.
  $sudo service redis-server stop >/dev/null 2>&1 || true
fi

# --- geckodriver, pinned (Firefox's WebDriver; a crates.io crate) ---------------
GECKODRIVER_VERSION="${GECKODRIVER_VERSION:-0.36.0}"
have_gd="$(geckodriver --version 2>/dev/null | awk 'NR==1 {print $2}' || true)"
if [ "$have_gd" = "$GECKODRIVER_VERSION" ]; then
  say "geckodriver $GECKODRIVER_VERSION: present"
else
  say "installing geckodriver $GECKODRIVER_VERSION (have: ${have_gd:-none}; ~4 min)"
  cargo install geckodriver --version "$GECKODRIVER_VERSION" --locked --force
fi

say "toolchain ready"
