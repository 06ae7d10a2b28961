#!/usr/bin/env bash
# Install Debian's chromium for the HTML report's browser test, when it is missing.
set -euo pipefail
log() { echo "install-chromium: $*" >&2; }
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
log "installing chromium with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 && apt-get install -y -qq chromium >&2
command -v chromium >/dev/null 2>&1 || { log "chromium is still missing"; exit 1; }
