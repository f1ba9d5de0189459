#!/usr/bin/env bash
# podctl runtime lab: a private containerd (CRI plugin) + a local registry with
# locally built test images, for podctl's end-to-end tests and CI.
#
#   bash scripts/lab.sh up       install what is missing, build/push images, start everything
#                                (idempotent; last stdout line = the CRI endpoint)
#   bash scripts/lab.sh down     stop our containerd (+ its shims and mounts) and our registry
#   bash scripts/lab.sh status   tell what runs (exit 0 when all is up, 3 otherwise)
#   bash scripts/lab.sh verify   smoke test: run busybox/pause through our containerd with ctr
#   bash scripts/lab.sh reset    down, then wipe all lab state (images are rebuilt on next up)
#
# Everything lives in private paths (/var/lib/podctl-lab, /run/podctl-lab,
# /var/log/podctl-lab); a system containerd or registry, if any, is never touched.
# Progress goes to stderr; stdout is kept for results.
set -euo pipefail
umask 022 # image rootfs modes and config files must not depend on the caller's umask

# ---------------------------------------------------------------- constants
readonly LAB_VAR=/var/lib/podctl-lab
readonly LAB_RUN=/run/podctl-lab
readonly LAB_LOG=/var/log/podctl-lab
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR

readonly CTRD_SOCK=$LAB_RUN/containerd.sock
readonly CTRD_TTRPC=$LAB_RUN/containerd.sock.ttrpc
readonly ENDPOINT=unix://$CTRD_SOCK
readonly CTRD_ROOT=$LAB_VAR/containerd
readonly CTRD_STATE=$LAB_RUN/containerd
readonly CTRD_CONFIG=$LAB_RUN/containerd.toml
readonly CTRD_PIDFILE=$LAB_RUN/containerd.pid
readonly CTRD_LOGFILE=$LAB_LOG/containerd.log
readonly RUNC_ROOT=$LAB_RUN/runc

readonly CNI_BIN_DIR=/usr/lib/cni
readonly CNI_CONF_DIR=$LAB_VAR/cni/net.d
readonly CNI_IPAM_DIR=$LAB_VAR/cni/ipam
readonly CNI_BRIDGE=podctl0
readonly POD_CIDR=10.234.0.0/16
readonly POD_GATEWAY=10.234.0.1

readonly REG_LISTEN=127.0.0.1:5000
readonly REGISTRY=localhost:5000
readonly REG_URL=http://$REG_LISTEN
readonly REG_STORAGE=$LAB_VAR/registry
readonly REG_CONFIG=$LAB_RUN/registry.yml
readonly REG_PIDFILE=$LAB_RUN/registry.pid
readonly REG_LOGFILE=$LAB_LOG/registry.log

# A second registry that requires a login (htpasswd, bcrypt), for the credential paths
# (docker config files, --creds/--auth, wrong passwords). Plain http on loopback, like the first.
readonly AUTH_REG_LISTEN=127.0.0.1:5001
readonly AUTH_REGISTRY=localhost:5001
readonly AUTH_REG_URL=http://$AUTH_REG_LISTEN
readonly AUTH_REG_STORAGE=$LAB_VAR/registry-auth
readonly AUTH_REG_HTPASSWD=$LAB_VAR/registry-auth.htpasswd
readonly AUTH_REG_PASSWORD_FILE=$LAB_VAR/registry-auth.password
readonly AUTH_REG_USER=podctl
readonly AUTH_REG_CONFIG=$LAB_RUN/registry-auth.yml
readonly AUTH_REG_PIDFILE=$LAB_RUN/registry-auth.pid
readonly AUTH_REG_LOGFILE=$LAB_LOG/registry-auth.log

readonly IMAGES_DIR=$LAB_VAR/images
readonly IMAGE_REV=2 # bump to force a rebuild + re-push of the test images
readonly BUSYBOX_REPO=podctl/busybox
readonly BUSYBOX_TAGS=(1.36 latest)
readonly PAUSE_REPO=podctl/pause
readonly PAUSE_TAG=3.9
readonly BUSYBOX_IMAGE=$REGISTRY/$BUSYBOX_REPO:1.36
readonly AUTH_BUSYBOX_IMAGE=$AUTH_REGISTRY/$BUSYBOX_REPO:1.36
readonly PAUSE_IMAGE=$REGISTRY/$PAUSE_REPO:$PAUSE_TAG
# Stand-ins for the images cri-tools' own e2e specs pull from gcr.io/k8s-staging-cri-tools (no outside
# registry is reachable): same repository names under our registry, tag latest; the digest spec reads
# test-image-digest's manifest digest from the registry (test/e2e/crictl-e2e.test.ts).
readonly CRITOOLS_PREFIX=k8s-staging-cri-tools
readonly CRITOOLS_IMAGES=(test-image-1 test-image-digest)

