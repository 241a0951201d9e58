#!/bin/sh
# packaging.sh - what a distribution packager relies on, checked on a
# clean clone (CI runs it after `make check`; it needs root for apt-get):
#
#  1. the build takes Debian's hardening flags (dpkg-buildflags with
#     hardening=+all: CPPFLAGS -D_FORTIFY_SOURCE=2, CFLAGS
#     -fstack-protector-strong, LDFLAGS -Wl,-z,relro -Wl,-z,now) and every
#     program has them, as devscripts' hardening-check reads them back;
#  2. a new commit, then `make`, recompiles only the object that embeds
#     the version, and --version names the new commit (no `make clean`);
#  3. `make install DESTDIR= PREFIX= BINDIR= DATADIR= MANDIR=` puts each
#     file where its variable says (PYTHONDIR: the Python module), the
#     installed hpctrain finds its templates and its module, and `make
#     uninstall` takes every file away again.
set -eu
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
command -v hardening-check >/dev/null 2>&1 ||
	{ apt-get install -y -qq --no-install-recommends devscripts >/dev/null; }

copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
git clone -q . "$copy/src"
cd "$copy/src"
git -c user.name=ci -c user.email=ci@localhost commit -q --allow-empty -m base

echo "== build with dpkg-buildflags (hardening=+all)"
# shellcheck disable=SC2046 # one word per flag variable, as dpkg-buildflags quotes them
eval "set -- $(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=cmdline)"
make -j2 --no-print-directory WERROR=1 "$@" all >"$copy/build.log" 2>&1 ||
	{ tail -40 "$copy/build.log"; exit 1; }
for prog in bin/hpctrain bin/hpctrain-train bin/hpctrain-doctor bin/hpctrain-report bin/hpctrain-stage; do
	# Debian 12's dpkg-buildflags (dpkg 1.21) has no -fcf-protection: its
	# "branch" feature came with dpkg 1.22, so that check is left out.
	hardening-check --nocfprotection "$prog" || { echo "packaging: $prog lacks a hardening flag" >&2; exit 1; }
done

echo "== a new commit: only the version is rebuilt"
git -c user.name=ci -c user.email=ci@localhost commit -q --allow-empty -m next
want=$(git rev-parse --short=12 HEAD)
make -j2 --no-print-directory "$@" all >"$copy/rebuild.log" 2>&1 ||
	{ tail -40 "$copy/rebuild.log"; exit 1; }
compiled=$(grep -c -- ' -c -o ' "$copy/rebuild.log" || true)
got=$(bin/hpctrain --version)
case $got in
*"+g$want") ;;
*) echo "packaging: after a commit, --version says '$got', not +g$want" >&2; exit 1 ;;
esac
[ "$compiled" -eq 1 ] ||
	{ echo "packaging: a new commit recompiled $compiled objects, not 1" >&2; exit 1; }
echo "ok: $got, 1 object recompiled"

# check_install ROOT VAR=VALUE...: install, look, uninstall.  ROOT is
# where the files land (DESTDIR, or the prefix itself).
check_install() {
	root=$1
	shift
	make --no-print-directory "$@" install >/dev/null
	for f in usr/lib/hpctrain/bin/hpctrain usr/lib/hpctrain/bin/hpctrain-train \
		usr/lib/hpctrain/bin/hpctrain-doctor usr/lib/hpctrain/bin/hpctrain-report \
		usr/lib/hpctrain/bin/hpctrain-stage \
		usr/share/man/man1/hpctrain.1 usr/share/man/man5/hpctrain-job.5 \
		usr/share/man/man7/hpctrain-program.7 \
		usr/share/hpctrain/templates/fmnist-cpu.yaml \
		usr/lib/python3/dist-packages/hpctrain/__init__.py; do
		[ -f "$root/$f" ] || { echo "packaging: install left no $root/$f" >&2; exit 1; }
	done
	make --no-print-directory "$@" uninstall >/dev/null
	left=$(find "$root" -type f)
	[ -z "$left" ] || { echo "packaging: uninstall left $left" >&2; exit 1; }
}

echo "== install and uninstall"
# A staged install, as a package is built: every file under DESTDIR.
check_install "$copy/stage" DESTDIR="$copy/stage" PREFIX=/usr BINDIR=/usr/lib/hpctrain/bin \
	DATADIR=/usr/share MANDIR=/usr/share/man
# Installed for real: the binary, away from its templates, finds them
# where DATADIR put them.
root=$copy/root
make --no-print-directory PREFIX="$root/usr" BINDIR="$root/usr/lib/hpctrain/bin" install >/dev/null
HPCTRAIN_TEMPLATE_PATH='' "$root/usr/lib/hpctrain/bin/hpctrain" template list | grep -q '^fmnist-cpu ' ||
	{ echo "packaging: the installed hpctrain does not find its templates in DATADIR" >&2; exit 1; }
# ... and its Python module where PYTHONDIR put it, for its ranks
pydir=$(find "$root/usr/lib" -path '*/dist-packages/hpctrain/__init__.py' | sed 's|/hpctrain/__init__.py$||')
[ -n "$pydir" ] && "$root/usr/lib/hpctrain/bin/hpctrain" launch -- env | grep -qx "PYTHONPATH=$pydir" ||
	{ echo "packaging: launch of the installed hpctrain does not put its Python module ($pydir) on PYTHONPATH" >&2; exit 1; }
make --no-print-directory PREFIX="$root/usr" BINDIR="$root/usr/lib/hpctrain/bin" uninstall >/dev/null
echo "ok: install and uninstall (DESTDIR, BINDIR, DATADIR, MANDIR)"
