#!/usr/bin/env bash
# The Debian package as an administrator meets it: builds tether_<version>_amd64.deb from a
# build tree (cpack), installs it with dpkg, checks tether-remote@.service with
# systemd-analyze verify (where systemd is present), runs the installed remote site with the
# unit's own ExecStart line, as the unit's user, and drives it over mutual TLS with the
# installed console and credentials from the installed tether-make-pki; then removes and
# purges the package. Needs root (dpkg). Usage: deploy/package-test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/ci}
site=ci-package
work=$(mktemp -d)
remote_pid=""
cleanup() {
  if [ -n "$remote_pid" ]; then
    kill -KILL "$remote_pid" 2>/dev/null || true
    wait "$remote_pid" 2>/dev/null || true
  fi
  dpkg --purge tether >/dev/null 2>&1 || true
  rm -f "/etc/tether/$site.conf"
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "package-test: FAIL: $*"; [ -f "$work/remote.log" ] && cat "$work/remote.log"; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root to install the package (dpkg)"

(cd "$build" && cpack -G DEB >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls -t "$build"/tether_*_amd64.deb | head -1)
echo "package-test: built $(basename "$deb") ($(du -h "$deb" | cut -f1))"
dpkg-deb --contents "$deb" | awk '{ print $6 }' >"$work/contents"
for path in ./usr/bin/tether-remote ./usr/bin/tether ./usr/bin/tether-ground ./usr/bin/tether-make-pki \
            ./usr/share/tether/arms/iiwa7.urdf ./usr/share/tether/tasks/door_force.textproto \
            ./usr/share/tether/scripts/rotate_door.hcscript \
            ./usr/share/tether/commands/open-door.textproto \
            ./usr/lib/systemd/system/tether-remote@.service \
            ./usr/share/man/man1/tether.1 ./usr/share/man/man1/tether-remote.1 \
            ./usr/share/man/man1/tether-make-pki.1 ./usr/share/doc/tether/docs/task-reference.md; do
  grep -qx "$path" "$work/contents" || fail "$path is not in the package"
done
dpkg -i "$deb" >/dev/null || fail "dpkg -i"
getent passwd tether >/dev/null || fail "the package did not create the user tether"

unit=/usr/lib/systemd/system/tether-remote@.service
if command -v systemd-analyze >/dev/null; then
  # An instance name makes the template verifiable; the unit's binaries must exist.
  cp "$unit" "$work/tether-remote@$site.service"
  systemd-analyze verify "$work/tether-remote@$site.service" >"$work/verify.log" 2>&1 ||
    { cat "$work/verify.log"; fail "systemd-analyze verify"; }
  ! grep -qiE "error|unknown|not executable" "$work/verify.log" ||
    { cat "$work/verify.log"; fail "systemd-analyze verify"; }
  echo "package-test: systemd-analyze verify: clean"
else
  echo "package-test: systemd-analyze not available; unit not verified"
fi

# Credentials with the installed tool; the site's configuration where the unit reads it.
tether-make-pki init "$work/pki" --site "$site" --person packager=operator >/dev/null
# The unit's user reads the site's files (and only those: not the CA's key, not people's).
chmod a+x "$work/pki" "$work/pki/sites"
chmod a+r "$work/pki/ca.pem" "$work/pki/crl.pem" "$work/pki/roles.txt" "$work/pki/sites/$site.pem"
chgrp tether "$work/pki/sites/$site.key" && chmod 0640 "$work/pki/sites/$site.key"
cat >"/etc/tether/$site.conf" <<CONF
serve = "127.0.0.1:0"
port-file = "$work/port"
scene = "door"
ca = "$work/pki/ca.pem"
cert = "$work/pki/sites/$site.pem"
key = "$work/pki/sites/$site.key"
crl = "$work/pki/crl.pem"
roles = "$work/pki/roles.txt"
CONF
chmod a+rx "$work"
install -d -o tether -g tether -m 0750 "/var/lib/tether/$site"
install -d -o tether -g tether -m 0700 "$work/run"
touch "$work/port" && chown tether "$work/port"

# The unit's ExecStart, as the unit runs it.
exec_start=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s/%i/$site/g")
echo "package-test: $exec_start"
# shellcheck disable=SC2086  # the unit's line, split as systemd splits it
# setpriv execs the program itself (runuser would sit between and answer SIGTERM).
setpriv --reuid=tether --regid=tether --init-groups -- env TMPDIR="$work/run" $exec_start \
  >"$work/remote.log" 2>&1 &
remote_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || fail "the installed tether-remote did not start"
addr=127.0.0.1:$(cat "$work/port")
console() { /usr/bin/tether --remote "$addr" --config "$work/pki/people/packager.conf" "$@"; }
console status >/dev/null || fail "tether status"
console upload /usr/share/tether/tasks/door_force.textproto --scene door >/dev/null ||
  fail "tether upload"
console start door_force --wait-seconds 1 || fail "tether start"
console stop >/dev/null || fail "tether stop"
# A task command from the installed commands folder, expanded and sent like any set.
console do open-door --mode spring --angle 30 --upload --no-preview >/dev/null ||
  fail "tether do open-door (installed commands)"
trail=$(console audit) || fail "tether audit"
grep -q "packager (operator)  StartTask  door_force@1  OK" <<<"$trail" || fail "tether audit: $trail"
[ -s "/var/lib/tether/$site/door_force.textproto" ] || fail "the task was not stored in the state directory"
kill -TERM "$remote_pid"
wait "$remote_pid" || fail "the installed tether-remote did not end cleanly on SIGTERM"
remote_pid=""
dpkg -r tether >/dev/null || fail "dpkg -r"
[ ! -e /usr/bin/tether-remote ] || fail "dpkg -r left /usr/bin/tether-remote"
echo "PASS package"
