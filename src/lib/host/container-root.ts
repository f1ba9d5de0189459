/**
 * A container's files, reached from the host through its root (/proc/<pid>/root) without ever
 * letting the kernel follow a symlink: every path is walked one component at a time, each opened
 * with O_PATH|O_NOFOLLOW relative to the directory before it (through /proc/self/fd/<fd>/<name>, the
 * openat(2) of a runtime without one), and a symlink met on the way is read and its target walked
 * the same way from the container's root (an absolute target) or from its directory. So a path
 * means what it means to the container's own processes, its mounts included, and a symlink cannot
 * lead the host's root user to the host's files: one that climbs above the container's root is
 * refused (a `..` in a path the user gave stops at the root, as in the container).
 */
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  type Stats,
  symlinkSync,
  unlinkSync,
} from 'node:fs'

import {HostAccessError, NotFoundError, PodctlError} from '../errors.js'

/** O_PATH (Linux, every architecture Node runs on here): a handle on the inode itself, nothing read, no device opened. */
const O_PATH = 0o1000_0000
const PROBE = O_PATH | constants.O_NOFOLLOW
/** How many symlinks one lookup follows, as the kernel's MAXSYMLINKS. */
const MAX_SYMLINKS = 40

export type EntryKind = 'file' | 'directory' | 'symlink' | 'other'

/** An open handle on something in the container: valid until the root is closed or the entry is released. */
export interface RootEntry {
  fd: number
  kind: EntryKind
  stats: Stats
  /** Its path in the container, for messages. */
  path: string
}

interface Step {
  name: string
  /** The symlink whose target this component came from, for the refusal's words. */
  fromLink?: string
}

function kindOf(stats: Stats): EntryKind {
  if (stats.isFile()) return 'file'
  if (stats.isDirectory()) return 'directory'
  return stats.isSymbolicLink() ? 'symlink' : 'other'
}

/** The components of a path: no empty ones, no `.`. */
export function pathSteps(path: string, fromLink?: string): Step[] {
  return path
    .split('/')
    .filter((name) => name !== '' && name !== '.')
    .map((name) => ({name, ...(fromLink === undefined ? {} : {fromLink})}))
}

function joinPath(directory: string, name: string): string {
  return directory === '/' ? `/${name}` : `${directory}/${name}`
}

export class ContainerRoot {
  private readonly open = new Set<number>()

  private constructor(
    /** The container in messages: `main (1a2b3c4d5e6f)`. */
    readonly label: string,
    private readonly rootFd: number,
  ) {
    this.open.add(rootFd)
  }

  /** Opens a container's root (/proc/<pid>/root); close() releases it and everything opened under it. */
  static open(rootPath: string, label: string): ContainerRoot {
    try {
      return new ContainerRoot(label, openSync(rootPath, O_PATH | constants.O_DIRECTORY))
    } catch (error) {
      throw new HostAccessError(`cannot open the root of container ${label} (${rootPath}): ${(error as Error).message}; run podctl as root`)
    }
  }

  get root(): RootEntry {
    return {fd: this.rootFd, kind: 'directory', stats: fstatSync(this.rootFd), path: '/'}
  }

  /**
   * The entry at `path` (absolute in the container), symlinks on the way followed inside the root;
   * a symlink as the last component is followed too unless `followLast` is false.
   */
  lookup(path: string, {followLast = true}: {followLast?: boolean} = {}): RootEntry {
    const stack: RootEntry[] = [this.root]
    const pending = pathSteps(path)
    let links = 0
    try {
      while (pending.length > 0) {
        const step = pending.shift()!
        const here = stack.at(-1)!
        if (step.name === '..') {
          this.climb(stack, step)
          continue
        }

        if (here.kind !== 'directory') throw new NotFoundError(`${here.path} in container ${this.label} is not a directory`)
        const entry = this.child(here, step.name)
        if (entry === undefined) throw new NotFoundError(`${joinPath(here.path, step.name)} does not exist in container ${this.label}`)
        if (entry.kind === 'symlink' && (pending.length > 0 || followLast)) {
          if (++links > MAX_SYMLINKS) throw new HostAccessError(`too many levels of symlinks in ${path} in container ${this.label}`)
          const target = this.readLink(here, step.name)
          this.release(entry)
          if (target.startsWith('/')) while (stack.length > 1) this.release(stack.pop()!)
          pending.unshift(...pathSteps(target, entry.path))
          continue
        }

        stack.push(entry)
      }

      const found = stack.pop()!
      for (const entry of stack) this.release(entry)
      return found
    } catch (error) {
      for (const entry of stack) this.release(entry)
      throw error
    }
  }

  /** The directory that holds `path` (followed inside the root) and the last component's name ('' for "/"). */
  lookupParent(path: string): {directory: RootEntry; name: string} {
    const steps = pathSteps(path)
    const last = steps.pop()
    if (last === undefined || last.name === '..') {
      return {directory: this.lookup(path), name: ''}
    }

    const directory = this.lookup(steps.map((step) => step.name).join('/') || '/')
    if (directory.kind !== 'directory') {
      this.release(directory)
      throw new NotFoundError(`${directory.path} in container ${this.label} is not a directory`)
    }

    return {directory, name: last.name}
  }

  /** The entry `name` in `directory`, not followed; undefined when there is none. */
  child(directory: RootEntry, name: string): RootEntry | undefined {
    let fd: number
    try {
      fd = openSync(`/proc/self/fd/${directory.fd}/${name}`, PROBE)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return undefined
      throw this.failure(error, joinPath(directory.path, name))
    }

    this.open.add(fd)
    const stats = fstatSync(fd)
    return {fd, kind: kindOf(stats), stats, path: joinPath(directory.path, name)}
  }

