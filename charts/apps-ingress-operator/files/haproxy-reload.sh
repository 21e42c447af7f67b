# Runs HAProxy in master-worker mode and reloads it (SIGUSR2 to the master) when $HAPROXY_CFG changes and
# `haproxy -c` accepts it. HAProxy runs on a copy in $STATE_DIR, so that a rejected file never reaches a reload: the
# running configuration stays, and $STATE_DIR/rejected holds the refused file's config id and HAProxy's message,
# which the configuration's status frontend serves (the reload that follows makes it re-read the file). POSIX sh.
set -u
state=${STATE_DIR:-/tmp/haproxy}
mkdir -p "$state"
run="$state/haproxy.cfg"
echo none > "$state/rejected"
cp "$HAPROXY_CFG" "$run"
haproxy -W -db -f "$run" &
master=$!
trap 'kill -TERM "$master"; wait "$master"; exit 0' TERM INT
last=$(cksum < "$HAPROXY_CFG")
while kill -0 "$master" 2>/dev/null; do
  sleep "${RELOAD_INTERVAL:-2}" &
  wait $!
  now=$(cksum < "$HAPROXY_CFG") || continue
  [ "$now" = "$last" ] && continue
  last=$now
  cp "$HAPROXY_CFG" "$state/candidate.cfg" || continue
  if out=$(haproxy -c -f "$state/candidate.cfg" 2>&1); then
    echo "haproxy-reload: configuration changed; reloading"
    echo none > "$state/rejected"
    mv "$state/candidate.cfg" "$run"
  else
    echo "haproxy-reload: the new configuration is rejected; keeping the running one: $out" >&2
    { sed -n "1s/^# config-id: //p" "$state/candidate.cfg"; echo "$out" | grep ALERT; } > "$state/rejected"
  fi
  kill -USR2 "$master"
done
wait "$master"
