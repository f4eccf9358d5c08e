#!/usr/bin/env bash
# Runs a command against a real Redis Cluster of three masters on loopback, then stops it:
#
#   .ci/redis-cluster.sh npm test -- test/redisCluster.test.ts
#
# The command runs with REDIS_CLUSTER_NODES naming the three nodes and WRITE_QUEUE_SHARDS=3
# (unless already set), and its exit status is the script's. The nodes keep nothing on disk
# (a private temporary directory, removed afterwards). Ports: REDIS_CLUSTER_PORTS (three,
# comma-separated), else 7101,7102,7103. `cluster-require-full-coverage no` keeps the slots of the
# live masters served when one master is lost, as the service expects (docs/scaling.md).
set -uo pipefail

if [ "$#" = 0 ]; then
  echo "usage: $0 command [args...]" >&2
  exit 2
fi

IFS=, read -r -a ports <<<"${REDIS_CLUSTER_PORTS:-7101,7102,7103}"
dir="$(mktemp -d)"

stop() {
  for port in "${ports[@]}"; do
    redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
}
trap stop EXIT

for port in "${ports[@]}"; do
  if redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; then
    echo "redis-cluster: port $port is taken; set REDIS_CLUSTER_PORTS to three free ports" >&2
    trap - EXIT
    rm -rf "$dir"
    exit 2
  fi
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" \
    --cluster-enabled yes --cluster-config-file "nodes-$port.conf" \
    --cluster-node-timeout 2000 --cluster-require-full-coverage no \
    --save "" --appendonly no --daemonize yes --logfile "$dir/redis-$port.log" ||
    exit 1
done

for port in "${ports[@]}"; do
  for _ in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
done

nodes=()
for port in "${ports[@]}"; do nodes+=("127.0.0.1:$port"); done
redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >/dev/null || exit 1

# Every node must agree that all slots are served before the command starts.
for port in "${ports[@]}"; do
  for _ in $(seq 1 100); do
    redis-cli -h 127.0.0.1 -p "$port" cluster info | grep -q 'cluster_state:ok' && break
    sleep 0.1
  done
done

REDIS_CLUSTER_NODES="$(
  IFS=,
  echo "${nodes[*]}"
)"
export REDIS_CLUSTER_NODES
export WRITE_QUEUE_SHARDS="${WRITE_QUEUE_SHARDS:-3}"
echo "redis-cluster: 3 masters at $REDIS_CLUSTER_NODES, WRITE_QUEUE_SHARDS=$WRITE_QUEUE_SHARDS"
"$@"
