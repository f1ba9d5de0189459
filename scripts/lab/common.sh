# shellcheck shell=bash
# Helpers of scripts/lab.sh (sourced): logging, our daemons' processes, files written only on change.

log() { printf '[lab] %s\n' "$*" >&2; }
die() {
  printf '[lab] ERROR: %s\n' "$*" >&2
  exit 1
}

# pids_of EXE PATTERN: live processes whose binary's basename matches the glob EXE
# and whose command line contains PATTERN (one of our private paths). One grep over
# /proc instead of pgrep, so nothing beyond coreutils/grep is needed.
pids_of() {
  local exe=$1 pat=$2 f pid target
  # shellcheck disable=SC2013 # file names from grep -l, no spaces possible
  for f in $(grep -laF -- "$pat" /proc/[0-9]*/cmdline 2>/dev/null); do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    target=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
    target=${target% (deleted)} # binary replaced by a package upgrade or a rebuild: still ours
    # shellcheck disable=SC2053 # EXE is a glob on purpose
    [[ ${target##*/} == $exe ]] && echo "$pid"
  done
  return 0
}

# daemon_pid PIDFILE EXE PATTERN: our daemon's pid (pid file first, then a /proc scan
# in case the pid file was lost), or fail.
daemon_pid() {
  local pidfile=$1 exe=$2 pat=$3 pid
  if [[ -s $pidfile ]]; then
    pid=$(<"$pidfile")
    if [[ $pid =~ ^[0-9]+$ ]] && [[ " $(pids_of "$exe" "$pat" | tr '\n' ' ') " == *" $pid "* ]]; then
      echo "$pid"
      return 0
    fi
  fi
  pid=$(pids_of "$exe" "$pat" | head -n1)
  [[ -n $pid ]] || return 1
  echo "$pid" >"$pidfile"
  echo "$pid"
}

# start_daemon PIDFILE LOGFILE CMD...: run CMD detached in its own session; the pid
# file is written by the process itself right before exec, so it is exact.
start_daemon() {
  local pidfile=$1 logfile=$2
  shift 2
  mkdir -p "$(dirname "$logfile")"
  printf '\n==== %s starting: %s\n' "$(date -Is)" "$*" >>"$logfile"
  # 8>&- 9>&-: the daemon must not inherit (and so hold forever) our lock files.
  # shellcheck disable=SC2016 # $$ and $@ are for the inner bash
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" </dev/null >>"$logfile" 2>&1 8>&- 9>&- &
}

# stop_pid PID [SECONDS]: SIGTERM, wait, then SIGKILL. Only ever called on pids we identified as ours.
stop_pid() {
  local pid=$1 secs=${2:-10} i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  log "pid $pid did not stop after ${secs}s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
}

# write_if_changed FILE: stdin -> FILE, returns 0 when the content changed.
write_if_changed() {
  local file=$1 tmp
  tmp=$(mktemp "$file.XXXXXX")
  cat >"$tmp"
  if [[ -f $file ]] && cmp -s "$tmp" "$file"; then
    rm -f "$tmp"
    return 1
  fi
  mv -f "$tmp" "$file"
  return 0
}

# lock_file FD FILE: hold FILE's lock on FD (8: one runtime, 9: what the runtimes share).
lock_file() {
  local fd=$1 file=$2
  mkdir -p "$(dirname "$file")"
  eval "exec $fd>\"\$file\""
  flock -w 600 "$fd" || die "another lab.sh holds $file"
}

# unmount_under DIR...: unmount everything mounted below the dirs (rootfs overlays, shm, netns), deepest first.
unmount_under() {
  local mp d
  for d in "$@"; do
    awk -v a="$d/" 'index($5, a) == 1 { print $5 }' /proc/self/mountinfo
  done | sort -ru | while read -r mp; do
    mp=$(printf '%b' "$mp") # mountinfo escapes spaces as \040
    umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || log "could not unmount $mp"
  done
}

# wait_for SECONDS CHECK...: run CHECK every 0.1 s until it succeeds (0) or time is up (1).
wait_for() {
  local secs=$1 i
  shift
  for ((i = 0; i < secs * 10; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  "$@"
}

# install_packages PACKAGE...: apt-get install those that are missing, starting none of their services.
install_packages() {
  local p installed missing=()
  local packages=("$@")
  # one dpkg-query for all (forks are slow here; the warm path must stay quick)
  installed=" $(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null |
    awk '/ install ok installed$/ { printf "%s ", $1 }' || true) "
  for p in "${packages[@]}"; do
    [[ $installed == *" $p "* ]] || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0

  log "installing: ${missing[*]}"
  # The Debian packages would start their own services (docker-registry's init script
  # grabs :5000, containerd.service the default socket). A temporary policy-rc.d
  # forbids that; an existing one (e.g. in container images) is left alone.
  local policy=/usr/sbin/policy-rc.d own_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\n# temporary, from podctl scripts/lab.sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    own_policy=1
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}" >&2
  if ((own_policy)); then
    rm -f "$policy"
    trap - EXIT
  fi

  # With systemd, keep the units we just installed from starting at boot; our own
  # instances are started by this script. Without systemd there is nothing to do.
  if [[ -d /run/systemd/system ]]; then
    for p in containerd docker-registry; do
      if [[ " ${missing[*]} " == *" $p "* ]]; then
        systemctl disable --now "$p.service" >/dev/null 2>&1 || true
      fi
    done
  fi
}
