# shellcheck shell=bash
# A real IP path between a ground and a remote site on one machine: two network namespaces
# joined by tether-linkem's packet mode (TUN devices; per IP packet delay with jitter,
# Bernoulli or Gilbert-Elliott loss, a rate limit, outages). Sourced by the deploy/ scripts
# that measure teleoperation across delay and loss. Needs root (namespaces, /dev/net/tun).
#
#   netns_setup NAME      make namespaces NAME-g (ground, 10.201.0.1) and NAME-r (remote,
#                         10.201.0.2); netns_teardown removes them (call it on EXIT)
#   link_up BUILD OUT DELAY_MS LOSS_PCT BURST [RATE] [SCRIPT]
#                         start the emulator: ±10 % uniform jitter, order kept; RATE e.g.
#                         2Mbit/s (empty: none); SCRIPT a packet-mode script file. Its
#                         statistics go to OUT.stats when link_down stops it
#   link_down             stop it (SIGTERM) and wait
#   in_ground CMD...  /  in_remote CMD...   run a command on that side
# The site listens on 10.201.0.2 (REMOTE_IP); its certificate is checked by name, so clients
# pass --server-name localhost (deploy/make-pki.sh's site names).

REMOTE_IP=10.201.0.2
GROUND_IP=10.201.0.1
NETNS_G="" NETNS_R="" LINK_PID=""

netns_need_root() {
  if [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ] || ! command -v ip >/dev/null; then
    echo "needs root, /dev/net/tun and iproute2 (network namespaces)" >&2
    return 1
  fi
}

netns_setup() {
  NETNS_G="$1-g" NETNS_R="$1-r"
  ip netns del "$NETNS_G" 2>/dev/null || true
  ip netns del "$NETNS_R" 2>/dev/null || true
  ip netns add "$NETNS_G"
  ip netns add "$NETNS_R"
  ip -n "$NETNS_G" link set lo up
  ip -n "$NETNS_R" link set lo up
}

netns_teardown() {
  link_down
  [ -n "$NETNS_G" ] && ip netns del "$NETNS_G" 2>/dev/null
  [ -n "$NETNS_R" ] && ip netns del "$NETNS_R" 2>/dev/null
  true
}

link_up() {
  local build=$1 out=$2 delay=$3 loss=$4 burst=$5 rate=${6:-} script=${7:-}
  local jitter args=()
  jitter=$(awk -v d="$delay" 'BEGIN { print d * 0.1 }')
  args=(--ns-a "$NETNS_G" --ns-b "$NETNS_R" --addr-a "$GROUND_IP" --addr-b "$REMOTE_IP"
    --delay "${delay}ms" --jitter "${jitter}ms" --loss "${loss}%" --burst "$burst"
    --ready-file "$out.ready" --stats-file "$out.stats" --seed "${LINK_SEED:-1}")
  [ -n "$rate" ] && args+=(--rate "$rate")
  [ -n "$script" ] && args+=(--script "$script")
  rm -f "$out.ready" "$out.stats"
  "$build/common/tether-linkem" packet "${args[@]}" >"$out.linkem.log" 2>&1 &
  LINK_PID=$!
  for _ in $(seq 100); do [ -e "$out.ready" ] && return 0; sleep 0.05; done
  echo "the packet-level link did not come up:" >&2
  cat "$out.linkem.log" >&2
  return 1
}

link_down() {
  if [ -n "$LINK_PID" ]; then
    kill -TERM "$LINK_PID" 2>/dev/null || true
    wait "$LINK_PID" 2>/dev/null || true
    LINK_PID=""
  fi
}

in_ground() { ip netns exec "$NETNS_G" "$@"; }
in_remote() { ip netns exec "$NETNS_R" "$@"; }
