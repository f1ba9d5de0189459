/**
 * `podctl cp`: files and directories copied between the host and a running container through the
 * container's root as the host sees it (/proc/<pid>/root), so it works on an image without a shell
 * or tar (kubectl cp and `crictl exec … tar` need both; cri-tools#677). Every path in the container
 * is walked by ContainerRoot, which never follows a symlink out of the container's root. What is
 * left matches what `kubectl cp` leaves: out of the container, files and directories owned by
 * podctl's user with the container's modes; into it, the local files' modes and owners (mapped into
 * the container's user namespace), as the container's root user untarring them would; symlinks are
 * copied as symlinks, not followed; devices, sockets and FIFOs are skipped and named.
 */
import {
  chownSync,
  closeSync,
  fchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  statSync,
  symlinkSync,
  writeSync,
} from 'node:fs'
import {basename, join} from 'node:path'

import type {CriClient} from '../cri/client.js'
import {HostAccessError, NotFoundError, UsageError} from '../errors.js'
import type {Container} from '../../generated/runtime/v1/api.js'
import {resolveContainer, resolvePodSandboxes} from '../node/resolve.js'
import {containerProcess, processLabel} from './container-process.js'
import {ContainerRoot, type RootEntry} from './container-root.js'
import {type CopyResult, emptyResult, type Owners} from './copy-result.js'
import {extractIntoRoot, tarFromRoot} from './copy-tar.js'
import {idOutside, readIdMap} from './proc.js'
import type {TarSink} from './tar-writer.js'

export type {CopyResult, Owners} from './copy-result.js'

const CHUNK = 1 << 20

/** One side of `cp`: a local path, a path in a container (`POD[/CONTAINER]:PATH`), or `-`: a tar stream on stdin or stdout. */
export type CopyEnd = {kind: 'local'; path: string} | {kind: 'container'; ref: string; path: string} | {kind: 'stream'}

/**
 * kubectl cp's reading of an argument: `POD:PATH` (or `POD/CONTAINER:PATH`) names a container's
 * file when the part before ":" is not empty and has no "/" beyond the container's; a path that
 * starts with "/" or "." is always local.
 */
export function parseCopyEnd(argument: string): CopyEnd {
  if (argument === '-') return {kind: 'stream'}
  const colon = argument.indexOf(':')
  if (colon <= 0 || argument.startsWith('/') || argument.startsWith('.')) return {kind: 'local', path: argument}
  const ref = argument.slice(0, colon)
  const path = argument.slice(colon + 1)
  if (ref.split('/').length > 2) return {kind: 'local', path: argument}
  if (path === '') throw new UsageError(`${argument}: no path after ":"; give POD[/CONTAINER]:PATH`)
  return {kind: 'container', ref, path}
}

function pump(from: number, to: number): number {
  const buffer = Buffer.alloc(CHUNK)
  let total = 0
  for (let read = readSync(from, buffer, 0, CHUNK, null); read > 0; read = readSync(from, buffer, 0, CHUNK, null)) {
    let written = 0
    while (written < read) written += writeSync(to, buffer, written, read - written)
    total += read
  }

  return total
}

/** Copies `entry` of the container to the local `destination` (which does not exist yet). */
function copyOut(root: ContainerRoot, entry: RootEntry, destination: string, result: CopyResult): void {
  if (entry.kind === 'file') {
    const source = root.openForReading(entry)
    const target = openSync(destination, 'w', entry.stats.mode & 0o7777)
    try {
      result.bytes += pump(source, target)
      result.files++
    } finally {
      closeSync(target)
      root.release(source)
    }
  } else if (entry.kind === 'directory') {
    mkdirSync(destination, {mode: entry.stats.mode & 0o7777})
    result.directories++
    for (const name of root.list(entry)) {
      const child = root.child(entry, name)
      if (!child) continue // gone meanwhile
      try {
        if (child.kind === 'symlink') {
          symlinkSync(root.readLink(entry, name), join(destination, name))
          result.symlinks++
        } else copyOut(root, child, join(destination, name), result)
      } finally {
        root.release(child)
      }
    }
  } else result.skipped.push(entry.path)
}

/** Copies the local `source` into `directory` of the container as `name`. */
function copyIn(root: ContainerRoot, source: string, directory: RootEntry, name: string, owners: Owners, result: CopyResult): void {
  const stats = lstatSync(source)
  const uid = idOutside(owners.uid, stats.uid) ?? stats.uid
  const gid = idOutside(owners.gid, stats.gid) ?? stats.gid
  if (stats.isSymbolicLink()) {
    root.createSymlink(directory, name, readlinkSync(source))
    result.symlinks++
  } else if (stats.isFile()) {
    const target = root.createFile(directory, name, stats.mode)
    const from = openSync(source, 'r')
    try {
      result.bytes += pump(from, target)
      fchownSync(target, uid, gid)
      result.files++
    } finally {
      closeSync(from)
      root.release(target)
    }
  } else if (stats.isDirectory()) {
    const made = root.ensureDirectory(directory, name, stats.mode)
    try {
      // An O_PATH handle cannot be fchown'ed: chown through its /proc/self/fd link, which names that very inode.
      chownSync(`/proc/self/fd/${made.fd}`, uid, gid)
      result.directories++
      for (const child of readdirSync(source).sort()) copyIn(root, join(source, child), made, child, owners, result)
    } finally {
      root.release(made)
    }
  } else result.skipped.push(source)
}

