#!/usr/bin/env bash
# podctl runtime lab: a private CRI runtime + two local registries with locally built test images,
# for podctl's end-to-end tests and CI.
#
#   PODCTL_LAB_RUNTIME=RUNTIME bash scripts/lab.sh COMMAND
#
#   RUNTIME    containerd2 (the default): containerd 2.x built from source, what users run
#              crio: CRI-O built from source, with Debian's conmon
#              containerd: Debian's containerd 1.6, the oldest podctl supports
#   up         install and build what is missing, start the registries and the runtime (idempotent;
#              last stdout line = the CRI endpoint; settings in /run/podctl-lab/rt/RUNTIME/env)
#   build      only install and build what the runtime needs (CI builds CRI-O while tests run)
#   down       stop the runtime and its containers; the registries stop with the last runtime
#   status     tell what runs (exit 0 when the runtime and the registries are up, 3 otherwise)
#   verify     smoke test: a pod through the runtime's CRI, driven by the reference crictl
#   reset      down, then wipe the runtime's state (and the shared state, if no runtime is left)
#   fresh DIR  write a private instance of the runtime under DIR, for tests that need an empty one;
#              prints its endpoint; DIR/start runs it in the foreground (SIGINT stops it)
#
# The runtimes run side by side: each has its own paths (/run/podctl-lab/rt/RUNTIME,
# /var/lib/podctl-lab/rt/RUNTIME, /var/log/podctl-lab/rt/RUNTIME.log), runc state, CNI bridge and pod
# subnet; they share the registries and images. A system containerd or CRI-O, if any, is never touched.
# Progress goes to stderr; stdout is kept for results.
set -euo pipefail
umask 022 # image rootfs modes and config files must not depend on the caller's umask

readonly LAB_VAR=/var/lib/podctl-lab
readonly LAB_RUN=/run/podctl-lab
readonly LAB_LOG=/var/log/podctl-lab
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR
readonly RUNTIMES=(containerd2 crio containerd)
readonly RT=${PODCTL_LAB_RUNTIME:-containerd2}

readonly CNI_BIN_DIR=/usr/lib/cni
readonly RUNTIME_HANDLER=test-handler
# What every runtime needs. containernetworking-plugins pulls in iptables itself; apache2-utils
# brings htpasswd (bcrypt) for the registry that requires a login; openssl makes the throwaway
# certificate of the HTTPS probe test; systemd brings systemd-analyze, which the `podctl unit` test
# runs (the lab needs no systemd as PID 1).
readonly PACKAGES=(runc containernetworking-plugins docker-registry busybox-static skopeo gcc libc6-dev
  iproute2 iptables curl apache2-utils openssl systemd)

# shellcheck source=scripts/lab/common.sh
. "$SCRIPT_DIR/lab/common.sh"
# shellcheck source=scripts/lab/registry.sh
. "$SCRIPT_DIR/lab/registry.sh"
# shellcheck source=scripts/lab/build.sh
. "$SCRIPT_DIR/lab/build.sh"
# shellcheck source=scripts/lab/containerd.sh
. "$SCRIPT_DIR/lab/containerd.sh"
# shellcheck source=scripts/lab/crio.sh
. "$SCRIPT_DIR/lab/crio.sh"

# ---------------------------------------------------------------- layout
# The runtime's family (the functions FAMILY_* that drive it), its bridge and pod subnet in the
# lab, and those of its fresh instances (no two runtimes, nor a lab and its fresh instances, share
# a bridge or a subnet; the lab of podctl before 0.2 used podctl0 and 10.234.0.0/16, fresh
# instances podctl-fresh0 and 10.236.0.0/16).
case $RT in
  containerd2) FAMILY=containerd NET=(podctl-ctrd2 10.235 podctl-fctrd2 10.241) ;;
  crio) FAMILY=crio NET=(podctl-crio 10.237 podctl-fcrio 10.242) ;;
  containerd) FAMILY=containerd NET=(podctl-ctrd1 10.238 podctl-fctrd1 10.243) ;;
  *) die "PODCTL_LAB_RUNTIME=$RT: expected one of ${RUNTIMES[*]}" ;;
esac
readonly FAMILY NET
rt() { "${FAMILY}_$1" "${@:2}"; }

