#!/usr/bin/env bash
# Stops the services the test setup starts (docs/architecture.md, "Tests and CI"):
#
#   bash scripts/ci/stop-services.sh all                # boxhub's Mosquitto, avahi-daemon, dbus
#   bash scripts/ci/stop-services.sh mosquitto          # any of: mosquitto avahi dbus
#
# `.ci/run` calls it when it ends for what that run started itself (BOXHUB_CI_KEEP_SERVICES=1
# keeps them running). Mosquitto means boxhub's own broker (the pid file start-mosquitto.sh
# keeps in BOXHUB_MOSQUITTO_DIR), never the system one on 1883. PostgreSQL is left alone: it is
# the machine's, not the tests'.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 all | mosquitto avahi dbus..." >&2; exit 2; }
what=("$@")
[ "$1" = all ] && what=(mosquitto avahi dbus)
for s in "${what[@]}"; do
  case "$s" in
    mosquitto)
      pidfile="${BOXHUB_MOSQUITTO_DIR:-/tmp/boxhub-mosquitto}/mosquitto.pid"
      if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        kill "$(cat "$pidfile")" && echo "stop-services: stopped boxhub's Mosquitto (pid $(cat "$pidfile"))" >&2
        rm -f "$pidfile"
      fi ;;
    avahi)
      if pgrep -x avahi-daemon >/dev/null; then avahi-daemon -k 2>/dev/null || true; echo "stop-services: stopped avahi-daemon" >&2; fi ;;
    dbus)
      if [ -f /run/dbus/pid ] && kill -0 "$(cat /run/dbus/pid)" 2>/dev/null; then
        kill "$(cat /run/dbus/pid)" && echo "stop-services: stopped the system D-Bus" >&2
        rm -f /run/dbus/pid
      fi ;;
    *) echo "stop-services: unknown service '$s' (mosquitto, avahi, dbus, all)" >&2; exit 2 ;;
  esac
done