readonly LOG_ROOT=$LAB_VAR/pods-logs
readonly ENV_FILE=$LAB_RUN/env
readonly RUNTIME_HANDLER=test-handler
readonly SMOKE_NS=podctl-lab-smoke

# What `up` needs. containernetworking-plugins pulls in iptables itself; apache2-utils
# brings htpasswd (bcrypt) for the registry that requires a login; openssl makes the
# throwaway certificate of the HTTPS probe test; systemd brings systemd-analyze, which the
# `podctl unit` test runs (verify needs no systemd as PID 1).
readonly PACKAGES=(containerd runc containernetworking-plugins docker-registry
  busybox-static skopeo gcc libc6-dev iproute2 iptables curl apache2-utils openssl systemd)

# ---------------------------------------------------------------- helpers
log() { printf '[lab] %s\n' "$*" >&2; }
die() {
  printf '[lab] ERROR: %s\n' "$*" >&2
  exit 1
}
ctr_() { ctr --address "$CTRD_SOCK" "$@"; }

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
    target=${target% (deleted)} # binary replaced by a package upgrade: still ours
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
  # 9>&-: the daemon must not inherit (and so hold forever) our lock file.
  # shellcheck disable=SC2016 # $$ and $@ are for the inner bash
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" </dev/null >>"$logfile" 2>&1 9>&- &
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

# registry_digest REPO TAG [URL [USER:PASSWORD]]: manifest digest the registry (default: the
# anonymous one) serves for REPO:TAG (empty if none).
registry_digest() {
  local url=${3:-$REG_URL} auth=()
  [[ -n ${4:-} ]] && auth=(-u "$4")
  curl -sfI -m 5 "${auth[@]}" \
    -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
    "$url/v2/$1/manifests/$2" 2>/dev/null |
    tr -d '\r' | awk -F': ' 'tolower($1) == "docker-content-digest" { print $2 }' || true
}

registry_ok() { curl -sf -m 2 -o /dev/null "$REG_URL/v2/"; }

# auth_registry_ok: answers, refuses anonymous requests and accepts our user.
auth_registry_ok() {
  [[ -s $AUTH_REG_PASSWORD_FILE ]] || return 1
  [[ $(curl -s -m 2 -o /dev/null -w '%{http_code}' "$AUTH_REG_URL/v2/") == 401 ]] || return 1
  curl -sf -m 2 -o /dev/null -u "$AUTH_REG_USER:$(<"$AUTH_REG_PASSWORD_FILE")" "$AUTH_REG_URL/v2/"
}

containerd_ok() { [[ -S $CTRD_SOCK ]] && timeout 5 ctr --address "$CTRD_SOCK" version >/dev/null 2>&1; }

lock() {
  mkdir -p "$LAB_RUN"
  exec 9>"$LAB_RUN/lock"
  flock -w 300 9 || die "another lab.sh holds $LAB_RUN/lock"
}

# ---------------------------------------------------------------- step 1: packages
install_packages() {
  local p installed missing=()
  # one dpkg-query for all (forks are slow here; the warm path must stay quick)
  installed=" $(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null |
    awk '/ install ok installed$/ { printf "%s ", $1 }' || true) "
  for p in "${PACKAGES[@]}"; do
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

# ---------------------------------------------------------------- step 2: registry + images
registry_config() {
  cat <<EOF
# generated by podctl scripts/lab.sh
version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $REG_STORAGE
  delete:
    enabled: true
http:
  addr: $REG_LISTEN
EOF
}

ensure_registry() {
  mkdir -p "$REG_STORAGE" "$LAB_LOG"
  local changed=0 pid
  registry_config | write_if_changed "$REG_CONFIG" && changed=1

  if pid=$(daemon_pid "$REG_PIDFILE" docker-registry "$REG_CONFIG"); then
    if ((changed)); then
      log "registry config changed; restarting registry (pid $pid)"
      stop_pid "$pid"
    elif registry_ok; then
      log "registry already running (pid $pid) on $REG_LISTEN"
      return 0
    else
      log "registry (pid $pid) does not answer; restarting it"
      stop_pid "$pid"
    fi
  elif registry_ok; then
    # Not ours (e.g. Debian's docker-registry service): usable all the same.
    log "WARNING: a registry that is not ours already answers on $REG_LISTEN; using it"
    return 0
  fi

  if ss -Hltn "sport = :${REG_LISTEN##*:}" 2>/dev/null | grep -q .; then
    die "port ${REG_LISTEN##*:} is taken by something that is not a registry"
  fi
  log "starting registry on $REG_LISTEN (log: $REG_LOGFILE)"
  start_daemon "$REG_PIDFILE" "$REG_LOGFILE" /usr/bin/docker-registry serve "$REG_CONFIG"
  local i
  for ((i = 0; i < 150; i++)); do
    registry_ok && return 0
    sleep 0.1
  done
  tail -n 20 "$REG_LOGFILE" >&2 || true
  die "registry did not answer on $REG_URL/v2/ within 15s"
}

