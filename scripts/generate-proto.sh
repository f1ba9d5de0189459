#!/usr/bin/env bash
# Regenerates proto/ from the CRI wire facts, then the TypeScript client from proto/ (the CRI's, and
# proto/containerd/, containerd's content service subset for pull progress, which is written by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/proto-from-wire.mjs "${1:-../shared/reference/cri-v1-wire.json}"
rm -rf src/generated
PATH="$PWD/node_modules/.bin:$PATH" buf generate --template buf.gen.runtime.yaml --path proto/runtime
PATH="$PWD/node_modules/.bin:$PATH" buf generate --template buf.gen.yaml --path proto/containerd
node scripts/protojson-schema-from-wire.mjs "${1:-../shared/reference/cri-v1-wire.json}"