  /** The names in a directory, sorted (as tar lists them, so archives come out the same each time). */
  list(directory: RootEntry): string[] {
    try {
      return readdirSync(`/proc/self/fd/${directory.fd}`).sort()
    } catch (error) {
      throw this.failure(error, directory.path)
    }
  }

  /** The target a symlink holds (never followed here). */
  readLink(directory: RootEntry, name: string): string {
    try {
      return readlinkSync(`/proc/self/fd/${directory.fd}/${name}`)
    } catch (error) {
      throw this.failure(error, joinPath(directory.path, name))
    }
  }

  /** A regular file opened for reading: the very inode the lookup found, nothing else. */
  openForReading(file: RootEntry): number {
    if (file.kind !== 'file') throw new HostAccessError(`${file.path} in container ${this.label} is not a regular file`)
    return this.track(() => openSync(`/proc/self/fd/${file.fd}`, constants.O_RDONLY), file.path)
  }

  /**
   * A new regular file `name` in `directory`, open for writing: whatever was there that is not a
   * directory (a file, a symlink) is unlinked first, as tar replaces it, and the new one is made
   * with O_EXCL|O_NOFOLLOW, so a symlink put there meanwhile is never written through.
   */
  createFile(directory: RootEntry, name: string, mode: number): number {
    const path = `/proc/self/fd/${directory.fd}/${name}`
    this.removeNonDirectory(directory, name)
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
    return this.track(() => openSync(path, flags, mode & 0o7777), joinPath(directory.path, name))
  }

  /** The directory `name` in `directory`, made when missing (a file or symlink in its place is replaced, as tar does). */
  ensureDirectory(directory: RootEntry, name: string, mode: number): RootEntry {
    const existing = this.child(directory, name)
    if (existing?.kind === 'directory') return existing
    if (existing) this.release(existing)
    this.removeNonDirectory(directory, name)
    try {
      mkdirSync(`/proc/self/fd/${directory.fd}/${name}`, {mode: mode & 0o7777})
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw this.failure(error, joinPath(directory.path, name))
    }

    const made = this.child(directory, name)
    if (made?.kind !== 'directory') {
      if (made) this.release(made)
      throw new HostAccessError(`${joinPath(directory.path, name)} in container ${this.label} changed while podctl made it; try again`)
    }

    return made
  }

  /** A symlink `name` → `target` in `directory` (replacing a file or symlink there); its target is never looked at. */
  createSymlink(directory: RootEntry, name: string, target: string): void {
    this.removeNonDirectory(directory, name)
    try {
      symlinkSync(target, `/proc/self/fd/${directory.fd}/${name}`)
    } catch (error) {
      throw this.failure(error, joinPath(directory.path, name))
    }
  }

  /**
   * A hard link `name` in `directory` to `fromName` in `fromDirectory` (replacing a file or symlink
   * there). link(2) never follows the last component, so a symlink put at `fromName` meanwhile is
   * linked itself, not what it points at.
   */
  createHardLink(fromDirectory: RootEntry, fromName: string, directory: RootEntry, name: string): void {
    this.removeNonDirectory(directory, name)
    try {
      linkSync(`/proc/self/fd/${fromDirectory.fd}/${fromName}`, `/proc/self/fd/${directory.fd}/${name}`)
    } catch (error) {
      throw this.failure(error, joinPath(directory.path, name))
    }
  }

  /** Closes an entry (or a descriptor podctl opened through this root). */
  release(entry: RootEntry | number): void {
    const fd = typeof entry === 'number' ? entry : entry.fd
    if (fd === this.rootFd || !this.open.delete(fd)) return
    closeSync(fd)
  }

  close(): void {
    for (const fd of this.open) closeSync(fd)
    this.open.clear()
  }

  [Symbol.dispose](): void {
    this.close()
  }

  /** `..`: back one directory; above the root only for a path the user gave (it stays at the root), never for a symlink's target. */
  private climb(stack: RootEntry[], step: Step): void {
    if (stack.length > 1) {
      this.release(stack.pop()!)
      return
    }

    if (step.fromLink !== undefined) {
      throw new HostAccessError(
        `${step.fromLink} in container ${this.label} is a symlink that leads out of the container's root; podctl does not follow it`,
      )
    }
  }

  private removeNonDirectory(directory: RootEntry, name: string): void {
    const existing = this.child(directory, name)
    if (!existing) return
    const {kind, path} = existing
    this.release(existing)
    if (kind === 'directory')
      throw new HostAccessError(`${path} in container ${this.label} is a directory; podctl cp does not replace it with a file`)
    try {
      unlinkSync(`/proc/self/fd/${directory.fd}/${name}`)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw this.failure(error, path)
    }
  }

  private track(open: () => number, path: string): number {
    try {
      const fd = open()
      this.open.add(fd)
      return fd
    } catch (error) {
      throw this.failure(error, path)
    }
  }

  private failure(error: unknown, path: string): PodctlError {
    if (error instanceof PodctlError) return error
    const {code, message} = error as NodeJS.ErrnoException
    if (code === 'ENOENT') return new NotFoundError(`${path} does not exist in container ${this.label}`)
    if (code === 'ENOTDIR') return new NotFoundError(`a directory on the way to ${path} in container ${this.label} is not a directory`)
    if (code === 'ELOOP')
      return new HostAccessError(`${path} in container ${this.label} changed into a symlink while podctl used it; try again`)
    return new HostAccessError(`${path} in container ${this.label}: ${message.replace(/, \w+ '\/proc\/self\/fd\/.*$/, '')}`)
  }
}
