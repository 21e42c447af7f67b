#!/usr/bin/env bash
# Installs the Debian packages the test suites run for real, and only those that are missing: `make debian-packages`
# (a prerequisite of every target that needs them) and .ci/run both call this.
#
#   debian-packages.sh PACKAGE=PROBE ...
#
# PROBE proves PACKAGE is installed: a command found on PATH, or (starting with /) a path glob that matches once the
# package is in. Root installs with apt-get; anyone else through sudo when it is present.
set -euo pipefail

missing=()
for spec in "$@"; do
	package=${spec%%=*} probe=${spec#*=}
	if [[ $probe == /* ]]; then
		compgen -G "$probe" >/dev/null && continue
	else
		command -v "$probe" >/dev/null && continue
	fi
	missing+=("$package")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

install="apt-get install -y --no-install-recommends ${missing[*]}"
if ! command -v apt-get >/dev/null; then
	echo "debian-packages: ${missing[*]} missing and there is no apt-get here: install them with your package manager" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null; then
		echo "debian-packages: ${missing[*]} missing: run as root: apt-get update && $install" >&2
		exit 1
	fi
	sudo=(sudo)
fi
echo "debian-packages: installing ${missing[*]}"
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
