import {type FileHandle, open, stat} from 'node:fs/promises'
import type {Writable} from 'node:stream'
import {setTimeout as sleep} from 'node:timers/promises'

import {ExitCode, NotFoundError, PodctlError} from '../errors.js'
import {assembleLines, EntryPrinter, formatLine, type LogSelection, parseLogLine, selectLines} from './cri-log.js'

/** The log file exists but podctl may not read it (not root, another mount namespace, ...). */
export class LogUnreadableError extends PodctlError {
  constructor(message: string) {
    super('LogUnreadable', ExitCode.RUNTIME, message)
  }
}

const CHUNK_BYTES = 64 * 1024

/**
 * Reads a container log file from the node's filesystem as complete lines, and keeps reading
 * what is appended. When the runtime rotates the file (renames it and reopens the path, the
 * kubelet's way) or truncates it, the old file is drained first and the new one read from 0.
 */
export class LogFileReader {
  private offset = 0
  private remainder: Buffer = Buffer.alloc(0)

  private constructor(
    readonly path: string,
    private handle: FileHandle,
    private ino: number,
  ) {}

  static async open(path: string): Promise<LogFileReader> {
    try {
      const handle = await open(path, 'r')
      const info = await handle.stat()
      return new LogFileReader(path, handle, info.ino)
    } catch (error) {
      throw logFileError(error, path)
    }
  }

  /** Complete lines (without "\n") written since the last call. */
  async readLines(): Promise<string[]> {
    const lines = await this.drain()
    const info = await stat(this.path).catch(() => undefined) // missing for a moment while the runtime reopens it
    if (info && info.ino !== this.ino) {
      const leftover = this.takeRemainder()
      if (leftover !== undefined) lines.push(leftover)
      await this.handle.close().catch(() => {})
      try {
        this.handle = await open(this.path, 'r')
      } catch (error) {
        throw logFileError(error, this.path)
      }

      this.ino = (await this.handle.stat()).ino
      this.offset = 0
      lines.push(...(await this.drain()))
    } else if (info && info.size < this.offset) {
      this.offset = 0
      this.remainder = Buffer.alloc(0)
      lines.push(...(await this.drain()))
    }

    return lines
  }

  /** The unterminated last line, once nothing more will be written to it. */
  takeRemainder(): string | undefined {
    if (this.remainder.length === 0) return undefined
    const text = this.remainder.toString('utf8')
    this.remainder = Buffer.alloc(0)
    return text
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => {})
  }

  private async drain(): Promise<string[]> {
    const chunks: Buffer[] = [this.remainder]
    for (;;) {
      const buffer = Buffer.allocUnsafe(CHUNK_BYTES)
      const {bytesRead} = await this.handle.read(buffer, 0, CHUNK_BYTES, this.offset)
      if (bytesRead === 0) break
      this.offset += bytesRead
      chunks.push(buffer.subarray(0, bytesRead))
    }

    const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
    const end = data.lastIndexOf(10)
    // Decode up to the last "\n" in one go (a newline never falls inside a multi-byte character);
    // the rest waits for the next read.
    this.remainder = Buffer.from(data.subarray(end + 1))
    if (end < 0) return []
    const lines = data.toString('utf8', 0, end).split('\n')
    return lines
  }
}

function logFileError(error: unknown, path: string): PodctlError {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT') {
    return new NotFoundError(`log file ${path} does not exist: the runtime has not written it yet, or it was removed or rotated away`)
  }

  if (code === 'EACCES' || code === 'EPERM') {
    return new LogUnreadableError(`permission denied reading ${path}: logs are read from the node's filesystem, run podctl as root`)
  }

  return new LogUnreadableError(`cannot read ${path}: ${(error as Error).message}`)
}

/** Where the log text goes; with --stream both point at stdout. */
export interface LogOutput {
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

/**
 * Writes text in order across two streams, batching consecutive writes to the same stream
 * (one write per line would cost a syscall each on a long log) and waiting for drain.
 */
export class OrderedWriter {
  private target?: NodeJS.WritableStream
  private buffered = ''
  /** Bytes still allowed (--limit-bytes); undefined for no limit. */
  private remaining?: number

  constructor(
    private readonly output: LogOutput,
    limitBytes?: number,
  ) {
    this.remaining = limitBytes !== undefined && limitBytes >= 0 ? limitBytes : undefined
  }

  /** True once --limit-bytes bytes were written: the kubelet's (and crictl's) log reader stops there. */
  get exhausted(): boolean {
    return this.remaining === 0
  }

  async write(stream: 'stdout' | 'stderr', text: string): Promise<void> {
    if (this.remaining !== undefined) {
      const bytes = Buffer.from(text)
      if (bytes.length > this.remaining) text = bytes.subarray(0, this.remaining).toString()
      this.remaining = Math.max(0, this.remaining - bytes.length)
    }

    if (text === '') return
    const target = this.output[stream]
    if (target !== this.target) await this.flush()
    this.target = target
    this.buffered += text
    if (this.buffered.length >= CHUNK_BYTES) await this.flush()
  }

