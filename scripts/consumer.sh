#!/usr/bin/env bash
# Makes a fresh consumer project that installs the packed tarball the way a
# user would (`npm install ./lapse-x.y.z.tgz`), so every JS/types/runtime test
# imports "lapse" by package name through its package.json `exports`.
#   bash scripts/consumer.sh build/lapse-0.1.0.tgz build/consumer
set -euo pipefail
tarball="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
dir="$2"
rm -rf "$dir"
mkdir -p "$dir"
cat >"$dir/package.json" <<'JSON'
{
  "name": "lapse-consumer",
  "private": true,
  "version": "0.0.0",
  "type": "module",
  "description": "Throwaway project that installs the packed lapse tarball for the tests"
}
JSON
cd "$dir"
npm install --no-audit --no-fund --no-save --loglevel=error "$tarball"
test -f node_modules/lapse/package.json
echo "consumer: installed $(node -p 'require("./node_modules/lapse/package.json").version') from $(basename "$tarball") into $dir"
