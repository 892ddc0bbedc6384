#!/usr/bin/env bash
# Starts boxhub's own Mosquitto for tests and CI, next to (never instead of) the system one on
# 1883, and prints the shell `export` lines the tests need:
#
#   eval "$(bash scripts/ci/start-mosquitto.sh)"      # .ci/run
#
# Per-device authentication and ACLs are enforced by Mosquitto's dynamic security plugin
# (docs/box-protocol-broker.md): one dynsec client per box (username = client id = uuid) with
# a role of its own (`boxhub-box-{uuid}`) allowing only box/{uuid}/..., both created by the
# server over $CONTROL/dynamic-security when a box is registered; the server logs in as
# `boxhub-server` (box/#, $share/+/box/# and the dynsec control topics).
# `boxhub-admin` is the operator's login for mosquitto_ctrl.
#
# Idempotent: a broker of ours that is running and answers its admin login is reused (on the
# port it has). Otherwise the port is BOXHUB_MOSQUITTO_PORT when set, else one Mosquitto itself
# manages to bind: random ports below Linux's ephemeral range are tried until one binds, so no
# port is probed, released and bound again (another process could take it in between), and a
# second copy of this script (another checkout, another CI job) gets a port of its own. The
# port is printed (BOXHUB_MOSQUITTO_PORT, and in the URLs). Messages go to stderr; stdout
# carries only shell code, and on failure that code is `false`, so `eval` under `set -e` stops.
#
# Environment: BOXHUB_MOSQUITTO_PORT (any free one), BOXHUB_MOSQUITTO_DIR (/tmp/boxhub-mosquitto).
set -euo pipefail

PORT="${BOXHUB_MOSQUITTO_PORT:-}"
HOST=127.0.0.1
DIR="${BOXHUB_MOSQUITTO_DIR:-/tmp/boxhub-mosquitto}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TEMPLATE="$HERE/mosquitto/mosquitto.conf.in"
CONF="$DIR/mosquitto.conf"
DYNSEC="$DIR/dynamic-security.json"
CREDS="$DIR/credentials"   # ADMIN_PASSWORD=..., SERVER_PASSWORD=... (mode 600)
PIDFILE="$DIR/mosquitto.pid"
LOG="$DIR/mosquitto.log"
ADMIN_USER=boxhub-admin
SERVER_USER=boxhub-server

say() { echo "start-mosquitto: $*" >&2; }
fail() { say "ERROR: $*"; [ -f "$LOG" ] && tail -n 20 "$LOG" >&2; echo false; exit 1; }
trap 'fail "unexpected failure at line $LINENO"' ERR