/** The running container a `cp` argument names: POD/CONTAINER, a pod's first running container, or a container ID prefix. */
async function containerOf(client: CriClient, ref: string, namespace?: string): Promise<Container> {
  if (ref.includes('/')) return resolveContainer(client, ref, {namespace})
  let sandboxes
  try {
    sandboxes = await resolvePodSandboxes(client, ref, {namespace})
  } catch (error) {
    if (error instanceof NotFoundError) return resolveContainer(client, ref, {namespace})
    throw error
  }

  const {containers} = await client.runtime('listContainers', {filter: {podSandboxId: sandboxes[0].id}})
  const running = containers
    .filter((container) => container.state === 'CONTAINER_RUNNING')
    .sort((a, b) => Number(BigInt(a.createdAt) - BigInt(b.createdAt)))
  if (running.length === 0) throw new NotFoundError(`pod ${ref} has no running container to copy with; give POD/CONTAINER`)
  return running[0]
}

function localExists(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}

/** The streams of `-`: the tar archive read for `cp - POD:DIR`, and where the archive of `cp POD:PATH -` goes. */
export interface CopyStreams {
  input: AsyncIterable<Uint8Array>
  output: TarSink
}

export interface CopyOptions {
  namespace?: string
  signal?: AbortSignal
  streams?: CopyStreams
}

/** A running container's root as the host sees it, and its id maps: what every copy goes through. Close the root. */
export async function openForCopy(
  client: CriClient,
  container: Container,
  signal?: AbortSignal,
): Promise<{root: ContainerRoot; owners: Owners}> {
  const target = await containerProcess(client, container, signal)
  const root = ContainerRoot.open(target.root, processLabel(target))
  return {root, owners: {uid: readIdMap(target.pid, 'uid'), gid: readIdMap(target.pid, 'gid')}}
}

function sides(from: string, to: string): {source: CopyEnd; destination: CopyEnd; remote: Extract<CopyEnd, {kind: 'container'}>} {
  const source = parseCopyEnd(from)
  const destination = parseCopyEnd(to)
  const remote = [source, destination].find((end) => end.kind === 'container')
  if (!remote || source.kind === destination.kind) {
    throw new UsageError('cp copies between a container and this host: give exactly one side as POD[/CONTAINER]:PATH')
  }

  if (!remote.path.startsWith('/')) throw new UsageError(`${remote.ref}:${remote.path}: the path in the container must be absolute`)
  return {source, destination, remote}
}

/** `podctl cp SOURCE DESTINATION`: exactly one side in a container; `-` on the other side for a tar stream. */
export async function copy(client: CriClient, from: string, to: string, options: CopyOptions = {}): Promise<CopyResult> {
  const {source, destination, remote} = sides(from, to)
  const container = await containerOf(client, remote.ref, options.namespace)
  const opened = await openForCopy(client, container, options.signal)
  using root = opened.root
  const {owners} = opened
  if (source.kind === 'stream' || destination.kind === 'stream') {
    if (!options.streams) throw new UsageError('cp -: no stream to read or write here')
    // Awaited before returning: `using` closes the root on return, and the stream needs it until it is done.
    const streamed =
      source.kind === 'stream'
        ? await extractIntoRoot(root, options.streams.input, remote.path, owners, container.id)
        : await tarFromRoot(root, remote.path, options.streams.output, owners, container.id)
    return streamed
  }

  if (source.kind === 'container') return copyFromRoot(root, source.path, to, container.id)
  return copyIntoRoot(root, from, remote.path, owners, container.id)
}

/** The container's `path` (followed inside its root) to the local `local`: into it when it is a directory. */
export function copyFromRoot(root: ContainerRoot, path: string, local: string, containerId: string): CopyResult {
  const entry = root.lookup(path)
  const existing = localExists(local)
  const destination = existing?.isDirectory() ? join(local, basename(entry.path) || 'root') : local
  if (localExists(destination)?.isDirectory() && entry.kind === 'directory') {
    throw new UsageError(`${destination} exists already; podctl cp does not merge a directory into another`)
  }

  const result = emptyResult('out', containerId)
  copyOut(root, entry, destination, result)
  return result
}

/** The local `local` to the container's `path`: into it when it is a directory; owners mapped through the container's id maps. */
export function copyIntoRoot(root: ContainerRoot, local: string, path: string, owners: Owners, containerId: string): CopyResult {
  if (!localExists(local) && !lstatSafe(local)) throw new NotFoundError(`${local} does not exist on this host`)
  const result = emptyResult('in', containerId)
  const existing = destinationDirectory(root, path)
  if (existing?.kind === 'directory') {
    copyIn(root, local, existing, basename(local), owners, result)
    return result
  }

  const {directory, name} = root.lookupParent(path)
  if (name === '') throw new UsageError(`${path}: give the file's name in the container`)
  copyIn(root, local, directory, name, owners, result)
  return result
}

function lstatSafe(path: string): boolean {
  try {
    lstatSync(path)
    return true
  } catch {
    return false
  }
}

/**
 * The directory `path` names, when it names one (a symlink to a directory inside the root counts);
 * undefined when it names a file, a symlink to anything else or out of the root (replaced, never
 * written through), or nothing.
 */
function destinationDirectory(root: ContainerRoot, path: string): RootEntry | undefined {
  let entry: RootEntry
  try {
    entry = root.lookup(path)
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof HostAccessError) {
      // The last component missing, or a symlink there that leads out: the parent decides (lookupParent).
      return undefined
    }

    throw error
  }

  if (entry.kind === 'directory') return entry
  root.release(entry)
  return undefined
}
