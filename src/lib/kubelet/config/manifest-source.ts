/**
 * `sync --watch -f PATH…`: a watched manifest source, as the kubelet's file source
 * (pkg/kubelet/config/file.go) watches its static pod directory. The manifest files of a directory
 * (not hidden, no backups, not recursive: manifest-entries.ts), and every file given itself, are
 * read; a change is noticed by inotify (fs.watch) at once, or by the rescan, every second where
 * inotify is not available and every 5 s beside it.
 *
 * A file is read only once it has stayed the same (size, mtime, inode) for SETTLE_MS and is still
 * the same after the read: an editor's save or a `cat > file` still writing is never acted on
 * half-written. Its content is compared by digest, so touching a file does nothing. A source that
 * cannot be read or trusted changes nothing: a watched path moved away, removed or unlistable, a
 * file or directory others may write or another user owns (anyone who can write it could run
 * anything as root), a file larger than `run -f` reads, an empty one, one that does not parse, a
 * link to nothing, a FIFO: each is named with its reason in `unreadable` (or the file's error),
 * and every path whose pods must be left as they are is in `kept`.
 */
import {type FSWatcher, statSync, watch} from 'node:fs'
import {stat} from 'node:fs/promises'
import {dirname, resolve} from 'node:path'

import {UsageError} from '../../errors.js'
import {Pause} from '../../util/concurrency.js'
import {type FileReading, type ManifestFile, ParsedFiles, type ReadingOptions, readManifestFiles} from './manifest-files.js'
import {type Listing, listWatched, readSettled, unsafeToRead} from './manifest-entries.js'

export {unsafeToRead} from './manifest-entries.js'

/** How long a file must stay unchanged before it is read. */
export const SETTLE_MS = 500
const RESCAN_WITH_INOTIFY_MS = 5000
const RESCAN_WITHOUT_INOTIFY_MS = 1000

export interface SourceUpdate {
  /** Every manifest file now read: its pods, or its error. */
  files: FileReading[]
  /** Paths that cannot be read or trusted now (a watched directory or file, or one file of it), each with why. */
  unreadable: Map<string, string>
  /** Files changed but not settled yet. */
  settling: Set<string>
  /**
   * Every path whose pods must be left as they are, whatever the files read say: the unreadable
   * ones (a watched directory among them: all its files' pods), the settling ones and the files
   * with an error. A pod goes only when its file is really gone from a directory that can be read.
   */
  kept: Set<string>
}

/** Whether a pod of `file` must be left as it is: its file, or the watched directory holding it, is kept. */
export function isKept(kept: ReadonlySet<string>, file: string): boolean {
  return kept.has(file) || kept.has(dirname(file))
}

export interface SourceOptions extends ReadingOptions {
  /** Each new state of the files (called once after the first scan, then on every change). */
  onUpdate: (update: SourceUpdate) => Promise<void>
  settleMs?: number
  /** Overrides the rescan period (tests). */
  rescanMs?: number
}

interface Seen {
  signature: string
  since: number
}

/** The paths as given, made absolute, each existing and safe to read: checked before anything runs. */
export async function checkWatchedPaths(paths: readonly string[]): Promise<string[]> {
  const absolute = paths.map((path) => resolve(path))
  for (const path of absolute) {
    if (path === resolve('-')) throw new UsageError('-f - (stdin) cannot be watched: give files or directories with --watch')
    const info = await stat(path).catch(() => undefined)
    if (!info) throw new UsageError(`-f ${path}: no such file or directory`)
    const unsafe = unsafeToRead(path, info)
    if (unsafe) throw new UsageError(`-f ${unsafe}`)
  }

  return absolute
}

export class ManifestSource {
  private readonly seen = new Map<string, Seen>()
  /** The settled text of each file, as last read. */
  private readonly texts = new Map<string, {signature: string; text: string}>()
  private readonly parsed = new ParsedFiles()
  /** fs.watch on each watched directory (or a watched file's directory), with the inode it watches. */
  private readonly watchers = new Map<string, {watcher: FSWatcher; ino: number}>()
  private inotify = true
  private lastSignatures = ''
  private readonly pausing = new Pause()
  private soon = false

  constructor(
    private readonly paths: readonly string[],
    private readonly options: SourceOptions,
  ) {}

