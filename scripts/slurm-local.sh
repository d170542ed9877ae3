#!/bin/sh
# A single-node Slurm on this machine (munge, slurmctld and slurmd on localhost), then the Slurm recipe
# of docs/scaling.md run on it as written: its `shards.sh` and `merge.sh` are taken from the doc, with
# only the paths, the endpoint and the array size replaced, and submitted as the doc says. The model is
# a zero-latency scripted endpoint on loopback (scripts/mock_llm.py); the data is the shipped sample.
#
# Needs root and Debian's packages (`apt-get install slurm-wlm munge`); not part of `cargo test`.
#   sudo scripts/slurm-local.sh          # set up (once) and run the recipe; exit 0 when it passed
#   sudo scripts/slurm-local.sh setup    # only start the local Slurm
#   sudo scripts/slurm-local.sh stop     # stop the daemons this script started
# SUM2ACT (the binary, default target/debug/sum2act) and WORK (default /tmp/sum2act-slurm) can be set.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SUM2ACT=${SUM2ACT:-$ROOT/target/debug/sum2act}
WORK=${WORK:-/tmp/sum2act-slurm}
HOST=$(hostname -s)
CONF=/etc/slurm/slurm.conf

say() { printf '%s\n' "slurm-local: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# munge: the key exists once the package is installed; the daemon needs its run directory.
start_munge() {
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
    [ -f /etc/munge/munge.key ] || /usr/sbin/mungekey --create
    if ! munge -n >/dev/null 2>&1; then
        if id munge >/dev/null 2>&1; then
            su -s /bin/sh munge -c /usr/sbin/munged || /usr/sbin/munged --force
        else
            /usr/sbin/munged --force
        fi
    fi
    munge -n | unmunge >/dev/null || fail "munge does not work"
}

# One node (this host) with its CPUs and memory, one partition; no cgroups (containers often lack
# them): process tracking by parent id, no task affinity.
write_conf() {
    cpus=$(nproc)
    mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
    mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
    cat >"$CONF" <<EOF
ClusterName=local
SlurmctldHost=$HOST
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
KillWait=30
NodeName=$HOST CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

setup() {
    command -v slurmctld >/dev/null || fail "no slurmctld: apt-get install slurm-wlm munge"
    start_munge
    [ -f "$CONF" ] || write_conf
    pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld
    pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
    for _ in $(seq 1 30); do
        if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
            say "Slurm is up: $(sinfo -h -N -o '%N %c CPUs %m MB %T')"
            return 0
        fi
        sleep 1
    done
    scontrol update nodename="$HOST" state=resume 2>/dev/null || true
    sinfo -h -o %T | grep -qE '^(idle|mixed)' || fail "the node is not idle: $(sinfo -N)"
}

stop() {
    for daemon in slurmd slurmctld; do
        if [ -f "/run/$daemon.pid" ]; then
            kill "$(cat "/run/$daemon.pid")" 2>/dev/null || true
        fi
    done
}

# The fenced sh block of docs/scaling.md that contains $1.
doc_block() {
    awk -v want="$1" '
        /^```sh$/ { inside = 1; text = ""; next }
        /^```$/ && inside { inside = 0; if (index(text, want)) { printf "%s", text; exit } next }
        inside { text = text $0 "\n" }
    ' "$ROOT/docs/scaling.md"
}

# The doc's scripts with this machine's paths, the scripted endpoint and 2 shards instead of 8.
prepare() {
    rm -rf "$WORK"
    mkdir -p "$WORK/bin" "$WORK/runs"
    ln -sf "$SUM2ACT" "$WORK/bin/sum2act"
    for name in shards merge; do
        case $name in
            shards) marker='--array=0-7' ;;
            merge) marker='sum2act merge "$RUNS/all"' ;;
        esac
        doc_block "$marker" | sed \
            -e "s#/shared/sum2act/runs/g1#$WORK/runs#g" \
            -e "s#/shared/sum2act#$WORK#g" \
            -e "s#/shared/toolbench#$ROOT/toolbench/sample#g" \
            -e "s#http://vllm.example:8000/v1#$ENDPOINT#g" \
            -e "s#Qwen/Qwen2.5-7B-Instruct#mock#g" \
            -e 's#--array=0-7#--array=0-1#' \
            -e 's#/8"#/2"#' \
            -e 's#--cpus-per-task=2#--cpus-per-task=1#' \
            -e 's#--time=04:00:00#--time=00:10:00#' \
            -e 's#--concurrency 16#--concurrency 4 --subsets G1_instruction#' \
            >"$WORK/$name.sh"
        [ -s "$WORK/$name.sh" ] || fail "no $name.sh block in docs/scaling.md"
        chmod +x "$WORK/$name.sh"
    done
}

