#!/usr/bin/env bash
# Installs the Debian packages the test suites run for real, and only those that are missing: `make debian-packages`
# (a prerequisite of every target that needs them) and .ci/run both call this.
#
#   debian-packages.sh PACKAGE=PROBE ...
#
# PROBE proves PACKAGE is installed, found the way the suites find it: a command on PATH; `pg_ctl`, which the suites
# also look for in $PG_BINDIR and /usr/lib/postgresql/*/bin; or (starting with /) a path glob. Root installs with
# apt-get; anyone else through sudo when it is present.
#
# What it installs stays out of the way: it says what it will install first, never upgrades a package that is
# present, and leaves the services the new packages bring (PostgreSQL, HAProxy, containerd) stopped and disabled,
# because the suites start their own.
set -euo pipefail

found() {
	local probe=$1
	case $probe in
	/*) compgen -G "$probe" >/dev/null ;;
	pg_ctl) [ -n "${PG_BINDIR:-}" ] && [ -x "$PG_BINDIR/pg_ctl" ] || compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null ||
		command -v pg_ctl >/dev/null ;;
	*) command -v "$probe" >/dev/null ;;
	esac
}

missing=()
for spec in "$@"; do
	package=${spec%%=*} probe=${spec#*=}
	found "$probe" || missing+=("$package")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
	echo "debian-packages: ${missing[*]} missing and there is no apt-get here: install them with your package manager" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null; then
		echo "debian-packages: ${missing[*]} missing: run as root: apt-get update && apt-get install --no-upgrade ${missing[*]}" >&2
		exit 1
	fi
	sudo=(sudo)
fi
echo "debian-packages: installing ${missing[*]} (and their dependencies; nothing present is upgraded; their services are left stopped and disabled)"

# policy-rc.d is Debian's switch that keeps maintainer scripts from starting services; it is put in place only if
# the machine has none, and removed again however this script ends.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	trap '"${sudo[@]}" rm -f "$policy"' EXIT
	printf '#!/bin/sh\n# debian-packages.sh: no service starts while it installs\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
	"${sudo[@]}" chmod 755 "$policy"
fi
installed_before=$(dpkg-query -W -f '${Package}\n' | sort)
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --no-upgrade "${missing[@]}"

# Disabled too, so that a boot does not start them: the services of every package installed just now (the named ones
# and their dependencies, postgresql-common's postgresql.service among them), whatever the init system.
for package in $(comm -13 <(echo "$installed_before") <(dpkg-query -W -f '${Package}\n' | sort)); do
	for unit in $(dpkg -L "$package" | sed -n 's#^\(/usr\)\{0,1\}/lib/systemd/system/\([^/@]*\)\.service$#\2#p; s#^/etc/init.d/\([^/]*\)$#\1#p' | sort -u); do
		"${sudo[@]}" service "$unit" stop >/dev/null 2>&1 || true
		command -v systemctl >/dev/null && "${sudo[@]}" systemctl disable "$unit.service" >/dev/null 2>&1 || true
		[ -x "/etc/init.d/$unit" ] && "${sudo[@]}" update-rc.d "$unit" disable >/dev/null 2>&1 || true
		echo "debian-packages: service $unit ($package) left stopped and disabled"
	done
done