# layout RUN VAR LOGFILE lab|fresh: every path and network of one instance of the runtime.
layout() {
  RT_RUN=$1 RT_VAR=$2 RT_LOGFILE=$3 INSTANCE=$4
  RT_PIDFILE=$RT_RUN/daemon.pid
  RT_SOCK=$RT_RUN/$FAMILY.sock
  RT_ENDPOINT=unix://$RT_SOCK
  RUNC_ROOT=$RT_RUN/runc
  CNI_CONF_DIR=$RT_VAR/cni/net.d
  CNI_IPAM_DIR=$RT_VAR/cni/ipam
  LOG_ROOT=$RT_VAR/pods-logs
  ENV_FILE=$RT_RUN/env
  local net=("${NET[@]:0:2}")
  [[ $4 == fresh ]] && net=("${NET[@]:2:2}")
  CNI_NETWORK=podctl-$4-$RT
  CNI_BRIDGE=${net[0]}
  POD_CIDR=${net[1]}.0.0/16
  POD_GATEWAY=${net[1]}.0.1
  rt layout
}

lab_layout() { layout "$LAB_RUN/rt/$RT" "$LAB_VAR/rt/$RT" "$LAB_LOG/rt/$RT.log" lab; }

# overlayfs is the default snapshotter (CRI-O: the overlay driver); some kernels/filesystems (e.g.
# overlay on overlay) refuse it, then we use plain copies ("native", CRI-O's "vfs": slower, always work).
detect_snapshotter() {
  local cache=$LAB_VAR/snapshotter t
  if [[ -s $cache ]]; then
    cat "$cache"
    return 0
  fi
  mkdir -p "$LAB_VAR"
  t=$(mktemp -d "$LAB_VAR/.overlay-test.XXXXXX")
  mkdir -p "$t"/{l1,l2,u,w,m}
  echo x >"$t/l1/f"
  local sn=native
  if mount -t overlay overlay -o "lowerdir=$t/l2:$t/l1,upperdir=$t/u,workdir=$t/w" "$t/m" 2>/dev/null; then
    if [[ -f $t/m/f ]] && echo y >"$t/m/g" && rm -f "$t/m/f"; then sn=overlayfs; fi
    umount "$t/m" || umount -l "$t/m" || true
  fi
  rm -rf "$t"
  echo "$sn" >"$cache"
  echo "$sn"
}

cni_conflist() {
  # No default route and no masquerade for pods: they reach the host (the bridge
  # gateway) and each other, nothing beyond. CNI plugins 1.1.1 speak cniVersion 1.0.0.
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY" }]],
        "dataDir": "$CNI_IPAM_DIR"
      }
    }
  ]
}
EOF
}

# write_configs: the CNI network and the runtime's config files; 0 when the runtime's config changed.
write_configs() {
  mkdir -p "$RT_RUN" "$RT_VAR" "$RUNC_ROOT" "$CNI_CONF_DIR" "$CNI_IPAM_DIR" "$LOG_ROOT" "$(dirname "$RT_LOGFILE")"
  cni_conflist | write_if_changed "$CNI_CONF_DIR/10-$CNI_NETWORK.conflist" || true # the runtimes watch the dir
  printf 'runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 10\n' "$RT_ENDPOINT" "$RT_ENDPOINT" | write_if_changed "$RT_RUN/crictl.yaml" || true
  rt write_config "$(detect_snapshotter)"
}

# ---------------------------------------------------------------- the runtime daemon
# crictl_ ARGS...: the reference crictl on our runtime (a private config: no /etc/crictl.yaml warnings).
crictl_() { "$CRICTL" --config "$RT_RUN/crictl.yaml" "$@"; }
runtime_version() { crictl_ version 2>/dev/null | awk '$1 == "RuntimeVersion:" { print $2 }'; }
runtime_name() { crictl_ version 2>/dev/null | awk '$1 == "RuntimeName:" { print $2 }'; }

# The sandbox image, ready before the first pod, pulled through the CRI as the kubelet pulls it. Not
# with `ctr images pull`, which the lab used before it ran three runtimes: Debian's ctr 1.6 shows pull
# progress from a goroutine whose context is cancelled as the pull ends (ShowProgress in
# containerd's cmd/ctr/commands/content/fetch.go, v1.6.20 lines 169-283), and a poll in flight then
# prints `level=error msg="active check failed"` (or "failed to get content info")
# error="context canceled" on stderr: harmless, but it was the one error line of the quick start.
prepull() {
  crictl_ inspecti "$PAUSE_IMAGE" >/dev/null 2>&1 && return 0
  log "pulling $PAUSE_IMAGE into $RT"
  crictl_ --timeout 120s pull "$PAUSE_IMAGE" >/dev/null
}