auth_registry_config() {
  cat <<EOF
# generated by podctl scripts/lab.sh -- the lab registry that requires a login
version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $AUTH_REG_STORAGE
  delete:
    enabled: true
auth:
  htpasswd:
    realm: podctl-lab
    path: $AUTH_REG_HTPASSWD
http:
  addr: $AUTH_REG_LISTEN
EOF
}

# The password is made once (random, kept in the lab's state) and written to the env file for tests.
ensure_auth_credentials() {
  if [[ ! -s $AUTH_REG_PASSWORD_FILE ]]; then
    (umask 077 && head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$AUTH_REG_PASSWORD_FILE")
  fi
  local password
  password=$(<"$AUTH_REG_PASSWORD_FILE")
  if [[ ! -s $AUTH_REG_HTPASSWD ]] || ! htpasswd -vb "$AUTH_REG_HTPASSWD" "$AUTH_REG_USER" "$password" >/dev/null 2>&1; then
    htpasswd -cbB "$AUTH_REG_HTPASSWD" "$AUTH_REG_USER" "$password" 2>/dev/null || die "htpasswd could not write $AUTH_REG_HTPASSWD"
  fi
}

ensure_auth_registry() {
  mkdir -p "$AUTH_REG_STORAGE" "$LAB_LOG"
  ensure_auth_credentials
  local changed=0 pid i
  auth_registry_config | write_if_changed "$AUTH_REG_CONFIG" && changed=1
  if pid=$(daemon_pid "$AUTH_REG_PIDFILE" docker-registry "$AUTH_REG_CONFIG"); then
    if ((changed == 0)) && auth_registry_ok; then
      log "login registry already running (pid $pid) on $AUTH_REG_LISTEN"
      return 0
    fi
    log "restarting the login registry (pid $pid)"
    stop_pid "$pid"
  fi

  if ss -Hltn "sport = :${AUTH_REG_LISTEN##*:}" 2>/dev/null | grep -q .; then
    die "port ${AUTH_REG_LISTEN##*:} is taken by something that is not our login registry"
  fi
  log "starting the login registry on $AUTH_REG_LISTEN (user $AUTH_REG_USER; log: $AUTH_REG_LOGFILE)"
  start_daemon "$AUTH_REG_PIDFILE" "$AUTH_REG_LOGFILE" /usr/bin/docker-registry serve "$AUTH_REG_CONFIG"
  for ((i = 0; i < 150; i++)); do
    auth_registry_ok && return 0
    sleep 0.1
  done
  tail -n 20 "$AUTH_REG_LOGFILE" >&2 || true
  die "the login registry did not answer on $AUTH_REG_URL/v2/ (401 anonymous, 200 for $AUTH_REG_USER) within 15s"
}

# push_auth_busybox: busybox into the login registry (with our user) where missing or stale.
push_auth_busybox() {
  local want have creds
  want=$(<"$IMAGES_DIR/busybox/.digest")
  creds="$AUTH_REG_USER:$(<"$AUTH_REG_PASSWORD_FILE")"
  have=$(registry_digest "$BUSYBOX_REPO" 1.36 "$AUTH_REG_URL" "$creds")
  [[ $have == "$want" ]] && return 0
  log "pushing $AUTH_BUSYBOX_IMAGE"
  skopeo --insecure-policy copy -q --dest-tls-verify=false --dest-creds "$creds" \
    "oci:$IMAGES_DIR/busybox:1.36" "docker://$AUTH_BUSYBOX_IMAGE" >&2
  have=$(registry_digest "$BUSYBOX_REPO" 1.36 "$AUTH_REG_URL" "$creds")
  [[ -n $have ]] || die "push of $AUTH_BUSYBOX_IMAGE did not land"
}

# oci_blob LAYOUT FILE: move FILE into LAYOUT's blob store; prints "sha256:HEX SIZE".
oci_blob() {
  local layout=$1 file=$2 hex size
  hex=$(sha256sum "$file" | cut -d' ' -f1)
  size=$(stat -c %s "$file")
  mv -f "$file" "$layout/blobs/sha256/$hex"
  echo "sha256:$hex $size"
}

# oci_build LAYOUT ROOTFS CONFIG_JSON TAG...: a one-layer OCI image layout, built
# reproducibly (fixed mtimes/owners, gzip -n) so the same inputs give the same digests.
oci_build() {
  local layout=$1 rootfs=$2 config=$3
  shift 3
  local arch diff_id layer layer_size cfg cfg_size man man_size tag entries=""
  arch=$(dpkg --print-architecture)
  rm -rf "$layout"
  mkdir -p "$layout/blobs/sha256"

  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    -C "$rootfs" -cf "$layout/layer.tar" .
  diff_id=sha256:$(sha256sum "$layout/layer.tar" | cut -d' ' -f1)
  gzip -n -9 "$layout/layer.tar"
  read -r layer layer_size < <(oci_blob "$layout" "$layout/layer.tar.gz")

  cat >"$layout/config.json" <<EOF
{"created":"1970-01-01T00:00:00Z","architecture":"$arch","os":"linux","config":$config,"rootfs":{"type":"layers","diff_ids":["$diff_id"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"podctl scripts/lab.sh (rev $IMAGE_REV)"}]}
EOF
  read -r cfg cfg_size < <(oci_blob "$layout" "$layout/config.json")

  cat >"$layout/manifest.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"$cfg","size":$cfg_size},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"$layer","size":$layer_size}]}
EOF
  read -r man man_size < <(oci_blob "$layout" "$layout/manifest.json")

  for tag in "$@"; do
    entries+="${entries:+,}{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"$man\",\"size\":$man_size,\"platform\":{\"architecture\":\"$arch\",\"os\":\"linux\"},\"annotations\":{\"org.opencontainers.image.ref.name\":\"$tag\"}}"
  done
  echo "{\"schemaVersion\":2,\"manifests\":[$entries]}" >"$layout/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
  echo "$man" >"$layout/.digest"
}

build_busybox() {
  local layout=$IMAGES_DIR/busybox stamp root a
  stamp="rev=$IMAGE_REV busybox=$(dpkg-query -W -f='${Version}' busybox-static)"
  if [[ -f $layout/.stamp && $(<"$layout/.stamp") == "$stamp" ]]; then return 0; fi
  log "building image $REGISTRY/$BUSYBOX_REPO:{${BUSYBOX_TAGS[*]}}"
  root=$(mktemp -d "$IMAGES_DIR/rootfs.XXXXXX")
  chmod 755 "$root" # becomes the container's "/" (mktemp makes it 0700)
  mkdir -p "$root"/{bin,etc,tmp,root,proc,sys,dev,var,usr/bin}
  chmod 1777 "$root/tmp"
  chmod 700 "$root/root"
  install -m 755 /bin/busybox "$root/bin/busybox"
  # Same result as `busybox --install -s`, but every applet in /bin, relative links.
  for a in $(/bin/busybox --list); do
    [[ $a == busybox || -e $root/bin/$a ]] || ln -s busybox "$root/bin/$a"
  done
  ln -s ../../bin/env "$root/usr/bin/env" # for '#!/usr/bin/env' scripts
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$root/etc/group"
  oci_build "$layout" "$root" \
    '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["sh"],"WorkingDir":"/","Labels":{"org.opencontainers.image.title":"podctl-lab busybox"}}' \
    "${BUSYBOX_TAGS[@]}"
  rm -rf "$root"
  echo "$stamp" >"$layout/.stamp"
}

build_pause() {
  local layout=$IMAGES_DIR/pause stamp root src=$SCRIPT_DIR/lab/pause.c
  [[ -f $src ]] || die "missing $src"
  stamp="rev=$IMAGE_REV src=$(sha256sum "$src" | cut -d' ' -f1) gcc=$(dpkg-query -W -f='${Version}' gcc) libc=$(dpkg-query -W -f='${Version}' libc6-dev)"
  if [[ -f $layout/.stamp && $(<"$layout/.stamp") == "$stamp" ]]; then return 0; fi
  log "building image $PAUSE_IMAGE (static gcc build of scripts/lab/pause.c)"
  root=$(mktemp -d "$IMAGES_DIR/rootfs.XXXXXX")
  chmod 755 "$root" # becomes the container's "/" (mktemp makes it 0700)
  # -ffile-prefix-map/-Wl,--build-id=none: the binary (and so the digest) does not depend on the checkout path.
  gcc -static -Os -s -Wall -ffile-prefix-map="$SCRIPT_DIR"=. -Wl,--build-id=none -o "$root/pause" "$src"
  chmod 755 "$root/pause"
  oci_build "$layout" "$root" \
    '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Entrypoint":["/pause"],"WorkingDir":"/","Labels":{"org.opencontainers.image.title":"podctl-lab pause"}}' \
    "$PAUSE_TAG"
  rm -rf "$root"
  echo "$stamp" >"$layout/.stamp"
}

# build_critools_images: one tiny one-file image per name in CRITOOLS_IMAGES (a file naming it, so
# each has a digest of its own), for the pull specs of cri-tools' e2e suite.
build_critools_images() {
  local name layout stamp root
  for name in "${CRITOOLS_IMAGES[@]}"; do
    layout=$IMAGES_DIR/cri-tools-$name
    stamp="rev=$IMAGE_REV cri-tools=$name"
    if [[ -f $layout/.stamp && $(<"$layout/.stamp") == "$stamp" ]]; then continue; fi
    log "building image $REGISTRY/$CRITOOLS_PREFIX/$name:latest"
    root=$(mktemp -d "$IMAGES_DIR/rootfs.XXXXXX")
    chmod 755 "$root"
    printf 'podctl lab stand-in for gcr.io/%s/%s\n' "$CRITOOLS_PREFIX" "$name" >"$root/$name"
    oci_build "$layout" "$root" \
      "{\"Labels\":{\"org.opencontainers.image.title\":\"podctl-lab $CRITOOLS_PREFIX/$name\"}}" latest
    rm -rf "$root"
    echo "$stamp" >"$layout/.stamp"
  done
}

# push_image NAME REPO TAG...: copy the OCI layout to the registry where the tag is missing or stale.
push_image() {
  local name=$1 repo=$2 tag want have
  shift 2
  want=$(<"$IMAGES_DIR/$name/.digest")
  for tag in "$@"; do
    have=$(registry_digest "$repo" "$tag")
    [[ $have == "$want" ]] && continue
    log "pushing $REGISTRY/$repo:$tag"
    skopeo --insecure-policy copy -q --dest-tls-verify=false \
      "oci:$IMAGES_DIR/$name:$tag" "docker://$REGISTRY/$repo:$tag" >&2
    have=$(registry_digest "$repo" "$tag")
    [[ -n $have ]] || die "push of $REGISTRY/$repo:$tag did not land"
    [[ $have == "$want" ]] || log "note: registry digest $have differs from built $want"
  done
}

ensure_images() {
  mkdir -p "$IMAGES_DIR"
  build_busybox
  build_pause
  push_image busybox "$BUSYBOX_REPO" "${BUSYBOX_TAGS[@]}"
  push_image pause "$PAUSE_REPO" "$PAUSE_TAG"
  build_critools_images
  local name
  for name in "${CRITOOLS_IMAGES[@]}"; do
    push_image "cri-tools-$name" "$CRITOOLS_PREFIX/$name" latest
  done
  [[ $(curl -sf -m 5 "$REG_URL/v2/_catalog") == *"\"$PAUSE_REPO\""* ]] || die "registry catalog lacks $PAUSE_REPO"
  push_auth_busybox
}

# ---------------------------------------------------------------- step 3: containerd
# overlayfs is the default snapshotter; some kernels/filesystems (e.g. overlay on
# overlay) refuse it, then we use "native" (plain copies: slower, always works).
detect_snapshotter() {
  local cache=$LAB_VAR/snapshotter t
  if [[ -s $cache ]]; then
    cat "$cache"
    return 0
  fi
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
  "name": "podctl-lab",
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

containerd_config() {
  local sn=$1 h
  cat <<EOF
# generated by podctl scripts/lab.sh -- private containerd for the podctl lab
version = 2
root = "$CTRD_ROOT"
state = "$CTRD_STATE"
oom_score = 0
# snapshotters that cannot work here and only log noise
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "$CTRD_SOCK"
  uid = 0
  gid = 0

[ttrpc]
  address = "$CTRD_TTRPC"

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$LAB_VAR/opt"

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    # this VM forbids negative oom_score_adj
    restrict_oom_score_adj = true
    # pod netns bind mounts under our state dir, not /var/run/netns
    netns_mounts_under_state_dir = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "$sn"
      default_runtime_name = "runc"
EOF
  for h in runc "$RUNTIME_HANDLER"; do
    cat <<EOF

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.$h]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.$h.options]
          # private runc state dir (default would be /run/containerd/runc)
          Root = "$RUNC_ROOT"
          SystemdCgroup = false
EOF
  done
  cat <<EOF

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$CNI_BIN_DIR"
      conf_dir = "$CNI_CONF_DIR"
      max_conf_num = 1

    [plugins."io.containerd.grpc.v1.cri".registry.mirrors."$REGISTRY"]
      endpoint = ["http://$REGISTRY"]

    [plugins."io.containerd.grpc.v1.cri".registry.mirrors."$AUTH_REGISTRY"]
      endpoint = ["http://$AUTH_REGISTRY"]
EOF
}

