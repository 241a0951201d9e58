#!/bin/sh
# deps.sh - install the Debian packages hpctrain needs, only those missing.
# Quiet when everything is there; names what is missing when not root.
# The Makefile passes the list (DEBIAN_PKGS, gathered from */build.mk).
set -u
PKGS="$*"

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "make deps: missing Debian packages:$missing" >&2
	echo "make deps: run 'sudo make deps' or 'sudo apt-get install$missing'" >&2
	exit 1
fi
echo "make deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null &&
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
	{ echo "make deps: apt-get install failed for:$missing" >&2; exit 1; }
