#!/bin/sh
# Installs the Debian packages the build needs, if any are missing.
# Called by the Makefile before it builds; safe to run by hand. Uses apt-get
# directly as root, through sudo otherwise, and says clearly when neither works.
set -eu

PKGS="libevent-dev liblmdb-dev libxxhash-dev libcmocka-dev zlib1g-dev nettle-dev pkg-config python3"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing missing packages:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "install-deps: missing packages:$missing" >&2
    echo "install-deps: not root and no sudo; install them with: apt-get install$missing" >&2
    exit 1
fi
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >&2; then
    echo "install-deps: apt-get install failed; refreshing the package lists and retrying" >&2
    $SUDO apt-get update -q >&2
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >&2
fi
