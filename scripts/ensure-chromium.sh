#!/usr/bin/env bash
# The first step of `npm test`: the browser tests (SDKs in a page, the web app) drive Debian's
# Chromium through playwright-core, which downloads no browser. Installed here when missing, from
# Debian, as the cluster part installs its servers, so that `npm ci && npm test` runs on a fresh machine.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "Debian's chromium is missing and this is not root: install it with apt-get install -y chromium" >&2
  exit 1
fi
started=$(date +%s)
echo "Installing Debian's chromium for the browser tests…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
echo "chromium installed in $(( $(date +%s) - started )) s"