ensure_containerd() {
  mkdir -p "$CTRD_ROOT" "$CTRD_STATE" "$RUNC_ROOT" "$CNI_CONF_DIR" "$CNI_IPAM_DIR" "$LAB_VAR/opt" "$LAB_LOG" "$LOG_ROOT"
  local sn changed=0 pid
  sn=$(detect_snapshotter)
  cni_conflist | write_if_changed "$CNI_CONF_DIR/10-podctl-lab.conflist" || true # CRI watches the dir
  containerd_config "$sn" | write_if_changed "$CTRD_CONFIG" && changed=1

  # The bridge plugin turns on ip_forward; remember the host's value so `down` can restore it.
  [[ -f $LAB_RUN/ip_forward.orig ]] || cat /proc/sys/net/ipv4/ip_forward >"$LAB_RUN/ip_forward.orig"

  if pid=$(daemon_pid "$CTRD_PIDFILE" containerd "$CTRD_CONFIG"); then
    if ((changed)); then
      log "containerd config changed; restarting containerd (pid $pid; running pods keep running)"
      stop_pid "$pid" 20
    elif containerd_ok; then
      log "containerd already running (pid $pid, snapshotter $sn)"
      return 0
    else
      log "containerd (pid $pid) does not answer; restarting it"
      stop_pid "$pid" 20
    fi
  fi

  log "starting containerd (snapshotter $sn, log: $CTRD_LOGFILE)"
  stat -c %s "$CTRD_LOGFILE" 2>/dev/null >"$LAB_RUN/containerd.log.offset" || echo 0 >"$LAB_RUN/containerd.log.offset"
  start_daemon "$CTRD_PIDFILE" "$CTRD_LOGFILE" /usr/bin/containerd --config "$CTRD_CONFIG"
  local i
  for ((i = 0; i < 300; i++)); do
    if containerd_ok; then break; fi
    if ! daemon_pid "$CTRD_PIDFILE" containerd "$CTRD_CONFIG" >/dev/null && ((i > 10)); then
      tail -n 30 "$CTRD_LOGFILE" >&2 || true
      die "containerd exited at start"
    fi
    sleep 0.1
  done
  containerd_ok || { tail -n 30 "$CTRD_LOGFILE" >&2; die "containerd did not answer on $CTRD_SOCK within 30s"; }
  if ! ctr_ plugins ls 2>/dev/null | awk '$2 == "cri" { print $NF }' | grep -qx ok; then
    tail -n 30 "$CTRD_LOGFILE" >&2 || true
    die "containerd's CRI plugin did not load"
  fi
}

