/**
 * The container log files the runtime writes under the pod's log directory, parsed the way the
 * kubelet reads them (cri-client pkg/logs): the CRI format
 *
 *   2024-05-01T10:00:00.123456789Z stdout F hello
 *
 * (`P` marks a fragment of a longer line, `F` ends it), with Docker's JSON-file lines as a fallback.
 * Everything here is pure so that parsing, line joining and since/tail selection are unit tested.
 */

export type LogStream = 'stdout' | 'stderr'

/** One line of the log file. */
export interface LogEntry {
  /** The timestamp as the runtime wrote it. */
  time: string
  /** The same instant as nanoseconds since the epoch, for exact comparisons. */
  nanos: bigint
  stream: LogStream
  /** A fragment: the message continues in the next entry of the same stream. */
  partial: boolean
  /** The message, without its line terminator. */
  content: string
}

/** A line as the container wrote it: its fragments joined, timed by the first one. */
export interface LogLine {
  time: string
  nanos: bigint
  stream: LogStream
  text: string
  /** False for a line the container never finished (it exited mid-line, or is still writing). */
  complete: boolean
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/

/**
 * Whole-second part → epoch nanoseconds, for the last few seconds seen: log lines share them, and
 * Date/BigInt math is the parser's hot spot.
 */
const secondsCache = new Map<string, bigint | undefined>()
const SECONDS_CACHE_SIZE = 64

/** RFC 3339 with up to nanosecond precision → nanoseconds since the epoch; undefined if invalid. */
export function parseRfc3339Nanos(text: string): bigint | undefined {
  const match = RFC3339.exec(text)
  if (!match) return undefined
  const [, year, month, day, hour, minute, second, fraction = '', zone] = match
  const key = `${year}${month}${day}${hour}${minute}${second}${zone}`
  let base = secondsCache.get(key)
  if (base === undefined && !secondsCache.has(key)) {
    base = wholeSecondNanos(year, month, day, hour, minute, second, zone)
    if (secondsCache.size >= SECONDS_CACHE_SIZE) secondsCache.delete(secondsCache.keys().next().value!)
    secondsCache.set(key, base)
  }

  if (base === undefined) return undefined
  return fraction === '' ? base : base + BigInt(fraction.padEnd(9, '0'))
}

function wholeSecondNanos(...[year, month, day, hour, minute, second, zone]: string[]): bigint | undefined {
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number)
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return undefined
  const utcMs = Date.UTC(y, mo - 1, d, h, mi, s)
  if (new Date(utcMs).getUTCDate() !== d) return undefined // 2024-02-30 and the like
  let offsetMinutes = 0
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1
    offsetMinutes = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)))
  }

  return (BigInt(utcMs) - BigInt(offsetMinutes) * 60_000n) * 1_000_000n
}

/**
 * The timestamp in the fixed-width form crictl and kubectl print with --timestamps
 * (`2006-01-02T15:04:05.000000000Z07:00`): nine fraction digits, the runtime's own offset kept,
 * so columns line up even when the runtime trimmed trailing zeros.
 */
export function fixedWidthTimestamp(time: string): string {
  const match = RFC3339.exec(time)
  if (!match) return time
  const [, year, month, day, hour, minute, second, fraction = '', zone] = match
  const offset = zone === 'z' ? 'Z' : zone
  return `${year}-${month}-${day}T${hour}:${minute}:${second}.${fraction.padEnd(9, '0')}${offset}`
}

/** Parses one line of a log file (without its "\n"); undefined when it is neither CRI nor Docker JSON. */
export function parseLogLine(line: string): LogEntry | undefined {
  return parseCriLine(line) ?? (line.startsWith('{') ? parseDockerJsonLine(line) : undefined)
}

function parseCriLine(line: string): LogEntry | undefined {
  const timeEnd = line.indexOf(' ')
  if (timeEnd <= 0) return undefined
  const time = line.slice(0, timeEnd)
  const nanos = parseRfc3339Nanos(time)
  if (nanos === undefined) return undefined

  const streamEnd = line.indexOf(' ', timeEnd + 1)
  if (streamEnd === -1) return undefined
  const stream = line.slice(timeEnd + 1, streamEnd)
  if (stream !== 'stdout' && stream !== 'stderr') return undefined

  // The tag field may grow more ":"-separated tags in future; the first one is P or F.
  const tagEnd = line.indexOf(' ', streamEnd + 1)
  const tags = line.slice(streamEnd + 1, tagEnd === -1 ? undefined : tagEnd)
  const tag = tags.split(':', 1)[0]
  if (tag !== 'P' && tag !== 'F') return undefined

  const content = tagEnd === -1 ? '' : line.slice(tagEnd + 1)
  return {time, nanos, stream, partial: tag === 'P', content}
}

function parseDockerJsonLine(line: string): LogEntry | undefined {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }

  if (typeof value !== 'object' || value === null) return undefined
  const {log, stream, time} = value as {log?: unknown; stream?: unknown; time?: unknown}
  if (typeof log !== 'string' || typeof time !== 'string' || (stream !== 'stdout' && stream !== 'stderr')) return undefined
  const nanos = parseRfc3339Nanos(time)
  if (nanos === undefined) return undefined
  // Docker keeps the "\n" in `log`; a message without one was split and continues in the next entry.
  const partial = !log.endsWith('\n')
  return {time, nanos, stream, partial, content: partial ? log : log.slice(0, -1)}
}

export interface ParsedLog {
  entries: LogEntry[]
  /** Lines that were neither CRI nor Docker JSON (skipped). */
  malformed: number
}