  /** Scans until the signal aborts; the first update comes once every file found has settled. */
  async run(signal: AbortSignal): Promise<void> {
    this.watch()
    const rescanMs = this.options.rescanMs ?? (this.inotify ? RESCAN_WITH_INOTIFY_MS : RESCAN_WITHOUT_INOTIFY_MS)
    const settleMs = this.options.settleMs ?? SETTLE_MS
    try {
      while (!signal.aborted) {
        this.soon = false
        const pending = await this.scan(Date.now(), settleMs)
        this.watch()
        await this.pause(signal, pending ? settleMs : rescanMs)
      }
    } finally {
      for (const {watcher} of this.watchers.values()) watcher.close()
    }
  }

  /**
   * fs.watch on each directory watched (or holding a watched file), made again when the path names
   * a new directory (one moved away and another put in its place); inotify off when it fails.
   */
  private watch(): void {
    if (!this.inotify) return
    for (const path of this.paths) {
      // A file is watched through its directory: an editor's save replaces it by a rename.
      const directory = statSync(path, {throwIfNoEntry: false})?.isDirectory() ? path : dirname(path)
      const ino = statSync(directory, {throwIfNoEntry: false})?.ino
      const current = this.watchers.get(path)
      if (ino === undefined || current?.ino === ino) continue
      current?.watcher.close()
      try {
        const watcher = watch(directory, {persistent: false}, () => this.poke())
        watcher.on('error', () => {})
        this.watchers.set(path, {watcher, ino})
      } catch {
        this.inotify = false
      }
    }
  }

  private poke(): void {
    this.soon = true
    this.pausing.wake()
  }

  private async pause(signal: AbortSignal, ms: number): Promise<void> {
    if (!this.soon) await this.pausing.wait(ms, signal)
  }

  /** One look at every path; true while some file has not settled yet (look again after SETTLE_MS). */
  private async scan(now: number, settleMs: number): Promise<boolean> {
    const listing: Listing = {found: new Map(), unreadable: new Map()}
    for (const path of this.paths) await listWatched(path, listing)
    const {found, unreadable} = listing
    let unsettled = false
    for (const [path, signature] of found) if (!(await this.settled(path, signature, {now, settleMs, unreadable}))) unsettled = true
    // A file is forgotten once it is gone from a directory that can be read; one that cannot keeps what was known of its files.
    const gone = (path: string) => !found.has(path) && !isKept(new Set(unreadable.keys()), path)
    for (const path of this.seen.keys()) if (gone(path)) this.seen.delete(path)
    for (const path of this.texts.keys()) if (gone(path)) this.texts.delete(path)
    // The first update waits for every file: pods of a file still being written are not killed meanwhile.
    if (unsettled && this.lastSignatures === '') return true
    const settled = [...this.texts].filter(([path, {signature}]) => found.get(path) === signature && !unreadable.has(path))
    const files: ManifestFile[] = settled.map(([path, {text}]) => ({path, text}))
    // A file that changed and has not settled keeps its previous reading: its pods are left as they are.
    const settling = new Set([...found.keys()].filter((path) => !files.some((file) => file.path === path) && !unreadable.has(path)))
    const signatures = JSON.stringify([settled.map(([path, {signature}]) => [path, signature]), [...unreadable], [...settling]])
    if (signatures === this.lastSignatures) return unsettled
    this.lastSignatures = signatures
    const readings = await readManifestFiles(files, this.options, this.parsed)
    const broken = readings.filter((reading) => reading.error).map((reading) => reading.path)
    await this.options.onUpdate({files: readings, unreadable, settling, kept: new Set([...unreadable.keys(), ...settling, ...broken])})
    return unsettled
  }

  /** Whether the file has stayed `signature` for the settle time, its text read (or why not, in `unreadable`). */
  private async settled(path: string, signature: string, look: {now: number; settleMs: number; unreadable: Map<string, string>}) {
    const seen = this.seen.get(path)
    if (seen?.signature !== signature) {
      this.seen.set(path, {signature, since: look.now})
      return false
    }

    if (look.now - seen.since < look.settleMs) return false
    if (this.texts.get(path)?.signature === signature) return true
    const read = await readSettled(path, signature)
    if (read === 'changed') {
      // Written to since it was seen: it settles again from now.
      this.seen.set(path, {signature: '', since: look.now})
      return false
    }

    if ('why' in read) {
      look.unreadable.set(path, read.why)
      this.texts.delete(path)
    } else if (read.text !== '' || this.texts.has(path)) this.texts.set(path, {signature, text: read.text})
    // A new file still empty is left settling, unsaid: whatever made it may not have written it yet.
    return true
  }
}