# Errors the CRI plugin logs when it cannot use our CNI config (since our last start).
cni_errors() {
  local off=0
  [[ -s $LAB_RUN/containerd.log.offset ]] && off=$(<"$LAB_RUN/containerd.log.offset")
  tail -c +"$((off + 1))" "$CTRD_LOGFILE" 2>/dev/null |
    grep -iE 'failed to load cni|cni config load failed|no network config found|cni plugin not initialized' || true
}

# ---------------------------------------------------------------- step 4: pre-pull
# ctr_pull NS REF: pull REF into namespace NS unless it already has the registry's digest.
ctr_pull() {
  local ns=$1 ref=$2 repo tag want have
  repo=${ref#"$REGISTRY/"}
  tag=${repo##*:}
  repo=${repo%:*}
  want=$(registry_digest "$repo" "$tag")
  have=$(ctr_ -n "$ns" images ls "name==$ref" 2>/dev/null | awk 'NR > 1 { print $3 }')
  [[ -n $want && $have == "$want" ]] && return 0
  log "pulling $ref into containerd namespace $ns"
  ctr_ -n "$ns" images pull --plain-http --snapshotter "$(detect_snapshotter)" "$ref" >/dev/null
}

# ---------------------------------------------------------------- step 5: env file
write_env() {
  write_if_changed "$ENV_FILE" <<EOF || true
PODCTL_LAB_ENDPOINT=$ENDPOINT
PODCTL_LAB_REGISTRY=$REGISTRY
PODCTL_LAB_BUSYBOX=$BUSYBOX_IMAGE
PODCTL_LAB_AUTH_REGISTRY=$AUTH_REGISTRY
PODCTL_LAB_AUTH_BUSYBOX=$AUTH_BUSYBOX_IMAGE
PODCTL_LAB_AUTH_USER=$AUTH_REG_USER
PODCTL_LAB_AUTH_PASSWORD=$(<"$AUTH_REG_PASSWORD_FILE")
PODCTL_LAB_PAUSE=$PAUSE_IMAGE
PODCTL_LAB_CRITOOLS_IMAGES=$REGISTRY/$CRITOOLS_PREFIX
PODCTL_LAB_LOG_ROOT=$LOG_ROOT
PODCTL_LAB_RUNTIME_HANDLER=$RUNTIME_HANDLER
PODCTL_LAB_POD_CIDR=$POD_CIDR
PODCTL_LAB_CONTAINERD_LOG=$CTRD_LOGFILE
PODCTL_LAB_SNAPSHOTTER=$(detect_snapshotter)
EOF
}

# ---------------------------------------------------------------- commands
cmd_up() {
  local t0=$SECONDS
  lock
  install_packages
  mkdir -p "$LAB_VAR" "$LAB_LOG"
  ensure_registry
  ensure_auth_registry
  ensure_images
  ensure_containerd
  ctr_pull k8s.io "$PAUSE_IMAGE"
  local errs
  errs=$(cni_errors)
  [[ -z $errs ]] || die "containerd reports CNI errors (see $CTRD_LOGFILE): $errs"
  write_env
  log "lab is up in $((SECONDS - t0))s; env file: $ENV_FILE"
  echo "$ENDPOINT"
}

# Kill what our containerd runs (tasks in all namespaces) so no container outlives it.
stop_tasks() {
  local ns t i
  for ns in $(ctr_ namespaces ls -q 2>/dev/null); do
    for t in $(timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" tasks ls -q 2>/dev/null); do
      timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" tasks kill -a -s SIGKILL "$t" >/dev/null 2>&1 || true
    done
    for ((i = 0; i < 50; i++)); do
      timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" tasks ls 2>/dev/null | grep -q RUNNING || break
      sleep 0.1
    done
    for t in $(timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" tasks ls -q 2>/dev/null); do
      timeout 10 ctr --address "$CTRD_SOCK" -n "$ns" tasks delete -f "$t" >/dev/null 2>&1 || true
    done
  done
}

# Unmount everything mounted below our private dirs (rootfs overlays, sandbox shm, netns), deepest first.
unmount_lab() {
  local mp
  awk -v a="$LAB_RUN/" -v b="$LAB_VAR/" 'index($5, a) == 1 || index($5, b) == 1 { print $5 }' /proc/self/mountinfo |
    sort -r | while read -r mp; do
    mp=$(printf '%b' "$mp") # mountinfo escapes spaces as \040
    umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || log "could not unmount $mp"
  done
}

cmd_down() {
  lock
  local pid p
  if pid=$(daemon_pid "$CTRD_PIDFILE" containerd "$CTRD_CONFIG"); then
    if containerd_ok; then
      log "stopping containers of our containerd"
      stop_tasks
    fi
    log "stopping containerd (pid $pid)"
    stop_pid "$pid" 20
  else
    log "containerd: not running"
  fi
  for p in $(pids_of "containerd-shim*" "$CTRD_SOCK"); do
    log "stopping leftover shim (pid $p)"
    stop_pid "$p" 5
  done
  unmount_lab
  rm -f "$CTRD_PIDFILE" "$CTRD_SOCK" "$CTRD_TTRPC" "$ENV_FILE"

  if pid=$(daemon_pid "$REG_PIDFILE" docker-registry "$REG_CONFIG"); then
    log "stopping registry (pid $pid)"
    stop_pid "$pid" 10
  else
    log "registry: not running"
  fi
  rm -f "$REG_PIDFILE"
  if pid=$(daemon_pid "$AUTH_REG_PIDFILE" docker-registry "$AUTH_REG_CONFIG"); then
    log "stopping the login registry (pid $pid)"
    stop_pid "$pid" 10
  fi
  rm -f "$AUTH_REG_PIDFILE"

  if [[ -s $LAB_RUN/ip_forward.orig ]]; then
    local orig
    orig=$(<"$LAB_RUN/ip_forward.orig")
    if [[ $orig == [01] ]]; then echo "$orig" >/proc/sys/net/ipv4/ip_forward || true; fi
    rm -f "$LAB_RUN/ip_forward.orig"
  fi
  log "lab is down"
}

cmd_status() {
  local rc=0 pid n
  if pid=$(daemon_pid "$CTRD_PIDFILE" containerd "$CTRD_CONFIG") && containerd_ok; then
    echo "containerd: running (pid $pid) endpoint $ENDPOINT, $(ctr_ version 2>/dev/null | awk '/Server:/ { s = 1 } s && /Version:/ { print $2; exit }')"
    n=$(pids_of "containerd-shim*" "$CTRD_SOCK" | wc -l)
    echo "  shims: $n; k8s.io tasks: $(ctr_ -n k8s.io tasks ls -q 2>/dev/null | wc -l); k8s.io images: $(ctr_ -n k8s.io images ls -q 2>/dev/null | wc -l)"
    echo "  snapshotter: $(cat "$LAB_VAR/snapshotter" 2>/dev/null); log: $CTRD_LOGFILE"
    local errs
    errs=$(cni_errors)
    [[ -z $errs ]] || echo "  CNI errors in log: $errs"
  else
    echo "containerd: not running"
    rc=3
  fi
  if pid=$(daemon_pid "$REG_PIDFILE" docker-registry "$REG_CONFIG") && registry_ok; then
    echo "registry: running (pid $pid) on $REG_LISTEN, catalog $(curl -sf -m 5 "$REG_URL/v2/_catalog" | tr -d '\n')"
  elif registry_ok; then
    echo "registry: a registry that is not ours answers on $REG_LISTEN"
  else
    echo "registry: not running"
    rc=3
  fi
  if pid=$(daemon_pid "$AUTH_REG_PIDFILE" docker-registry "$AUTH_REG_CONFIG") && auth_registry_ok; then
    echo "login registry: running (pid $pid) on $AUTH_REG_LISTEN, user $AUTH_REG_USER (password in $ENV_FILE)"
  else
    echo "login registry: not running"
    rc=3
  fi
  if ip -br addr show dev "$CNI_BRIDGE" >/dev/null 2>&1; then
    echo "bridge: $(ip -br addr show dev "$CNI_BRIDGE" | tr -s ' ')"
  else
    echo "bridge: $CNI_BRIDGE not created yet (created by the first pod)"
  fi
  [[ -f $ENV_FILE ]] && echo "env file: $ENV_FILE" || echo "env file: none"
  return "$rc"
}

# Smoke test of the runtime below the CRI: pull + run busybox and pause with ctr
# (in a namespace of its own, so the CRI image list stays as `up` left it).
cmd_verify() {
  containerd_ok || die "containerd is not running; run: bash scripts/lab.sh up"
  local sn out id=podctl-lab-smoke-$$
  sn=$(detect_snapshotter)
  ctr_pull "$SMOKE_NS" "$BUSYBOX_IMAGE"
  ctr_pull "$SMOKE_NS" "$PAUSE_IMAGE"
  # shellcheck disable=SC2016 # expanded inside the container
  out=$(timeout 60 ctr --address "$CTRD_SOCK" -n "$SMOKE_NS" run --rm --snapshotter "$sn" --runc-root "$RUNC_ROOT" \
    "$BUSYBOX_IMAGE" "$id-bb" sh -c 'echo hi from $(busybox | head -n1 | cut -d" " -f1-2); cat /etc/passwd | wc -l')
  printf '%s\n' "$out" >&2
  [[ $out == "hi from BusyBox v"* ]] || die "busybox run failed"

  # pause: must keep running, then exit 0 on SIGTERM
  ctr_ -n "$SMOKE_NS" run -d --snapshotter "$sn" --runc-root "$RUNC_ROOT" "$PAUSE_IMAGE" "$id-pause" >/dev/null
  sleep 0.5
  ctr_ -n "$SMOKE_NS" tasks ls | grep -q "^$id-pause .*RUNNING" || die "pause did not keep running"
  ctr_ -n "$SMOKE_NS" tasks kill -s SIGTERM "$id-pause"
  local i
  for ((i = 0; i < 50; i++)); do
    ctr_ -n "$SMOKE_NS" tasks ls | grep -q "^$id-pause .*STOPPED" && break
    sleep 0.1
  done
  # ctr exits 0 here whatever the task's status, and only warns "exit with non-zero exit code N"
  out=$(ctr_ -n "$SMOKE_NS" tasks delete "$id-pause" 2>&1) || true
  ctr_ -n "$SMOKE_NS" containers delete "$id-pause" >/dev/null 2>&1 || true
  [[ $out != *"non-zero exit code"* ]] || die "pause did not exit 0 on SIGTERM: $out"

  local errs
  errs=$(cni_errors)
  [[ -z $errs ]] || die "CNI errors in $CTRD_LOGFILE: $errs"
  log "verify: OK (busybox runs, pause exits 0 on SIGTERM, no CNI errors logged)"
}

cmd_reset() {
  cmd_down
  unmount_lab
  log "wiping $LAB_VAR $LAB_RUN $LAB_LOG"
  rm -rf --one-file-system "$LAB_VAR" "$LAB_LOG"
  find "$LAB_RUN" -mindepth 1 -maxdepth 1 ! -name lock -exec rm -rf --one-file-system {} +
  ip link delete "$CNI_BRIDGE" 2>/dev/null || true
  log "lab state wiped"
}

usage() {
  sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

main() {
  case "${1:-}" in
    up | down | verify | reset) [[ $(id -u) -eq 0 ]] || die "must run as root" ;;
  esac
  case "${1:-}" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    verify) cmd_verify ;;
    reset) cmd_reset ;;
    *) usage ;;
  esac
}

main "$@"
