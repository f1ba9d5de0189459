#!/usr/bin/env bash
# The end-to-end tour the quick start shows: pull, run a pod like the kubelet, look at it the way
# a node engineer would, run a CI-style smoke pod, and kill everything. Expects the lab to be up
# (scripts/lab.sh up; PODCTL_LAB_RUNTIME picks which of its runtimes) and podctl built.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC1090
set -a && . "/run/podctl-lab/rt/${PODCTL_LAB_RUNTIME:-containerd2}/env" && set +a
export CONTAINER_RUNTIME_ENDPOINT="$PODCTL_LAB_ENDPOINT" PODCTL_POD_LOGS_ROOT="$PODCTL_LAB_LOG_ROOT"

step() { printf '\n\033[1m$ podctl %s\033[0m\n' "$*" >&2; node bin/run.js "$@"; }

# Leave no demo pod behind, whatever happens below.
trap 'node bin/run.js kill --all -n demo --grace-period 1 >/dev/null 2>&1 || true' EXIT

step pull "$PODCTL_LAB_BUSYBOX"
step run -f examples/web.yaml --replace
step pods -n demo -o wide
step ps -n demo -a
step status web -n demo
step exec web/server -n demo -- cat /tmp/started
step logs web/server -n demo --tail 5
step run --wait completed --rm -f examples/smoke-job.yaml
step kill web -n demo
step pods -n demo
