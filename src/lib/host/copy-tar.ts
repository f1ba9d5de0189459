/**
 * `podctl cp` with `-`: a tar stream of a container's file or directory, and a tar stream extracted
 * into a container's directory, as `docker cp` reads and writes them — through the container's root
 * from the host (ContainerRoot), so the image needs no tar. Out: entries named from the path's last
 * component, with the container's modes, mtimes and owners (as its user namespace sees them).
 * In: the archive's modes, mtimes and owners (mapped out of the container's user namespace), as the
 * container's root running `tar -x` leaves them. An entry is written only under the directory: an
 * absolute name, a `..`, or a path through a symlink (one in the archive or one already there) is
 * refused, naming the entry. Nothing written before a failure is removed; the error says what it was.
 */
import {chmodSync, chownSync, fchmodSync, fchownSync, futimesSync, lchownSync, lutimesSync, readSync, utimesSync, writeSync} from 'node:fs'
import {basename} from 'node:path'

import {HostAccessError, NotFoundError, PodctlError} from '../errors.js'
import {ContainerRoot, type RootEntry} from './container-root.js'
import {copiedWhat, type CopyResult, emptyResult, type Owners} from './copy-result.js'
import {idInside, idOutside} from './proc.js'
import type {TarHeader} from './tar-format.js'
import {type TarEntry, TarReader} from './tar-reader.js'
import {type TarSink, TarWriter} from './tar-writer.js'

/** The kernel's overflow id: what a process in the container sees for a host id its namespace does not map. */
const OVERFLOW_ID = 65_534

function headerOf(entry: RootEntry, name: string, owners: Owners): Omit<TarHeader, 'type' | 'size' | 'linkname'> {
  const {stats} = entry
  return {
    name,
    mode: stats.mode & 0o7777,
    uid: idInside(owners.uid, stats.uid) ?? OVERFLOW_ID,
    gid: idInside(owners.gid, stats.gid) ?? OVERFLOW_ID,
    mtime: Math.floor(stats.mtimeMs / 1000),
  }
}

async function archiveEntry(root: ContainerRoot, entry: RootEntry, name: string, writer: TarWriter, owners: Owners, result: CopyResult) {
  const header = headerOf(entry, name, owners)
  if (entry.kind === 'file') {
    const fd = root.openForReading(entry)
    try {
      result.bytes += await writer.file({...header, size: entry.stats.size}, (buffer, length) => readSync(fd, buffer, 0, length, null))
      result.files++
    } finally {
      root.release(fd)
    }
  } else if (entry.kind === 'directory') {
    await writer.directory(header)
    result.directories++
    for (const childName of root.list(entry)) {
      const child = root.child(entry, childName)
      if (!child) continue // gone meanwhile
      try {
        if (child.kind === 'symlink') {
          await writer.symlink({...headerOf(child, `${name}/${childName}`, owners), linkname: root.readLink(entry, childName)})
          result.symlinks++
        } else await archiveEntry(root, child, `${name}/${childName}`, writer, owners, result)
      } finally {
        root.release(child)
      }
    }
  } else result.skipped.push(entry.path)
}

/** The container's `path` (followed inside its root) as a tar archive written to `sink`, named by its last component. */
export async function tarFromRoot(
  root: ContainerRoot,
  path: string,
  sink: TarSink,
  owners: Owners,
  containerId: string,
): Promise<CopyResult> {
  const entry = root.lookup(path)
  const result = emptyResult('out', containerId)
  const writer = new TarWriter(sink)
  try {
    await archiveEntry(root, entry, basename(entry.path) || 'root', writer, owners, result)
  } finally {
    root.release(entry)
  }

  await writer.end()
  return result
}

