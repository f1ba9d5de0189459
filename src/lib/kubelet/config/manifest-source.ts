/**
 * `sync --watch -f PATH…`: a watched manifest source, as the kubelet's file source
 * (pkg/kubelet/config/file.go) watches its static pod directory. Every .yaml/.yml/.json file of
 * a directory (not hidden, not recursive), and every file given itself, is read; a change is
 * noticed by inotify (fs.watch) at once, or by the rescan, every second where inotify is not
 * available and every 5 s beside it.
 *
 * A file is read only once it has stayed the same (size, mtime, inode) for SETTLE_MS: an editor's
 * save or a `cat > file` still writing is never acted on half-written. Its content is compared by
 * digest, so touching a file does nothing. Like any input root runs, a directory or file that
 * users other than its owner may write, or owned by another user, is refused with that reason:
 * anyone who can write it could run anything as root.
 */
import {type FSWatcher, statSync, watch} from 'node:fs'
import {readdir, readFile, stat} from 'node:fs/promises'
import {dirname, join, resolve} from 'node:path'

import {UsageError} from '../../errors.js'
import {Pause} from '../../util/concurrency.js'
import {fileSignature} from '../../util/file-signature.js'
import {type FileReading, type ManifestFile, type ReadingOptions, readManifestFiles} from './manifest-files.js'

/** How long a file must stay unchanged before it is read. */
export const SETTLE_MS = 500
const RESCAN_WITH_INOTIFY_MS = 5000
const RESCAN_WITHOUT_INOTIFY_MS = 1000
const MANIFEST_NAME = /^[^.].*\.(ya?ml|json)$/

export interface SourceUpdate {
  /** Every manifest file now found, read (or refused). */
  files: FileReading[]
  /** Watched paths and files that cannot be read now (missing, refused), and why: the pods of their files are left as they are. */
  unreadable: Map<string, string>
  /** Files changed but not settled yet: their pods are left as they are until they have. */
  settling: Set<string>
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

/** Why root must not read `path` (writable by others, or another user's), or undefined. */
export function unsafeToRead(path: string, info: {mode: number; uid: number}): string | undefined {
  const mode = (info.mode & 0o777).toString(8).padStart(4, '0')
  if (info.mode & 0o022) return `${path} is writable by users other than its owner (mode ${mode}); fix: chmod go-w ${path}`
  const me = process.getuid?.() ?? 0
  if (info.uid !== 0 && info.uid !== me) return `${path} belongs to uid ${info.uid}, not to root or to this user; fix: chown root ${path}`
  return undefined
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
  private readonly watchers: FSWatcher[] = []
  private lastSignatures = ''
  private readonly pausing = new Pause()
  private soon = false

  constructor(
    private readonly paths: readonly string[],
    private readonly options: SourceOptions,
  ) {}

  /** Scans until the signal aborts; the first update comes once every file found has settled. */
  async run(signal: AbortSignal): Promise<void> {
    const inotify = this.watch()
    const rescanMs = this.options.rescanMs ?? (inotify ? RESCAN_WITH_INOTIFY_MS : RESCAN_WITHOUT_INOTIFY_MS)
    const settleMs = this.options.settleMs ?? SETTLE_MS
    try {
      while (!signal.aborted) {
        this.soon = false
        const pending = await this.scan(Date.now(), settleMs)
        await this.pause(signal, pending ? settleMs : rescanMs)
      }
    } finally {
      for (const watcher of this.watchers) watcher.close()
    }
  }

  /** fs.watch on each directory watched (or holding a watched file); false when inotify is not there. */
  private watch(): boolean {
    try {
      for (const path of this.paths) {
        // A file is watched through its directory: an editor's save replaces it by a rename.
        const directory = statSync(path).isDirectory() ? path : dirname(path)
        const watcher = watch(directory, {persistent: false}, () => this.poke())
        watcher.on('error', () => {})
        this.watchers.push(watcher)
      }

      return true
    } catch {
      return false
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
    const unreadable = new Map<string, string>()
    const found = new Map<string, string>()
    for (const path of this.paths) await this.list(path, {found, unreadable})
    let unsettled = false
    for (const [path, signature] of found) {
      const seen = this.seen.get(path)
      if (seen?.signature !== signature) {
        this.seen.set(path, {signature, since: now})
        unsettled = true
        continue
      }

      if (now - seen.since < settleMs) {
        unsettled = true
        continue
      }

      if (this.texts.get(path)?.signature === signature) continue
      const text = await readFile(path, 'utf8').catch(() => undefined)
      if (text === undefined) unreadable.set(path, `${path}: cannot be read`)
      else this.texts.set(path, {signature, text})
    }

    for (const path of this.seen.keys()) if (!found.has(path)) this.seen.delete(path)
    for (const path of this.texts.keys()) if (!found.has(path)) this.texts.delete(path)
    // The first update waits for every file: pods of a file still being written are not killed meanwhile.
    if (unsettled && this.lastSignatures === '') return true
    const settled = [...this.texts].filter(([path, {signature}]) => found.get(path) === signature)
    const files: ManifestFile[] = settled.map(([path, {text}]) => ({path, text}))
    // A file that changed and has not settled keeps its previous reading: its pods are left as they are.
    const settling = new Set([...found.keys()].filter((path) => !files.some((file) => file.path === path) && !unreadable.has(path)))
    const signatures = JSON.stringify([settled.map(([path, {signature}]) => [path, signature]), [...unreadable], [...settling]])
    if (signatures === this.lastSignatures) return unsettled
    this.lastSignatures = signatures
    const readings = await readManifestFiles(files, this.options)
    await this.options.onUpdate({files: readings, unreadable, settling})
    return unsettled
  }

  /** The manifest files of one watched path, with their signatures; what cannot be read goes to `unreadable`. */
  private async list(path: string, into: {found: Map<string, string>; unreadable: Map<string, string>}): Promise<void> {
    const info = await stat(path).catch(() => undefined)
    if (!info) {
      into.unreadable.set(path, `${path}: no such file or directory`)
      return
    }

    const unsafe = unsafeToRead(path, info)
    if (unsafe) {
      into.unreadable.set(path, unsafe)
      return
    }

    if (!info.isDirectory()) {
      into.found.set(path, fileSignature(info))
      return
    }

    const names = await readdir(path).catch(() => [])
    for (const name of names.filter((candidate) => MANIFEST_NAME.test(candidate)).sort()) {
      const file = join(path, name)
      const entry = await stat(file).catch(() => undefined)
      if (!entry?.isFile()) continue
      const refused = unsafeToRead(file, entry)
      if (refused) into.unreadable.set(file, refused)
      else into.found.set(file, fileSignature(entry))
    }
  }
}
