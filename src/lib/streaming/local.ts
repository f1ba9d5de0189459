import type {Readable, Writable} from 'node:stream'

import {DetachKeyFilter} from './detach-keys.js'
import type {RemoteCommandIo} from './remote-command.js'
import {openTerminal} from './terminal.js'

export type StreamIo = Omit<RemoteCommandIo, 'timeoutMs' | 'tty'>

export interface LocalStreamOptions {
  stdin: boolean
  tty: boolean
  signal?: AbortSignal
  streams?: LocalStreams
  /** With stdin and a TTY: the key sequence that detaches (detach-keys.ts); empty or absent, none. */
  detachKeys?: Buffer
}

export interface LocalStreams {
  stdin: Readable
  stdout: Writable
  stderr: Writable
}

/**
 * Runs a session on this process's stdin/stdout/stderr (or the given streams). With a TTY the local
 * terminal is in raw mode for the session and restored on every way out (an error, a signal, exit).
 */
export async function withLocalStreams<T>(options: LocalStreamOptions, run: (io: StreamIo) => Promise<T>): Promise<T> {
  const streams = options.streams ?? {stdin: process.stdin, stdout: process.stdout, stderr: process.stderr}
  const onProcess = options.streams === undefined
  // Raw only when the keys go to the container (-i): `exec -t` alone leaves Ctrl-C to podctl.
  const terminal = options.tty && onProcess ? openTerminal(process.stdin, process.stdout, options.stdin) : undefined
  // Detach keys only where keys are typed into a terminal session, as docker has them.
  const detaching = options.stdin && options.tty && options.detachKeys !== undefined && options.detachKeys.length > 0
  const detached = new AbortController()
  const stdin = detaching ? streams.stdin.pipe(new DetachKeyFilter(options.detachKeys!, () => detached.abort())) : streams.stdin
  try {
    return await run({
      stdin: options.stdin ? stdin : undefined,
      detach: detaching ? detached.signal : undefined,
      stdout: streams.stdout,
      stderr: streams.stderr,
      terminal,
      signal: options.signal,
    })
  } finally {
    if (detaching) streams.stdin.unpipe()
    terminal?.restore()
  }
}