/** The components of an entry's name under the directory; an absolute name or a `..` is refused. */
export function entrySteps(name: string, entry = name): string[] {
  if (name.includes('\0')) throw new HostAccessError(`tar entry ${JSON.stringify(entry)}: a name with a NUL byte; podctl cp refuses it`)
  if (name.startsWith('/'))
    throw new HostAccessError(`tar entry ${entry}: an absolute name; podctl cp extracts names relative to the directory only`)
  const steps = name.split('/').filter((step) => step !== '' && step !== '.')
  if (steps.includes('..')) throw new HostAccessError(`tar entry ${entry}: ".." would lead out of the directory; podctl cp refuses it`)
  return steps
}

/** Extraction's state: the directory, what was done, and the directories whose modes and mtimes come last. */
interface Extraction {
  root: ContainerRoot
  top: RootEntry
  owners: Owners
  result: CopyResult
  /** Directories by their steps joined: their mode and mtime are set once their contents are in, as tar does. */
  directories: Map<string, TarHeader>
  /** A file being written, for the failure's message. */
  incomplete?: string
}

/** A new handle on the directory itself (released like any entry, unlike `top`). */
function reopen(root: ContainerRoot, directory: RootEntry): RootEntry {
  const again = root.child(directory, '.')
  if (again?.kind !== 'directory')
    throw new HostAccessError(`${directory.path} in container ${root.label} changed while podctl used it; try again`)
  return {...again, path: directory.path}
}

/**
 * The directory `steps` name under the top one, walked one real directory at a time: a missing one
 * is made (when `create`), a symlink or a file on the way is refused — never followed out of it.
 */
function walk(state: Extraction, steps: readonly string[], entryName: string, create: boolean): RootEntry | undefined {
  const {root} = state
  let here = reopen(root, state.top)
  try {
    for (const name of steps) {
      let next = root.child(here, name)
      if (next === undefined) {
        if (!create) {
          root.release(here)
          return undefined
        }

        next = root.ensureDirectory(here, name, 0o755)
      } else if (next.kind !== 'directory') {
        const {kind, path} = next
        root.release(next)
        const what = kind === 'symlink' ? 'a symlink' : 'not a directory'
        throw new HostAccessError(
          `tar entry ${entryName}: ${path} in container ${root.label} is ${what}; podctl cp extracts nothing through it`,
        )
      }

      root.release(here)
      here = next
    }

    return here
  } catch (error) {
    root.release(here)
    throw error
  }
}

function ownerOutside(state: Extraction, header: TarHeader): {uid: number; gid: number} {
  return {uid: idOutside(state.owners.uid, header.uid) ?? header.uid, gid: idOutside(state.owners.gid, header.gid) ?? header.gid}
}

