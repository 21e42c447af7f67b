# Runs HAProxy in master-worker mode on $HAPROXY_CFG and reloads it (SIGUSR2 to the master) when the file changes
# and `haproxy -c` accepts it. A rejected file is logged and the running configuration stays. POSIX sh.
set -u
haproxy -W -db -f "$HAPROXY_CFG" &
master=$!
trap 'kill -TERM "$master"; wait "$master"; exit 0' TERM INT
last=$(cksum < "$HAPROXY_CFG")
while kill -0 "$master" 2>/dev/null; do
  sleep "${RELOAD_INTERVAL:-2}" &
  wait $!
  now=$(cksum < "$HAPROXY_CFG") || continue
  [ "$now" = "$last" ] && continue
  if haproxy -c -q -f "$HAPROXY_CFG"; then
    echo "haproxy-reload: configuration changed; reloading"
    kill -USR2 "$master"
  else
    echo "haproxy-reload: the new configuration is rejected; keeping the running one" >&2
  fi
  last=$now
done
wait "$master"
