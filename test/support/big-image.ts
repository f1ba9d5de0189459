/**
 * A pull big enough to watch: two layers of random (incompressible) bytes, about 40 MB together
 * (the first also holds the static /bin/busybox, so a pod can run it: `run` pulls it too),
 * built as an OCI layout the way scripts/lab.sh builds its test images (one file per layer,
 * fixed owners and mtimes) and pushed to the lab registry with skopeo, once: a later call finds
 * the tag in the registry and builds nothing. Random data keeps gzip from shrinking it.
 */
import {spawnSync} from 'node:child_process'
import {createHash, randomBytes} from 'node:crypto'
import {chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {lab} from './lab.js'

export const BIG_IMAGE_REPO = 'podctl/progress-40m'
/** Bump when the image's shape changes, so the registry's old one is not taken for it. */
export const BIG_IMAGE_TAG = 'v2'
const LAYER_BYTES = [24 * 1024 * 1024, 16 * 1024 * 1024]

export interface BigImage {
  image: string
  /** Its layers as the registry serves them (compressed: what progress counts). */
  layers: Array<{digest: string; size: number}>
}

function run(command: string, args: string[], cwd?: string): string {
  const result = spawnSync(command, args, {cwd, encoding: 'utf8'})
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr || result.error}`)
  return result.stdout
}

function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex')
}

/** Moves `file` into the layout's blob store; its digest and size. */
function blob(layout: string, file: string): {digest: string; size: number} {
  const hex = sha256File(file)
  const {size} = statSync(file)
  renameSync(file, join(layout, 'blobs', 'sha256', hex))
  return {digest: `sha256:${hex}`, size}
}

function writeBlob(layout: string, name: string, text: string): {digest: string; size: number} {
  writeFileSync(join(layout, name), text)
  return blob(layout, join(layout, name))
}

async function registryManifest(registry: string): Promise<{layers: Array<{digest: string; size: number}>} | undefined> {
  const response = await fetch(`http://${registry}/v2/${BIG_IMAGE_REPO}/manifests/${BIG_IMAGE_TAG}`, {
    headers: {accept: 'application/vnd.oci.image.manifest.v1+json'},
  })
  if (!response.ok) return undefined
  return (await response.json()) as {layers: Array<{digest: string; size: number}>}
}

export async function ensureBigImage(): Promise<BigImage> {
  const {registry} = lab()
  const image = `${registry}/${BIG_IMAGE_REPO}:${BIG_IMAGE_TAG}`
  const present = await registryManifest(registry)
  if (present) return {image, layers: present.layers.map(({digest, size}) => ({digest, size}))}

  const dir = mkdtempSync(join(tmpdir(), 'podctl-big-image-'))
  try {
    const layout = join(dir, 'layout')
    mkdirSync(join(layout, 'blobs', 'sha256'), {recursive: true})
    const layers: Array<{digest: string; size: number}> = []
    const diffIds: string[] = []
    for (const [index, bytes] of LAYER_BYTES.entries()) {
      const root = join(dir, `root${index}`)
      mkdirSync(root)
      chmodSync(root, 0o755)
      writeFileSync(join(root, `random-${index}.bin`), randomBytes(bytes))
      if (index === 0) {
        mkdirSync(join(root, 'bin'), {mode: 0o755})
        copyFileSync('/bin/busybox', join(root, 'bin', 'busybox'))
        chmodSync(join(root, 'bin', 'busybox'), 0o755)
      }

      const tar = join(dir, `layer${index}.tar`)
      run('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', root, '-cf', tar, '.'])
      diffIds.push(`sha256:${sha256File(tar)}`)
      run('gzip', ['-n', '-1', tar])
      layers.push(blob(layout, `${tar}.gz`))
    }

    const arch = run('dpkg', ['--print-architecture']).trim()
    const config = writeBlob(
      layout,
      'config.json',
      JSON.stringify({
        architecture: arch,
        os: 'linux',
        config: {Cmd: ['/bin/busybox', 'sleep', '3600'], Labels: {'org.opencontainers.image.title': 'podctl e2e pull progress'}},
        rootfs: {type: 'layers', diff_ids: diffIds},
      }),
    )
    const manifest = writeBlob(
      layout,
      'manifest.json',
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: {mediaType: 'application/vnd.oci.image.config.v1+json', ...config},
        layers: layers.map((layer) => ({mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...layer})),
      }),
    )
    const entry = {
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      ...manifest,
      platform: {architecture: arch, os: 'linux'},
      annotations: {'org.opencontainers.image.ref.name': BIG_IMAGE_TAG},
    }
    writeFileSync(join(layout, 'index.json'), JSON.stringify({schemaVersion: 2, manifests: [entry]}))
    writeFileSync(join(layout, 'oci-layout'), JSON.stringify({imageLayoutVersion: '1.0.0'}))
    run('skopeo', ['--insecure-policy', 'copy', '-q', '--dest-tls-verify=false', `oci:${layout}:${BIG_IMAGE_TAG}`, `docker://${image}`])
    return {image, layers}
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}