ensure_runtime() {
  local changed=0 pid
  write_configs && changed=1
  # The bridge plugin turns on ip_forward; remember the host's value so the last `down` can restore it.
  [[ -f $LAB_RUN/ip_forward.orig ]] || cat /proc/sys/net/ipv4/ip_forward >"$LAB_RUN/ip_forward.orig"

  if pid=$(rt running_pid); then
    if ((changed)); then
      log "$RT: config changed; restarting it (pid $pid; running pods keep running)"
      stop_pid "$pid" 20
    elif rt ready; then
      log "$RT already running (pid $pid)"
      return 0
    else
      log "$RT (pid $pid) does not answer; restarting it"
      stop_pid "$pid" 20
    fi
  fi

  log "starting $RT (log: $RT_LOGFILE)"
  stat -c %s "$RT_LOGFILE" 2>/dev/null >"$RT_RUN/daemon.log.offset" || echo 0 >"$RT_RUN/daemon.log.offset"
  # shellcheck disable=SC2046 # the command line is words without spaces
  start_daemon "$RT_PIDFILE" "$RT_LOGFILE" $(rt command)
  local i
  for ((i = 0; i < 600; i++)); do
    if rt ready; then break; fi
    if ! rt running_pid >/dev/null && ((i > 10)); then
      tail -n 30 "$RT_LOGFILE" >&2 || true
      die "$RT exited at start"
    fi
    sleep 0.1
  done
  rt ready || {
    tail -n 30 "$RT_LOGFILE" >&2
    die "$RT did not answer on $RT_SOCK within 60s"
  }
}

# ---------------------------------------------------------------- env file
write_env() {
  local version name
  version=$(runtime_version)
  name=$(runtime_name)
  [[ -n $version && -n $name ]] || die "$RT does not answer crictl version on $RT_ENDPOINT"
  write_if_changed "$ENV_FILE" <<EOF || true
PODCTL_LAB_RUNTIME=$RT
PODCTL_LAB_RUNTIME_NAME=$name
PODCTL_LAB_RUNTIME_VERSION=$version
PODCTL_LAB_ENDPOINT=$RT_ENDPOINT
PODCTL_LAB_REGISTRY=$REGISTRY
PODCTL_LAB_BUSYBOX=$BUSYBOX_IMAGE
PODCTL_LAB_AUTH_REGISTRY=$AUTH_REGISTRY
PODCTL_LAB_AUTH_BUSYBOX=$AUTH_BUSYBOX_IMAGE
PODCTL_LAB_AUTH_USER=$AUTH_REG_USER
PODCTL_LAB_AUTH_PASSWORD=$(<"$AUTH_REG_PASSWORD_FILE")
PODCTL_LAB_PAUSE=$PAUSE_IMAGE
PODCTL_LAB_STATIC_APP=$STATIC_APP_IMAGE
PODCTL_LAB_CRITOOLS_IMAGES=$REGISTRY/$CRITOOLS_PREFIX
PODCTL_LAB_LOG_ROOT=$LOG_ROOT
PODCTL_LAB_RUNTIME_HANDLER=$RUNTIME_HANDLER
PODCTL_LAB_POD_CIDR=$POD_CIDR
PODCTL_LAB_CNI_BRIDGE=$CNI_BRIDGE
PODCTL_LAB_RUNTIME_LOG=$RT_LOGFILE
PODCTL_LAB_SNAPSHOTTER=$(detect_snapshotter)
PODCTL_LAB_CRICTL=$CRICTL
EOF
}

# other_labs_up: another runtime of the lab is up (its env file is there until its `down`); so is
# the lab of podctl before 0.2 (one containerd, its env file right in /run/podctl-lab).
other_labs_up() {
  local other
  [[ -f $LAB_RUN/env ]] && return 0
  for other in "${RUNTIMES[@]}"; do
    [[ $other != "$RT" && -f $LAB_RUN/rt/$other/env ]] && return 0
  done
  return 1
}

