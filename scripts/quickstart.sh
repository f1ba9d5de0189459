#!/usr/bin/env bash
# One command from a fresh clone to podctl working: installs the npm dependencies, builds,
# starts the runtime lab (containerd 2.x built from source, runc, CNI, local registries; see
# scripts/lab.sh: PODCTL_LAB_RUNTIME=crio or =containerd picks another runtime), then shows podctl
# against it. Run as root on Debian 12.
# With PODCTL_ENDPOINT=unix:///run/containerd/containerd.sock it skips the lab and shows podctl
# against that existing runtime instead (read-only commands only).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m==> %s\033[0m\n' "$*" >&2; }

step "Installing npm dependencies"
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund; fi

step "Building podctl"
npm run build --silent

if [ -n "${PODCTL_ENDPOINT:-}" ]; then
  export CONTAINER_RUNTIME_ENDPOINT="$PODCTL_ENDPOINT"
else
  step "Starting the runtime lab"
  bash scripts/lab.sh up >/dev/null
  # shellcheck disable=SC1090
  set -a && . "/run/podctl-lab/rt/${PODCTL_LAB_RUNTIME:-containerd2}/env" && set +a
  export CONTAINER_RUNTIME_ENDPOINT="$PODCTL_LAB_ENDPOINT"
fi

podctl() { node bin/run.js "$@"; }

step "podctl status"
podctl status
step "podctl pods"
podctl pods
if [ -z "${PODCTL_ENDPOINT:-}" ]; then
  bash scripts/demo.sh
fi
step "Done. Try: CONTAINER_RUNTIME_ENDPOINT=$CONTAINER_RUNTIME_ENDPOINT node bin/run.js --help"
