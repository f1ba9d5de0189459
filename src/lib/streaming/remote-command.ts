import type {Readable, Writable} from 'node:stream'

import {DeadlineExceededError, formatMs, InterruptedError, RuntimeError} from '../errors.js'
import {connectSpdy, type SpdySession, type SpdyStream} from './spdy-session.js'

/**
 * The Kubernetes remote-command protocol (exec and attach), version v4.channel.k8s.io over SPDY/3.1:
 * the client opens one stream per channel (error, stdin, stdout, stderr, resize) with a `streamType`
 * header; the server writes the command's output, then a metav1.Status as JSON on the error stream
 * (the exit code of a failed command is its cause of type "ExitCode"), then closes the connection.
 * stdin's end is a FIN on its stream: the command sees EOF and can finish (`echo x | exec -i c -- cat`).
 * (The server's WebSocket protocols, v4.channel.k8s.io at most in containerd 1.6, cannot half-close
 * stdin: v5's close channel came later. So podctl speaks SPDY, like crictl and kubectl did.)
 */
export const REMOTE_COMMAND_PROTOCOL = 'v4.channel.k8s.io'

export interface TerminalSize {
  width: number
  height: number
}

/** The local terminal, when -t: its size now and a way to hear of changes (SIGWINCH). */
export interface TerminalSource {
  size(): TerminalSize | undefined
  onResize(listener: () => void): () => void
}

export interface RemoteCommandIo {
  /** Sent as the command's stdin when given (its end closes the command's stdin). */
  stdin?: Readable
  stdout: Writable
  /** Not with a TTY: the terminal merges stderr into stdout. */
  stderr?: Writable
  tty: boolean
  terminal?: TerminalSource
  /** Ends the session (Ctrl-C without a TTY): podctl then fails with Interrupted. */
  signal?: AbortSignal
  /** The detach keys were typed (detach-keys.ts): the session ends here, the process runs on; exit 0. */
  detach?: AbortSignal
  /** Deadline of the connect, the upgrade and the creation of the streams. */
  timeoutMs: number
}

export interface StatusOutcome {
  exitCode: number
  /** Left by the detach keys: the process still runs, and exitCode is 0. */
  detached?: boolean
}

interface Status {
  status?: string
  message?: string
  reason?: string
  details?: {causes?: Array<{reason?: string; message?: string}>}
}

/** The v4 error stream's content as an exit code; a failure that is not the command's own exit is a RuntimeError. */
export function parseStatus(text: string): StatusOutcome {
  if (text.trim() === '') return {exitCode: 0}
  let status: Status
  try {
    status = JSON.parse(text) as Status
  } catch {
    throw new RuntimeError(`the streaming server failed: ${oneLine(text)}`)
  }

  if (status.status === 'Success') return {exitCode: 0}
  if (status.reason === 'NonZeroExitCode') {
    const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode')
    const code = Number(cause?.message)
    if (Number.isInteger(code) && code >= 0) return {exitCode: code}
  }

  throw new RuntimeError(oneLine(status.message ?? `the streaming server reported ${status.status ?? 'an unknown status'}`))
}

/** Runs one exec or attach session at `url` (from the runtime's Exec or Attach answer) and returns the exit code. */
export async function runRemoteCommand(url: URL, io: RemoteCommandIo): Promise<StatusOutcome> {
  const session = await connectSpdy(url, {protocol: REMOTE_COMMAND_PROTOCOL, timeoutMs: io.timeoutMs})
  const cleanups: Array<() => void> = []
  try {
    const open = (streamType: string) => session.openStream({streamType})
    const error = open('error')
    const stdin = io.stdin ? open('stdin') : undefined
    const stdout = open('stdout')
    const stderr = io.stderr && !io.tty ? open('stderr') : undefined
    const resize = io.tty ? open('resize') : undefined
    await allReplied(session, [error, stdin, stdout, stderr, resize], io.timeoutMs)

    let statusText = ''
    error.data.add((data: Buffer) => {
      statusText += data.toString('utf8')
    })
    let outputClosed = false
    const onOutputError = () => {
      // A closed local stream: stop quietly. For podctl's own stdout the entries' rule (output/closed-pipe.ts) exits 0 first.
      outputClosed = true
      session.close()
    }

    cleanups.push(copyOut(session, stdout, io.stdout, onOutputError))
    if (stderr && io.stderr) cleanups.push(copyOut(session, stderr, io.stderr, onOutputError))
    if (stdin && io.stdin) cleanups.push(copyIn(session, io.stdin, stdin))
    if (resize && io.terminal) cleanups.push(sendResizes(resize, io.terminal))

    const ended = await untilDone(session, [error, stdout, stderr], io.signal, io.detach)
    if (ended === 'interrupted') throw new InterruptedError('interrupted; the session was closed')
    if (ended === 'detached') return {exitCode: 0, detached: true}
    if (outputClosed) return {exitCode: 0}
    await Promise.all([flushed(io.stdout), io.stderr ? flushed(io.stderr) : undefined])
    // The server always writes a status, success included; none and a dropped connection mean it was lost.
    if (statusText === '' && error.endedBy === 'connection') {
      throw new RuntimeError("the connection to the runtime's streaming server closed before the command's exit status arrived")
    }

    return parseStatus(statusText)
  } finally {
    for (const cleanup of cleanups) cleanup()
    session.close()
  }
}

