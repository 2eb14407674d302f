#!/usr/bin/env bash
# Installs the Debian packages the tests talk to, when missing: the tests use the real
# components (a browser, a reverse proxy, an independent FIX engine, strace, systemd-analyze, a PostgreSQL server
# for the private cluster a run starts when SIGNALGATE_TEST_DATABASE_URL is unset), never stand-ins.
set -euo pipefail

# package name, then the file that shows it is installed
wanted=(
  "chromium:/usr/bin/chromium"
  "caddy:/usr/bin/caddy"
  "libquickfix17:/usr/share/doc/libquickfix17"
  "libquickfix-doc:/usr/share/doc/libquickfix-doc/examples/executor"
  "strace:/usr/bin/strace"
  "postgresql:/usr/share/doc/postgresql"
  "systemd:/usr/bin/systemd-analyze"
)

missing=()
for item in "${wanted[@]}"; do
  [ -e "${item#*:}" ] || missing+=("${item%%:*}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "test-packages: installing ${missing[*]} with apt-get" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo -n); else
  echo "test-packages: the tests need the Debian packages ${missing[*]}; install them as root (apt-get install ${missing[*]})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || {
  "${sudo[@]}" apt-get update -q >/dev/null
  "${sudo[@]}" apt-get install -y -q "${missing[@]}" >/dev/null
}