# Waits until job $1 (and its array tasks) has left the queue.
wait_job() {
    for _ in $(seq 1 240); do
        [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
        sleep 1
    done
    fail "job $1 still queued after 4 minutes: $(squeue -j "$1")"
}

run_recipe() {
    [ -x "$SUM2ACT" ] || fail "no binary at $SUM2ACT (cargo build first, or set SUM2ACT)"
    python3 "$ROOT/scripts/mock_llm.py" >"$WORK.mock" 2>&1 &
    mock=$!
    trap 'kill $mock 2>/dev/null || true' EXIT
    for _ in $(seq 1 50); do
        ENDPOINT=$(sed -n 's/^serving at //p' "$WORK.mock" 2>/dev/null)
        [ -n "$ENDPOINT" ] && break
        sleep 0.1
    done
    [ -n "$ENDPOINT" ] || fail "the scripted model did not start: $(cat "$WORK.mock")"
    prepare
    cd "$WORK"
    # sbatch passes the submitting environment on: the jobs find this build as `sum2act`.
    export PATH="$WORK/bin:$PATH"
    sbatch --test-only shards.sh 2>&1 | grep -q 'to start' || fail "sbatch --test-only refuses shards.sh"
    # As the doc submits them.
    ARRAY=$(sbatch --parsable shards.sh)
    MERGE=$(sbatch --parsable --dependency=afterany:$ARRAY --kill-on-invalid-dep=yes merge.sh)
    say "submitted array $ARRAY and merge $MERGE"
    wait_job "$ARRAY"
    wait_job "$MERGE"
    state=$(scontrol show job "$MERGE" 2>/dev/null | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
    out="$WORK/slurm-$MERGE.out"
    [ -f "$out" ] && cat "$out" >&2
    [ -z "$state" ] || [ "$state" = COMPLETED ] || fail "merge.sh ended $state"
    grep -q 'merged 2 run(s)' "$out" || fail "merge.sh did not merge both shards"
    n=$(ls "$WORK/runs/all/G1_instruction" | grep -c '_sum2act.json$')
    [ "$n" = 6 ] || fail "the merged run has $n answers, not 6"

    # A shard cut short: merge refuses it (exit 2, naming it); resubmitting the task completes the set.
    rm -rf "$WORK/runs/all" "$WORK/runs/shard-1/G1_instruction/"*_sum2act.json
    MERGE=$(sbatch --parsable merge.sh)
    wait_job "$MERGE"
    grep -q 'shard 1/2.*incomplete' "$WORK/slurm-$MERGE.out" || fail "merge took a partial shard"
    ARRAY=$(sbatch --parsable --array=1 shards.sh)
    MERGE=$(sbatch --parsable --dependency=afterany:$ARRAY --kill-on-invalid-dep=yes merge.sh)
    wait_job "$ARRAY"
    wait_job "$MERGE"
    grep -q 'merged 2 run(s)' "$WORK/slurm-$MERGE.out" || fail "the resubmitted shard did not complete the set"
    say "the recipe of docs/scaling.md passed on $(sinfo -V)"
}

case ${1:-run} in
    setup) setup ;;
    stop) stop ;;
    run) setup && run_recipe ;;
    *) fail "usage: $0 [run|setup|stop]" ;;
esac