/** Waits for the server to accept every stream (SYN_REPLY), within the deadline. */
async function allReplied(session: SpdySession, streams: Array<SpdyStream | undefined>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DeadlineExceededError(`the streaming server did not accept the session's streams within ${formatMs(timeoutMs)}`)),
      timeoutMs,
    )
  })
  try {
    await Promise.race([Promise.all(streams.map((stream) => stream?.replied)), deadline])
  } catch (error) {
    if (error instanceof DeadlineExceededError) throw error
    throw new RuntimeError(`the streaming server closed the session before it started: ${(error as Error).message}`)
  } finally {
    clearTimeout(timer)
  }

  if (session.closed) throw new RuntimeError('the streaming server closed the session before it started')
}

/** Server output to a local stream; a full local stream pauses the connection (TCP backpressure). */
function copyOut(session: SpdySession, from: SpdyStream, to: Writable, onError: () => void): () => void {
  to.on('error', onError)
  from.data.add((data: Buffer) => {
    if (!to.writable) return
    if (!to.write(data)) {
      session.pause()
      to.once('drain', () => session.resume())
    }
  })
  return () => to.off('error', onError)
}

/** Local stdin to the command; its end is a FIN. Returns the cleanup that stops reading. */
function copyIn(session: SpdySession, from: Readable, to: SpdyStream): () => void {
  const onData = (chunk: Buffer | string) => {
    if (!to.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))) {
      from.pause()
      void session.drain().then(() => from.resume())
    }
  }

  const onEnd = () => to.end()
  from.on('data', onData)
  from.once('end', onEnd)
  from.once('error', onEnd)
  from.resume()
  return () => {
    from.off('data', onData)
    from.off('end', onEnd)
    from.off('error', onEnd)
    from.pause()
  }
}

/** The terminal's size now and after each change, as the JSON the server's resize channel decodes. */
function sendResizes(resize: SpdyStream, terminal: TerminalSource): () => void {
  const send = () => {
    const size = terminal.size()
    if (size && size.width > 0 && size.height > 0) resize.write(Buffer.from(JSON.stringify({Width: size.width, Height: size.height})))
  }

  send()
  return terminal.onResize(send)
}

/** Resolves when the server is done with every output stream (or the session ended), or on Ctrl-C or the detach keys. */
function untilDone(
  session: SpdySession,
  streams: Array<SpdyStream | undefined>,
  signal?: AbortSignal,
  detach?: AbortSignal,
): Promise<'done' | 'interrupted' | 'detached'> {
  const pending = streams.filter((stream): stream is SpdyStream => stream !== undefined)
  return new Promise((resolve) => {
    const check = () => {
      if (session.closed || pending.every((stream) => stream.remoteDone)) finish('done')
    }

    const onAbort = () => finish('interrupted')
    const onDetach = () => finish('detached')
    const removals: Array<() => void> = []
    const finish = (how: 'done' | 'interrupted' | 'detached') => {
      signal?.removeEventListener('abort', onAbort)
      detach?.removeEventListener('abort', onDetach)
      for (const remove of removals) remove()
      resolve(how)
    }

    if (signal?.aborted || detach?.aborted) {
      finish(signal?.aborted ? 'interrupted' : 'detached')
      return
    }

    signal?.addEventListener('abort', onAbort, {once: true})
    detach?.addEventListener('abort', onDetach, {once: true})
    removals.push(session.closing.add(check), ...pending.map((stream) => stream.ended.add(check)))
    check()
  })
}

/** Resolves once everything written so far has been handed to the OS (or the stream failed). */
function flushed(stream: Writable): Promise<void> {
  if (!stream.writable || stream.writableLength === 0) return Promise.resolve()
  return new Promise((resolve) => {
    stream.write('', () => resolve())
  })
}

function oneLine(text: string): string {
  return text.replaceAll(/\s+/g, ' ').trim()
}