async function extractFile(state: Extraction, parent: RootEntry, name: string, entry: TarEntry): Promise<void> {
  const {root, result} = state
  const {header} = entry
  const fd = root.createFile(parent, name, header.mode)
  let written = 0
  state.incomplete = `${parent.path === '/' ? '' : parent.path}/${name} (0 of ${header.size} bytes)`
  try {
    for await (const chunk of entry.body()) {
      for (let offset = 0; offset < chunk.length;) offset += writeSync(fd, chunk, offset, chunk.length - offset)
      written += chunk.length
      state.incomplete = state.incomplete.replace(/\(\d+ of/, `(${written} of`)
    }

    const {uid, gid} = ownerOutside(state, header)
    fchownSync(fd, uid, gid)
    fchmodSync(fd, header.mode) // after chown, which clears setuid and setgid
    futimesSync(fd, header.mtime, header.mtime)
    state.incomplete = undefined
    result.files++
    result.bytes += written
  } finally {
    root.release(fd)
  }
}

/** A hard link to an entry extracted before, found the same way (never through a symlink); its name must be a file. */
function extractHardLink(state: Extraction, parent: RootEntry, name: string, header: TarHeader): void {
  const {root} = state
  const steps = entrySteps(header.linkname, `${header.name} (a hard link to ${header.linkname})`)
  const targetName = steps.pop()
  const targetParent = targetName === undefined ? undefined : walk(state, steps, header.name, false)
  try {
    const target = targetParent && root.child(targetParent, targetName!)
    const kind = target?.kind
    if (target) root.release(target)
    if (kind !== 'file')
      throw new HostAccessError(`tar entry ${header.name}: a hard link to ${header.linkname}, which is not a file extracted before`)
    root.createHardLink(targetParent!, targetName!, parent, name)
    state.result.files++
  } finally {
    if (targetParent) root.release(targetParent)
  }
}

async function extractEntry(state: Extraction, entry: TarEntry): Promise<void> {
  const {root, result} = state
  const {header} = entry
  const steps = entrySteps(header.name)
  const name = steps.pop()
  if (name === undefined) return // "./": the directory itself, which stays as it is
  if (header.type === 'other') {
    result.skipped.push(header.name)
    return
  }

  const parent = walk(state, steps, header.name, true)!
  try {
    switch (header.type) {
      case 'file': {
        await extractFile(state, parent, name, entry)
        break
      }

      case 'hardlink': {
        extractHardLink(state, parent, name, header)
        break
      }

      case 'symlink': {
        root.createSymlink(parent, name, header.linkname)
        const path = `/proc/self/fd/${parent.fd}/${name}`
        const {uid, gid} = ownerOutside(state, header)
        lchownSync(path, uid, gid)
        lutimesSync(path, header.mtime, header.mtime)
        result.symlinks++

        break
      }

      default: {
        const made = root.ensureDirectory(parent, name, 0o700)
        const {uid, gid} = ownerOutside(state, header)
        chownSync(`/proc/self/fd/${made.fd}`, uid, gid)
        root.release(made)
        state.directories.set([...steps, name].join('/'), header)
        result.directories++
      }
    }
  } finally {
    root.release(parent)
  }
}

/** Directories' modes and mtimes, deepest first so setting one does not change its parent's mtime afterwards. */
function finishDirectories(state: Extraction): void {
  const paths = [...state.directories.keys()].sort((a, b) => b.split('/').length - a.split('/').length)
  for (const path of paths) {
    const header = state.directories.get(path)!
    const directory = walk(state, path.split('/'), header.name, false)
    if (!directory) continue
    try {
      chmodSync(`/proc/self/fd/${directory.fd}`, header.mode)
      utimesSync(`/proc/self/fd/${directory.fd}`, header.mtime, header.mtime)
    } finally {
      state.root.release(directory)
    }
  }
}

/** The failure in podctl's terms, ending with what was extracted before it (left in place) and the file it cut short. */
function withProgress(error: unknown, state: Extraction, entryName: string | undefined): unknown {
  const failure =
    error instanceof PodctlError
      ? error
      : new HostAccessError(`tar entry ${entryName ?? '?'}: ${(error as Error).message.replace(/, \w+ '\/proc\/self\/fd\/.*$/, '')}`)
  const cut = state.incomplete ? `; ${state.incomplete.replace(/ \(/, ' left incomplete (')}` : ''
  failure.message = `${failure.message}; extracted before it and left in place: ${copiedWhat(state.result)}${cut}`
  return failure
}

/** A tar archive read from `archive` extracted into the container's directory `path` (followed inside its root). */
export async function extractIntoRoot(
  root: ContainerRoot,
  archive: AsyncIterable<Uint8Array>,
  path: string,
  owners: Owners,
  containerId: string,
): Promise<CopyResult> {
  const top = root.lookup(path)
  if (top.kind !== 'directory') {
    root.release(top)
    throw new NotFoundError(`${top.path} in container ${root.label} is not a directory; a tar stream is extracted into a directory`)
  }

  const state: Extraction = {root, top, owners, result: emptyResult('in', containerId), directories: new Map()}
  const reader = new TarReader(archive)
  let current: string | undefined
  try {
    for (let entry = await reader.next(); entry; entry = await reader.next()) {
      current = entry.header.name
      await extractEntry(state, entry)
    }

    finishDirectories(state)
    return state.result
  } catch (error) {
    throw withProgress(error, state, current)
  } finally {
    root.release(top)
  }
}