/** Parses the complete lines of a log file's text; blank lines are ignored, not counted. */
export function parseLogText(text: string): ParsedLog {
  const entries: LogEntry[] = []
  let malformed = 0
  for (const line of text.split('\n')) {
    if (line === '') continue
    const entry = parseLogLine(line)
    if (entry) entries.push(entry)
    else malformed++
  }

  return {entries, malformed}
}

/**
 * Joins fragments into lines per stream: a `P` entry waits for the next `F` entry of the same
 * stream (the other stream may interleave), and the line takes the first fragment's timestamp.
 */
export class LineAssembler {
  private readonly pending = new Map<LogStream, {first: LogEntry; parts: string[]}>()

  /** Adds one entry; returns the line it completes, if any. */
  push(entry: LogEntry): LogLine | undefined {
    const open = this.pending.get(entry.stream)
    if (entry.partial) {
      if (open) open.parts.push(entry.content)
      else this.pending.set(entry.stream, {first: entry, parts: [entry.content]})
      return undefined
    }

    if (!open) return {time: entry.time, nanos: entry.nanos, stream: entry.stream, text: entry.content, complete: true}
    this.pending.delete(entry.stream)
    return {
      time: open.first.time,
      nanos: open.first.nanos,
      stream: entry.stream,
      text: [...open.parts, entry.content].join(''),
      complete: true,
    }
  }

  /** Lines still waiting for their end, oldest first; they are reported as incomplete and forgotten. */
  flush(): LogLine[] {
    const lines = [...this.pending.values()]
      .map(({first, parts}): LogLine => ({
        time: first.time,
        nanos: first.nanos,
        stream: first.stream,
        text: parts.join(''),
        complete: false,
      }))
      .sort((a, b) => (a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0))
    this.pending.clear()
    return lines
  }
}

/** All lines of a parsed log, in file order; a line left unfinished at the end comes last. */
export function assembleLines(entries: readonly LogEntry[]): LogLine[] {
  const assembler = new LineAssembler()
  const lines: LogLine[] = []
  for (const entry of entries) {
    const line = assembler.push(entry)
    if (line) lines.push(line)
  }

  return [...lines, ...assembler.flush()]
}

export interface LogSelection {
  /** Only lines at or after this instant (nanoseconds since the epoch). */
  sinceNanos?: bigint
  /** Only this stream. */
  stream?: LogStream
  /** Only the last N lines (after the other filters); undefined or negative means all. */
  tail?: number
}

/** --since, --stream and --tail applied to whole lines, in that order (so `--stream stderr --tail 5` is the last 5 stderr lines). */
export function selectLines(lines: readonly LogLine[], selection: LogSelection): LogLine[] {
  const {sinceNanos, stream, tail} = selection
  const kept = lines.filter(
    (line) => (stream === undefined || line.stream === stream) && (sinceNanos === undefined || line.nanos >= sinceNanos),
  )
  if (tail === undefined || tail < 0) return kept
  return tail === 0 ? [] : kept.slice(-tail)
}

/**
 * `--since 10m` (relative to now) or `--since 2024-05-01T10:00:00Z` → nanoseconds since the
 * epoch; undefined when the text is neither.
 */
export function parseSince(text: string, nowMs: number, parseDurationMs: (text: string) => number | undefined): bigint | undefined {
  const absolute = parseRfc3339Nanos(text.trim())
  if (absolute !== undefined) return absolute
  const ms = parseDurationMs(text)
  if (ms === undefined) return undefined
  return BigInt(nowMs - ms) * 1_000_000n
}

/** Text for one whole line: optional fixed-width timestamp, the message, and "\n" if the container ended it. */
export function formatLine(line: LogLine, options: {timestamps?: boolean} = {}): string {
  const prefix = options.timestamps ? `${fixedWidthTimestamp(line.time)} ` : ''
  return `${prefix}${line.text}${line.complete ? '\n' : ''}`
}

/**
 * Streams entries as they arrive (for --follow): a fragment is shown at once, the timestamp is
 * printed only at the start of a line, and --since / --stream are decided per line.
 */
export class EntryPrinter {
  private readonly atLineStart = new Map<LogStream, boolean>()
  private readonly lineShown = new Map<LogStream, boolean>()

  constructor(private readonly options: {timestamps?: boolean; sinceNanos?: bigint; stream?: LogStream} = {}) {}

  /** Tells the printer a stream's last line was left open (printed without "\n"), so the next fragment continues it. */
  continueLine(stream: LogStream): void {
    this.atLineStart.set(stream, false)
    this.lineShown.set(stream, true)
  }

  /** The text to write for this entry ('' when filtered out). */
  render(entry: LogEntry): string {
    const {timestamps, sinceNanos, stream} = this.options
    if (stream !== undefined && entry.stream !== stream) return ''
    const starting = this.atLineStart.get(entry.stream) ?? true
    if (starting) this.lineShown.set(entry.stream, sinceNanos === undefined || entry.nanos >= sinceNanos)
    this.atLineStart.set(entry.stream, !entry.partial)
    if (!this.lineShown.get(entry.stream)) return ''
    const prefix = starting && timestamps ? `${fixedWidthTimestamp(entry.time)} ` : ''
    return `${prefix}${entry.content}${entry.partial ? '' : '\n'}`
  }
}

/**
 * `…/<N>.log` → `…/<N-1>.log`, the file the previous attempt of the container wrote (the kubelet
 * names log files after the attempt). Undefined for attempt 0 or a file not named that way.
 */
export function previousLogPath(logPath: string): string | undefined {
  const slash = logPath.lastIndexOf('/')
  const match = /^(\d+)\.log$/.exec(logPath.slice(slash + 1))
  if (!match || Number(match[1]) === 0) return undefined
  return `${logPath.slice(0, slash + 1)}${Number(match[1]) - 1}.log`
}
