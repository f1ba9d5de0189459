/**
 * A container's log, read from the node's filesystem the way `podctl logs` reads it (logs/), as
 * lines: all at once, or followed as an async iterator that ends when the container exits (or the
 * caller breaks out of the loop, or the signal aborts).
 */
import {setTimeout as sleep} from 'node:timers/promises'

import type {CriClient} from '../cri/client.js'
import {assembleLines, LineAssembler, type LogEntry, type LogStream, parseLogLine, selectLines} from '../logs/cri-log.js'
import {LogFileReader} from '../logs/follow.js'
import {containerLiveness} from '../node/container-logs.js'

export interface LogLine {
  /** RFC 3339 with nanoseconds, as the runtime wrote it. */
  time: string
  stream: LogStream
  /** The line without its "\n". */
  text: string
}

export interface LogOptions {
  /** Only this stream. */
  stream?: LogStream
  /** Only the last N lines (of those already written, for a follower). */
  tail?: number
  /** Only lines written at or after this time. */
  since?: Date
}

export interface FollowOptions extends LogOptions {
  /** Stops following (the iterator ends). */
  signal?: AbortSignal
  /** How often the file is read (ms, default 200). */
  pollMs?: number
}

const STATUS_EVERY_MS = 1000

function sinceNanos(since: Date | undefined): bigint | undefined {
  return since === undefined ? undefined : BigInt(since.getTime()) * 1_000_000n
}

function entriesOf(raws: readonly string[]): LogEntry[] {
  return raws.flatMap((raw) => {
    const entry = raw === '' ? undefined : parseLogLine(raw)
    return entry ? [entry] : []
  })
}

const publicLine = ({time, stream, text}: {time: string; stream: LogStream; text: string}): LogLine => ({time, stream, text})

export async function readLog(path: string, options: LogOptions = {}): Promise<LogLine[]> {
  const reader = await LogFileReader.open(path)
  try {
    const raws = await reader.readLines()
    const leftover = reader.takeRemainder()
    if (leftover !== undefined) raws.push(leftover)
    const selection = {stream: options.stream, tail: options.tail, sinceNanos: sinceNanos(options.since)}
    return selectLines(assembleLines(entriesOf(raws)), selection).map(publicLine)
  } finally {
    await reader.close()
  }
}

export async function* followLog(
  client: CriClient,
  target: {path: string; containerId: string; live: boolean},
  options: FollowOptions = {},
): AsyncGenerator<LogLine, void, undefined> {
  const reader = await LogFileReader.open(target.path)
  const since = sinceNanos(options.since)
  const wanted = (line: {stream: LogStream; nanos: bigint}) =>
    (options.stream === undefined || line.stream === options.stream) && (since === undefined || line.nanos >= since)
  try {
    const assembler = new LineAssembler()
    const complete = (raws: readonly string[]) => entriesOf(raws).flatMap((entry) => assembler.push(entry) ?? [])
    // What is there already, --tail applied; a line still being written waits for its end.
    yield* selectLines(complete(await reader.readLines()), {stream: options.stream, tail: options.tail, sinceNanos: since}).map(publicLine)
    const isRunning = containerLiveness(client, target.containerId)
    const pollMs = options.pollMs ?? 200
    let exited = !target.live
    let lastCheck = Date.now()
    while (!options.signal?.aborted) {
      if (!exited) await sleep(pollMs, undefined, {signal: options.signal}).catch(() => {})
      if (options.signal?.aborted) return
      if (!exited && Date.now() - lastCheck >= STATUS_EVERY_MS) {
        // Asked before reading: what the container wrote before it exited is in the file by then.
        exited = !(await isRunning())
        lastCheck = Date.now()
      }

      if (exited) {
        // The runtime copies the last output a moment after the process ends.
        await sleep(pollMs)
        const raws = await reader.readLines()
        const leftover = reader.takeRemainder()
        if (leftover !== undefined) raws.push(leftover)
        yield* [...complete(raws), ...assembler.flush()].filter(wanted).map(publicLine)
        return
      }

      yield* complete(await reader.readLines())
        .filter(wanted)
        .map(publicLine)
    }
  } finally {
    await reader.close()
  }
}