  async flush(): Promise<void> {
    if (!this.target || this.buffered === '') return
    const [target, text] = [this.target, this.buffered]
    this.buffered = ''
    if (!target.write(text)) await drainedOrFailed(target)
  }
}

/**
 * Waits until `target` takes more writes. One that failed (a closed pipe, a hung-up terminal) never
 * drains: waiting for 'drain' alone would hang the follower forever, and with nothing else pending
 * Node would end podctl there, before a debug session removed its container.
 */
async function drainedOrFailed(target: NodeJS.WritableStream): Promise<void> {
  const writable = target as NodeJS.WritableStream & Partial<Pick<Writable, 'destroyed' | 'writableNeedDrain'>>
  if (writable.destroyed === true || writable.writableNeedDrain === false) return
  await new Promise<void>((resolve) => {
    const done = () => {
      for (const event of ['drain', 'error', 'close']) target.off(event, done)
      resolve()
    }

    for (const event of ['drain', 'error', 'close']) target.once(event, done)
  })
}

export interface ShowLogOptions extends LogSelection {
  timestamps?: boolean
  /** Keep reading until `isRunning` says the container is gone. */
  follow?: boolean
  /** Polled about once a second while following. */
  isRunning?: () => Promise<boolean>
  pollMs?: number
  statusEveryMs?: number
  signal?: AbortSignal
}

export interface ShowLogResult {
  lines: number
  malformed: number
}

/** Prints a log file (selected lines, then, with follow, everything appended until the container exits). */
export async function showLog(reader: LogFileReader, writer: OrderedWriter, options: ShowLogOptions): Promise<ShowLogResult> {
  let malformed = 0
  const parse = (raw: string) => {
    if (raw === '') return
    const entry = parseLogLine(raw)
    if (!entry) malformed++
    return entry
  }

  const raws = await reader.readLines()
  if (!options.follow) {
    const leftover = reader.takeRemainder()
    if (leftover !== undefined) raws.push(leftover)
  }

  const entries = raws.map(parse).filter((entry) => entry !== undefined)
  const lines = selectLines(assembleLines(entries), options)
  for (const line of lines) await writer.write(line.stream, formatLine(line, options))
  await writer.flush()
  let printed = lines.length
  if (!options.follow || !options.isRunning || writer.exhausted) return {lines: printed, malformed}

  const printer = new EntryPrinter({timestamps: options.timestamps, sinceNanos: options.sinceNanos, stream: options.stream})
  // A line the container is still writing was printed without "\n"; its next fragment continues it.
  for (const line of lines) if (!line.complete) printer.continueLine(line.stream)
  const print = async (raw: string) => {
    const entry = parse(raw)
    if (!entry) return
    const text = printer.render(entry)
    if (text !== '') {
      printed++
      await writer.write(entry.stream, text)
    }
  }

  // Flush after every read so a follower sees each line as soon as it is in the file.
  const stop = new AbortController()
  options.signal?.addEventListener('abort', () => stop.abort(), {once: true})
  // A signal that fired while the lines above were read fires no event any more.
  if (options.signal?.aborted) stop.abort()
  await followLog(reader, {...options, isRunning: options.isRunning, signal: stop.signal}, async (raws) => {
    for (const raw of raws) await print(raw)
    await writer.flush()
    if (writer.exhausted) stop.abort()
  })
  return {lines: printed, malformed}
}

/**
 * The follow loop: poll the file every `pollMs`, ask the runtime every `statusEveryMs` whether
 * the container still runs, and once it does not, read what was written up to its exit and stop.
 */
export async function followLog(
  reader: LogFileReader,
  options: {isRunning: () => Promise<boolean>; pollMs?: number; statusEveryMs?: number; signal?: AbortSignal},
  onLines: (raws: string[]) => Promise<void>,
): Promise<void> {
  const pollMs = options.pollMs ?? 200
  const statusEveryMs = options.statusEveryMs ?? 1000
  let lastCheck = Date.now()
  while (!options.signal?.aborted) {
    await sleep(pollMs)
    let exited = false
    if (Date.now() - lastCheck >= statusEveryMs) {
      // Ask before reading: whatever the container wrote before it exited is in the file by now.
      exited = !(await options.isRunning())
      lastCheck = Date.now()
    }

    await onLines(await reader.readLines())
    if (exited) {
      // The runtime copies the last output a moment after the process ends; give it that moment.
      await sleep(pollMs)
      const last = await reader.readLines()
      const leftover = reader.takeRemainder()
      await onLines(leftover === undefined ? last : [...last, leftover])
      return
    }
  }
}
