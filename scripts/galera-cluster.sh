#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on 127.0.0.1 for the cluster specs (test/*.galera-e2e-spec.ts).
#
#   scripts/galera-cluster.sh start        starts it; prints TEST_GALERA_URLS=... on its last line
#   scripts/galera-cluster.sh stop         stops every node and removes the data
#   scripts/galera-cluster.sh urls         prints the URLs of a running cluster
#
# Needs Debian's mariadb-server and galera-4, and rsync (the state transfer). Runs as root: each
# node runs as the mysql user (--user=mysql) with its data owned by mysql, since the rsync state
# transfer drops to that user. The first node is bootstrapped with --wsrep-new-cluster, the
# others join one at a time. Ports: SQL on GALERA_SQL_PORT (23306) and the two after it, Galera's
# own from GALERA_BASE_PORT (24567) in steps of 10; the data lives under GALERA_DIR.
set -euo pipefail

GALERA_DIR=${GALERA_DIR:-${TMPDIR:-/tmp}/tessera-galera}
SQL_PORT=${GALERA_SQL_PORT:-23306}
BASE_PORT=${GALERA_BASE_PORT:-24567}
PROVIDER=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
USER_NAME=tessera
USER_PASSWORD=tessera
NODES=(1 2 3)

sql_port() { echo $((SQL_PORT + $1 - 1)); }
base_port() { echo $((BASE_PORT + ($1 - 1) * 10)); }
node_dir() { echo "$GALERA_DIR/node$1"; }
socket() { echo "$GALERA_DIR/node$1.sock"; }
pid_file() { echo "$GALERA_DIR/node$1.pid"; }
# The process id as launched (mariadbd writes its pid file only once it has started).
proc_file() { echo "$GALERA_DIR/node$1.proc"; }

# A statement on node N as root, over its socket.
on_node() { mariadb --no-defaults --protocol=socket -S "$(socket "$1")" -uroot -N -B -e "$2"; }
status_of() { on_node "$1" "SHOW GLOBAL STATUS LIKE '$2'" 2>/dev/null | cut -f2; }

cluster_address() {
  local addresses=()
  for n in "${NODES[@]}"; do addresses+=("127.0.0.1:$(base_port "$n")"); done
  local IFS=,
  echo "gcomm://${addresses[*]}"
}

write_config() {
  local n=$1 base
  base=$(base_port "$n")
  cat >"$GALERA_DIR/node$n.cnf" <<EOF
[mariadbd]
datadir=$(node_dir "$n")
port=$(sql_port "$n")
bind-address=127.0.0.1
socket=$(socket "$n")
pid-file=$(pid_file "$n")
log-error=$GALERA_DIR/node$n.err
skip-name-resolve
character-set-server=utf8mb4
collation-server=utf8mb4_unicode_ci
innodb-buffer-pool-size=64M
innodb-log-file-size=48M
innodb-flush-log-at-trx-commit=2
max-connections=300
binlog-format=ROW
default-storage-engine=InnoDB
innodb-autoinc-lock-mode=2
wsrep-on=ON
wsrep-provider=$PROVIDER
wsrep-cluster-name=tessera-ci
wsrep-cluster-address=$(cluster_address)
wsrep-node-name=node$n
wsrep-node-address=127.0.0.1:$base
wsrep-provider-options="base_port=$base;ist.recv_addr=127.0.0.1:$((base + 1));gcache.size=64M"
wsrep-sst-method=rsync
wsrep-sst-receive-address=127.0.0.1:$((base + 3))
wsrep-slave-threads=2
EOF
}

# Node N's server is running: the process its file names is alive and is that node's server
# (a node that died leaves its number behind, which another process, the machine's own database
# server say, may have been given since: that one must never be signalled).
running() {
  local file pid
  file=$(proc_file "$1")
  [[ -f "$file" ]] || return 1
  pid=$(cat "$file")
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "--defaults-file=$GALERA_DIR/node$1.cnf"
}

# Waits until node N says it is synced with a cluster of `size` nodes (or fails after a minute).
wait_synced() {
  local n=$1 size=$2
  for _ in $(seq 1 120); do
    if [[ "$(status_of "$n" wsrep_local_state_comment)" == Synced &&
      "$(status_of "$n" wsrep_cluster_size)" == "$size" &&
      "$(status_of "$n" wsrep_ready)" == ON ]]; then
      return 0
    fi
    running "$n" || break
    sleep 0.5
  done
  echo "node $n did not join a cluster of $size; its log:" >&2
  tail -n 40 "$GALERA_DIR/node$n.err" >&2 || true
  return 1
}

# Starts node N in the background, as the mysql user, with any further options given.
launch() {
  local n=$1
  shift
  mkdir -p "$(node_dir "$n")"
  chown -R mysql:mysql "$GALERA_DIR"
  /usr/sbin/mariadbd --defaults-file="$GALERA_DIR/node$n.cnf" --user=mysql "$@" \
    </dev/null >>"$GALERA_DIR/node$n.out" 2>&1 &
  echo $! >"$(proc_file "$n")"
  disown
}

urls() {
  local list=()
  for n in "${NODES[@]}"; do
    list+=("mariadb://$USER_NAME:$USER_PASSWORD@127.0.0.1:$(sql_port "$n")/tessera_galera")
  done
  local IFS=,
  echo "${list[*]}"
}

start() {
  if [[ -d "$GALERA_DIR" ]]; then
    echo "$GALERA_DIR exists: stop the cluster first (scripts/galera-cluster.sh stop)" >&2
    exit 1
  fi
  local started=$SECONDS
  mkdir -p "$GALERA_DIR"
  chown mysql:mysql "$GALERA_DIR"
  chmod 755 "$GALERA_DIR"
  for n in "${NODES[@]}"; do write_config "$n"; done
  mariadb-install-db --defaults-file="$GALERA_DIR/node1.cnf" --user=mysql \
    --auth-root-authentication-method=socket --skip-test-db >"$GALERA_DIR/install.log" 2>&1 ||
    {
      cat "$GALERA_DIR/install.log" >&2
      exit 1
    }
  launch 1 --wsrep-new-cluster
  wait_synced 1 1
  # One account for TCP clients on 127.0.0.1; Galera copies it to the nodes that join.
  on_node 1 "CREATE USER '$USER_NAME'@'127.0.0.1' IDENTIFIED BY '$USER_PASSWORD';
    GRANT ALL PRIVILEGES ON *.* TO '$USER_NAME'@'127.0.0.1' WITH GRANT OPTION;
    CREATE DATABASE tessera_galera CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
  for n in 2 3; do
    launch "$n"
    wait_synced "$n" "$n"
  done
  echo "three nodes synced in $((SECONDS - started)) s" >&2
  echo "TEST_GALERA_URLS=$(urls)"
}

stop() {
  [[ -d "$GALERA_DIR" ]] || return 0
  for n in "${NODES[@]}"; do
    running "$n" && kill -TERM "$(cat "$(proc_file "$n")")" 2>/dev/null || true
  done
  for n in "${NODES[@]}"; do
    for _ in $(seq 1 60); do
      running "$n" || break
      sleep 0.5
    done
    running "$n" && kill -KILL "$(cat "$(proc_file "$n")")" 2>/dev/null || true
  done
  rm -rf "$GALERA_DIR"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  urls) urls ;;
  *)
    echo "usage: $0 start|stop|urls" >&2
    exit 2
    ;;
esac
