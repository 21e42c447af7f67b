# Runs HAProxy in master-worker mode on the configuration directory $CONFIG_DIR (the main haproxy.cfg, each shard's
# .cfg and maps) and reloads it (SIGUSR2 to the master) when the directory changes and `haproxy -c` accepts it.
# HAProxy runs on a copy in $STATE_DIR/run, so that a rejected set never reaches a reload: the running configuration
# stays, and $STATE_DIR/rejected holds the refused files' config ids and HAProxy's message, which the status
# frontend serves (the reload that follows makes it re-read the file). POSIX sh.
set -u
state=${STATE_DIR:-/tmp/haproxy}
src=${CONFIG_DIR:?CONFIG_DIR names the configuration directory}
run="$state/run"
candidate="$state/candidate"
mkdir -p "$state"
echo none > "$state/rejected"

# from is where the current set of files is: the snapshot "..data" names (as the sidecar and the kubelet write it),
# resolved once, so that a set written meanwhile is not half in a copy.
from() {
  if data=$(readlink "$src/..data" 2>/dev/null); then echo "$src/$data"; else echo "$src"; fi
}
# copy_to makes $2 a copy of the files in $1; it fails if $1 went meanwhile (a newer set replaced it).
copy_to() {
  rm -rf "$2" && mkdir -p "$2" && cp "$1"/* "$2"/
}
sum() {
  cat "$1"/* | cksum
}

dir=$(from)
until copy_to "$dir" "$run"; do sleep 1; dir=$(from); done
last=$(sum "$run")
haproxy -W -db -C "$run" -f "$run" &
master=$!
trap 'kill -TERM "$master"; wait "$master"; exit 0' TERM INT
while kill -0 "$master" 2>/dev/null; do
  sleep "${RELOAD_INTERVAL:-2}" &
  wait $!
  copy_to "$(from)" "$candidate" 2>/dev/null || continue
  now=$(sum "$candidate") || continue
  [ "$now" = "$last" ] && continue
  last=$now
  if out=$(haproxy -c -C "$candidate" -f "$candidate" 2>&1); then
    echo "haproxy-reload: configuration changed; reloading"
    echo none > "$state/rejected"
    copy_to "$candidate" "$run" || continue
  else
    echo "haproxy-reload: the new configuration is rejected; keeping the running one: $out" >&2
    {
      for f in "$candidate"/*.cfg; do sed -n "1s/^# config-id: //p" "$f"; done | tr '\n' ' '
      echo
      echo "$out" | grep ALERT
    } > "$state/rejected"
  fi
  kill -USR2 "$master"
done
wait "$master"