command -v mosquitto_ctrl >/dev/null || fail "mosquitto_ctrl is not installed (Debian: package mosquitto)"
MOSQUITTO="$(command -v mosquitto || true)"   # /usr/sbin is not on every user's PATH
[ -n "$MOSQUITTO" ] || MOSQUITTO=/usr/sbin/mosquitto
[ -x "$MOSQUITTO" ] || fail "mosquitto is not installed (apt-get install mosquitto)"
PLUGIN=""
for p in /usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so /usr/lib/*/mosquitto_dynamic_security.so \
         /usr/lib/mosquitto_dynamic_security.so /usr/local/lib/mosquitto_dynamic_security.so; do
  if [ -f "$p" ]; then PLUGIN="$p"; break; fi
done
[ -n "$PLUGIN" ] || fail "mosquitto_dynamic_security.so not found (Mosquitto 2.0 or later ships it)"

ctrl() { # mosquitto_ctrl as the operator. It exits 0 even when the broker answers with an
  # error (and warns about plain TCP on stderr), so the answer is checked here.
  local out
  out="$(timeout 10 mosquitto_ctrl -h "$HOST" -p "$PORT" -u "$ADMIN_USER" -P "$ADMIN_PASSWORD" dynsec "$@" 2>&1)" || return 1
  # "Error: …" and "Connection error: Connection Refused: not authorised." both mean no.
  if grep -qi 'error' <<<"$out"; then grep -i 'error' <<<"$out" >&2; return 1; fi
  printf '%s\n' "$out" | grep -v -e '^Warning: You are running mosquitto_ctrl without encryption' \
    -e '^This means all of the configuration changes' -e '^$' || true
}

our_pid() { # pid of the broker this script started, if it still runs
  [ -f "$PIDFILE" ] || return 1
  local pid; pid="$(cat "$PIDFILE" 2>/dev/null || true)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -qa "$CONF" "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

port_in_use() { (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; }

# The port a running broker of ours listens on: recorded when it started (or, for one started
# by an older copy of this script, its configuration's listener line).
running_port() {
  if [ -f "$DIR/port" ]; then cat "$DIR/port"; return; fi
  awk '$1 == "listener" { print $2; exit }' "$CONF" 2>/dev/null
}

healthy() { ctrl getClient "$SERVER_USER" >/dev/null 2>&1; }

print_env() {
  echo "export BOXHUB_MOSQUITTO_PORT='$PORT'"
  echo "export BOXHUB_TEST_MQTT_URL='mqtt://$SERVER_USER:$SERVER_PASSWORD@$HOST:$PORT'"
  echo "export BOXHUB_MOSQUITTO_ADMIN_URL='mqtt://$ADMIN_USER:$ADMIN_PASSWORD@$HOST:$PORT'"
  echo "export BOXHUB_MOSQUITTO_DIR='$DIR'"
}

# The roles and the server's login, through the running broker with the same mosquitto_ctrl
# commands an operator uses. Bump SETUP_VERSION when this changes: a reused broker is updated.
SETUP_VERSION=2
setup_dynsec() {
  # The server: every box topic, its shared subscriptions (Mosquitto 2.0 checks the filter
  # with its $share/{group}/ prefix) and the dynsec control topics, to provision boxes. Each box
  # gets its own role when it is provisioned (ExternalBroker.provisionDevice): dynsec in 2.0
  # does not substitute %c/%u in ACL topics.
  ctrl deleteRole boxhub-server >/dev/null 2>&1 || true   # an older setup: start the role afresh
  ctrl createRole boxhub-server >/dev/null
  ctrl addRoleACL boxhub-server publishClientSend 'box/#' allow >/dev/null
  ctrl addRoleACL boxhub-server subscribePattern 'box/#' allow >/dev/null
  # Any share group: each deployment (and each test server) uses its own (BOXHUB_MQTT_SHARE_GROUP).
  ctrl addRoleACL boxhub-server subscribePattern '$share/+/box/#' allow >/dev/null
  ctrl addRoleACL boxhub-server publishClientSend '$CONTROL/dynamic-security/#' allow >/dev/null
  ctrl addRoleACL boxhub-server publishClientReceive '$CONTROL/dynamic-security/#' allow >/dev/null
  ctrl addRoleACL boxhub-server subscribePattern '$CONTROL/dynamic-security/#' allow >/dev/null
  ctrl getClient "$SERVER_USER" >/dev/null 2>&1 || ctrl createClient "$SERVER_USER" -p "$SERVER_PASSWORD" >/dev/null
  ctrl addClientRole "$SERVER_USER" boxhub-server >/dev/null
  echo "$SETUP_VERSION" > "$DIR/.configured"
}
configured() { [ "$(cat "$DIR/.configured" 2>/dev/null || true)" = "$SETUP_VERSION" ]; }

mkdir -p "$DIR"
chmod 755 "$DIR"
if [ ! -f "$CREDS" ]; then
  umask 077
  {
    echo "ADMIN_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
    echo "SERVER_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
  } > "$CREDS.tmp"
  mv "$CREDS.tmp" "$CREDS"
  umask 022
  rm -f "$DYNSEC" "$DIR/.configured"   # new passwords: start the dynsec configuration afresh
fi
# shellcheck disable=SC1090
. "$CREDS"

if pid="$(our_pid)"; then
  PORT="$(running_port)"
  if healthy; then
    configured || setup_dynsec
    say "reusing Mosquitto (pid $pid) on $HOST:$PORT"
    print_env
    exit 0
  fi
  say "Mosquitto (pid $pid) does not answer its admin login; restarting it"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
fi
# Fresh dynsec file with the operator's login; the roles are added through the running broker
# below, with the same mosquitto_ctrl commands an operator uses (docs/box-protocol-broker.md).
if [ ! -f "$DYNSEC" ]; then
  mosquitto_ctrl dynsec init "$DYNSEC" "$ADMIN_USER" "$ADMIN_PASSWORD" >/dev/null
  rm -f "$DIR/.configured"
fi

# Starts Mosquitto on $PORT: 0 when it answers its admin login, 2 when the port was taken,
# 1 on any other failure. With -d it forks before binding, so the log says which.
start_on_port() {
  sed -e "s|@PORT@|$PORT|g" -e "s|@HOST@|$HOST|g" -e "s|@DIR@|$DIR|g" -e "s|@PLUGIN@|$PLUGIN|g" "$TEMPLATE" > "$CONF"
  rm -f "$PIDFILE"
  : > "$LOG"
  # Run as root, Mosquitto drops to the `mosquitto` user, which must be able to save the dynsec file.
  if [ "$(id -u)" = 0 ] && id mosquitto >/dev/null 2>&1; then
    chown mosquitto: "$DIR" "$DYNSEC" "$LOG"
  fi
  chmod 600 "$DYNSEC"
  "$MOSQUITTO" -c "$CONF" -d || return 1
  for _ in $(seq 100); do
    # Ours must be the one answering: another broker may hold the port we could not bind.
    if our_pid >/dev/null && ctrl getDefaultACLAccess >/dev/null 2>&1; then return 0; fi
    if grep -q 'Address already in use' "$LOG" 2>/dev/null; then return 2; fi
    sleep 0.1
  done
  return 1
}

if [ -n "$PORT" ]; then
  port_in_use && fail "$HOST:$PORT (BOXHUB_MOSQUITTO_PORT) is taken by a process this script did not start"
  start_on_port || fail "Mosquitto did not come up on $HOST:$PORT (log: $LOG)"
else
  started=0
  for _ in $(seq 10); do
    PORT=$((20000 + RANDOM % 12000))   # below the ephemeral range (32768-60999)
    port_in_use && continue
    rc=0; start_on_port || rc=$?
    if [ "$rc" = 0 ]; then started=1; break; fi
    [ "$rc" = 2 ] || fail "Mosquitto did not come up on $HOST:$PORT (log: $LOG)"
    say "port $PORT was taken; trying another"
  done
  [ "$started" = 1 ] || fail "no free port found for Mosquitto after 10 tries"
fi
echo "$PORT" > "$DIR/port"

configured || setup_dynsec
healthy || fail "the server login $SERVER_USER is missing from $DYNSEC"

say "Mosquitto $("$MOSQUITTO" -h 2>/dev/null | head -1 | awk '{print $3}') (pid $(cat "$PIDFILE")) on $HOST:$PORT, config $DIR"
print_env