# ---------------------------------------------------------------- commands
# build: the packages and binaries the runtime needs, installed and built where missing.
cmd_build() {
  local packages=("${PACKAGES[@]}")
  case $RT in
    containerd) packages+=(containerd) ;;
    # nft: without it CRI-O 1.34.0 dereferences a nil nftables hostport manager (a panic) on the
    # first pod with a hostPort, instead of using iptables
    crio) packages+=(conmon nftables "${CRIO_BUILD_PACKAGES[@]}") ;;
  esac
  lock_file 9 "$LAB_RUN/packages.lock" # apt-get and dpkg serialise anyway; say who waits
  install_packages "${packages[@]}"
  exec 9>&-
  if [[ $RT == containerd2 ]]; then build_containerd2; fi
  if [[ $RT == crio ]]; then build_crio; fi
  build_crictl
}

cmd_up() {
  local t0=$SECONDS
  lab_layout
  cmd_build

  lock_file 9 "$LAB_RUN/lock" # the registries and images are shared
  mkdir -p "$LAB_VAR" "$LAB_LOG"
  ensure_registry
  ensure_auth_registry
  ensure_images
  exec 9>&-

  lock_file 8 "$RT_RUN/lock"
  ensure_runtime
  prepull
  local errs
  errs=$(rt cni_errors)
  [[ -z $errs ]] || die "$RT reports CNI errors (see $RT_LOGFILE): $errs"
  write_env
  log "lab ($RT $(runtime_version)) is up in $((SECONDS - t0))s; env file: $ENV_FILE"
  echo "$RT_ENDPOINT"
}

cmd_down() {
  lab_layout
  lock_file 8 "$RT_RUN/lock"
  local pid p
  if pid=$(rt running_pid); then
    rt stop_tasks
    log "stopping $RT (pid $pid)"
    stop_pid "$pid" 20
  else
    log "$RT: not running"
  fi
  rt stop_leftovers
  unmount_under "$RT_RUN" "$RT_VAR"
  rm -f "$RT_PIDFILE" "$RT_SOCK" "$ENV_FILE"
  exec 8>&-

  lock_file 9 "$LAB_RUN/lock"
  if other_labs_up; then
    log "the registries keep running: another runtime of the lab uses them"
  else
    stop_registries
    if [[ -s $LAB_RUN/ip_forward.orig ]]; then
      local orig
      orig=$(<"$LAB_RUN/ip_forward.orig")
      if [[ $orig == [01] ]]; then echo "$orig" >/proc/sys/net/ipv4/ip_forward || true; fi
      rm -f "$LAB_RUN/ip_forward.orig"
    fi
  fi
  log "lab ($RT) is down"
}

cmd_status() {
  local rc=0 pid
  lab_layout
  if pid=$(rt running_pid) && rt ready; then
    echo "$RT: running (pid $pid) endpoint $RT_ENDPOINT, $(runtime_name) $(runtime_version)"
    rt status
    echo "  log: $RT_LOGFILE"
    local errs
    errs=$(rt cni_errors)
    [[ -z $errs ]] || echo "  CNI errors in log: $errs"
  else
    echo "$RT: not running"
    rc=3
  fi
  registries_status || rc=3
  if ip -br addr show dev "$CNI_BRIDGE" >/dev/null 2>&1; then
    echo "bridge: $(ip -br addr show dev "$CNI_BRIDGE" | tr -s ' ')"
  else
    echo "bridge: $CNI_BRIDGE not created yet (created by the first pod)"
  fi
  [[ -f $ENV_FILE ]] && echo "env file: $ENV_FILE" || echo "env file: none"
  return "$rc"
}

