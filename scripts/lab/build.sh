# shellcheck shell=bash
# The runtimes Debian 12 does not package, and the reference crictl, built from their Go modules at
# pinned versions (sourced by scripts/lab.sh). Why these versions: docs/runtimes.md.
#
# Everything is cached under /var/cache/podctl-lab, never in a checkout: the module and build caches
# (GOPATH, GOCACHE) and one directory per binary and version, bin/NAME-VERSION/. A directory is
# complete or absent (built in NAME-VERSION.partial, then renamed), so a second `up` builds nothing,
# and an interrupted build starts again.

readonly BUILD_CACHE=/var/cache/podctl-lab
readonly CONTAINERD2_VERSION=v2.4.2
readonly CRIO_VERSION=v1.34.0
readonly CRICTL_VERSION=v1.37.0

readonly CONTAINERD2_DIR=$BUILD_CACHE/bin/containerd-$CONTAINERD2_VERSION
readonly CRIO_DIR=$BUILD_CACHE/bin/crio-$CRIO_VERSION
readonly CRICTL=$BUILD_CACHE/bin/crictl-$CRICTL_VERSION/crictl

# Debian's -dev packages CRI-O's cgo needs (gpgme for signatures, libseccomp), and gcc for pinns.
readonly CRIO_BUILD_PACKAGES=(gcc libc6-dev pkg-config libgpgme-dev libassuan-dev libgpg-error-dev libseccomp-dev)

go_env() {
  [[ -x /usr/local/go/bin/go && :$PATH: != *:/usr/local/go/bin:* ]] && PATH=$PATH:/usr/local/go/bin
  command -v go >/dev/null || die "no Go toolchain on PATH (Go 1.26 builds the lab's runtimes; see docs/runtimes.md)"
  export GOPATH=$BUILD_CACHE/go GOCACHE=$BUILD_CACHE/go-build GOFLAGS=-modcacherw GOTOOLCHAIN=local
}

# build_into DIR FILE... -- CMD...: unless DIR holds every FILE, run CMD (with $OUT set to a scratch
# dir) under DIR's lock, then move its result into place. Parallel `up`s of two runtimes wait for each other.
build_into() {
  local dir=$1 f complete=1
  shift
  local files=()
  while [[ $1 != -- ]]; do
    files+=("$1")
    shift
  done
  shift
  for f in "${files[@]}"; do [[ -x $dir/$f ]] || complete=0; done
  ((complete)) && return 0
  mkdir -p "$BUILD_CACHE/bin"
  (
    exec 7>"$dir.lock"
    flock -w 3600 7 || die "another build holds $dir.lock"
    for f in "${files[@]}"; do [[ -x $dir/$f ]] || complete=0; done
    ((complete)) && exit 0
    go_env
    local t0=$SECONDS
    OUT=$dir.partial
    rm -rf "$OUT"
    mkdir -p "$OUT"
    export OUT
    "$@" >&2 || die "building ${dir##*/} failed"
    for f in "${files[@]}"; do [[ -x $OUT/$f ]] || die "building ${dir##*/} made no $f"; done
    rm -rf "$dir"
    mv "$OUT" "$dir"
    log "built ${dir##*/} in $((SECONDS - t0))s"
  )
}

# containerd 2.x: pure Go (CGO off); the build tags leave out the snapshotters that need C libraries.
go_install_containerd2() {
  local m=github.com/containerd/containerd/v2 v=$CONTAINERD2_VERSION
  log "building containerd $v from the Go module proxy (a few minutes on 2 cores; cached in $CONTAINERD2_DIR)"
  CGO_ENABLED=0 GOBIN=$OUT go install -trimpath -tags "urfave_cli_no_docs no_btrfs no_devmapper no_zfs" \
    -ldflags "-s -w -X $m/version.Version=$v" "$m/cmd/containerd@$v" "$m/cmd/containerd-shim-runc-v2@$v" "$m/cmd/ctr@$v"
}

# CRI-O: cgo (gpgme, libseccomp). `go install crio@v` would stop at the proxy's missing version list
# (it looks for a deprecation notice), so the command is built inside the downloaded module, with
# its own go.mod and go.sum. pinns is the module's small C program.
go_build_crio() {
  local m=github.com/cri-o/cri-o v=$CRIO_VERSION dir
  log "building CRI-O $v and pinns from the Go module proxy (several minutes on 2 cores; cached in $CRIO_DIR)"
  dir=$(go mod download -json "$m@$v" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -d $dir ]] || die "the Go module proxy did not give $m@$v"
  (cd "$dir" && CGO_ENABLED=1 go build -trimpath \
    -tags "containers_image_openpgp containers_image_ostree_stub exclude_graphdriver_btrfs exclude_graphdriver_devicemapper seccomp" \
    -ldflags "-s -w" -o "$OUT/crio" ./cmd/crio)
  gcc -std=c99 -Os -Wall -Wextra -static -s -o "$OUT/pinns" "$dir"/pinns/src/*.c
}

# crictl: the version is set at link time (else `crictl --version` says "unknown").
go_install_crictl() {
  log "building crictl $CRICTL_VERSION from the Go module proxy (cached in ${CRICTL%/*})"
  GOBIN=$OUT go install -ldflags "-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" \
    "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION"
}

build_containerd2() { build_into "$CONTAINERD2_DIR" containerd containerd-shim-runc-v2 ctr -- go_install_containerd2; }
build_crio() { build_into "$CRIO_DIR" crio pinns -- go_build_crio; }
build_crictl() { build_into "${CRICTL%/*}" crictl -- go_install_crictl; }
