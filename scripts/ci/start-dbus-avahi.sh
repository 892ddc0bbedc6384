#!/usr/bin/env bash
# Starts a system D-Bus and avahi-daemon if they are not running; ippeveprinter needs both.
set -euo pipefail
mkdir -p /run/dbus
if [ ! -S /run/dbus/system_bus_socket ] || ! pgrep -x dbus-daemon >/dev/null; then
  rm -f /run/dbus/pid
  dbus-daemon --system --fork
fi
pgrep -x avahi-daemon >/dev/null || avahi-daemon -D --no-drop-root