# verify: a smoke test through the CRI with the reference crictl, the same on every runtime: a pod
# (the sandbox image, CNI) with a busybox container that prints and exits 0; its log; then all removed.
cmd_verify() {
  lab_layout
  rt ready || die "$RT is not running; run: PODCTL_LAB_RUNTIME=$RT bash scripts/lab.sh up"
  VERIFY_DIR=$(mktemp -d)
  VERIFY_POD=
  trap verify_cleanup EXIT
  local uid=smoke-$$-$RANDOM ctr state="" i out
  VERIFY_LOGDIR=$LOG_ROOT/podctl-lab-smoke_smoke_$uid
  mkdir -p "$VERIFY_LOGDIR"
  printf '{"metadata": {"name": "smoke", "namespace": "podctl-lab-smoke", "uid": "%s"}, "log_directory": "%s", "linux": {}}\n' \
    "$uid" "$VERIFY_LOGDIR" >"$VERIFY_DIR/pod.json"
  # shellcheck disable=SC2016 # expanded inside the container
  printf '{"metadata": {"name": "hello"}, "image": {"image": "%s"}, "log_path": "hello.log", "linux": {},
 "command": ["sh", "-c", "echo hi from $(busybox | head -n1 | cut -d\\" \\" -f1-2)"]}\n' "$BUSYBOX_IMAGE" >"$VERIFY_DIR/ctr.json"
  verify_crictl pull "$BUSYBOX_IMAGE" >/dev/null
  VERIFY_POD=$(verify_crictl runp "$VERIFY_DIR/pod.json")
  ctr=$(verify_crictl create "$VERIFY_POD" "$VERIFY_DIR/ctr.json" "$VERIFY_DIR/pod.json")
  verify_crictl start "$ctr" >/dev/null
  for ((i = 0; i < 100; i++)); do
    state=$(verify_crictl inspect -o go-template --template '{{.status.state}} {{.status.exitCode}}' "$ctr")
    [[ $state == CONTAINER_EXITED* ]] && break
    sleep 0.1
  done
  out=$(verify_crictl logs "$ctr" 2>&1)
  printf '%s\n' "$out" >&2
  [[ $state == "CONTAINER_EXITED 0" ]] || die "verify: the container did not exit 0 ($state)"
  [[ $out == "hi from BusyBox v"* ]] || die "verify: unexpected log: $out"
  local errs
  errs=$(rt cni_errors)
  [[ -z $errs ]] || die "CNI errors in $RT_LOGFILE: $errs"
  log "verify: OK ($RT: a pod ran busybox, logged and exited 0; removed)"
}

# verify_crictl ARGS...: the reference crictl on our runtime; its warnings are shown only when it fails.
verify_crictl() {
  local err=$VERIFY_DIR/stderr
  crictl_ --timeout 60s "$@" 2>"$err" && return 0
  cat "$err" >&2
  die "verify: crictl $1 failed"
}

verify_cleanup() {
  if [[ -n $VERIFY_POD ]]; then
    crictl_ stopp "$VERIFY_POD" >/dev/null 2>&1 || true
    crictl_ rmp "$VERIFY_POD" >/dev/null 2>&1 || log "verify: could not remove pod $VERIFY_POD"
  fi
  rm -rf "$VERIFY_DIR" "$VERIFY_LOGDIR"
}

cmd_reset() {
  cmd_down
  lab_layout
  log "wiping $RT_VAR $RT_RUN $RT_LOGFILE"
  rm -rf --one-file-system "$RT_VAR" "$RT_RUN" "$RT_LOGFILE"
  ip link delete "$CNI_BRIDGE" 2>/dev/null || true
  if ! other_labs_up; then
    unmount_under "$LAB_RUN" "$LAB_VAR"
    log "no runtime of the lab is left: wiping $LAB_VAR $LAB_LOG $LAB_RUN"
    rm -rf --one-file-system "$LAB_VAR" "$LAB_LOG"
    find "$LAB_RUN" -mindepth 1 -maxdepth 1 ! -name lock -exec rm -rf --one-file-system {} +
  fi
  log "lab state wiped"
}

# fresh DIR: a private instance of the runtime under DIR, sharing nothing writable with the lab
# (its configs, storage, state, runc state, CNI network and log), for tests that need an empty
# runtime. The lab's binaries, registries and images must be there (`up` first).
cmd_fresh() {
  local dir=${1:-}
  [[ -n $dir && -d $dir ]] || die "fresh needs an existing directory"
  dir=$(cd "$dir" && pwd)
  layout "$dir/run" "$dir/var" "$dir/daemon.log" fresh
  write_configs || true
  {
    echo '#!/bin/sh'
    echo "# generated by podctl scripts/lab.sh fresh: a private $RT; SIGINT stops it"
    echo "exec $(rt command)"
  } >"$dir/start"
  chmod 755 "$dir/start"
  echo "$RT_ENDPOINT"
}

usage() {
  sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

main() {
  case "${1:-}" in
    up | build | down | verify | reset | fresh) [[ $(id -u) -eq 0 ]] || die "must run as root" ;;
  esac
  case "${1:-}" in
    up) cmd_up ;;
    build) cmd_build ;;
    down) cmd_down ;;
    status) cmd_status ;;
    verify) cmd_verify ;;
    reset) cmd_reset ;;
    fresh) cmd_fresh "${2:-}" ;;
    *) usage ;;
  esac
}

main "$@"
