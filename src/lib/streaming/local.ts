import type {Readable, Writable} from 'node:stream'

import type {RemoteCommandIo} from './remote-command.js'
import {openTerminal} from './terminal.js'

export type StreamIo = Omit<RemoteCommandIo, 'timeoutMs' | 'tty'>

export interface LocalStreams {
  stdin: Readable
  stdout: Writable
  stderr: Writable
}

/**
 * Runs a session on this process's stdin/stdout/stderr (or the given streams). With a TTY the local
 * terminal is in raw mode for the session and restored on every way out (an error, a signal, exit).
 */
export async function withLocalStreams<T>(
  options: {stdin: boolean; tty: boolean; signal?: AbortSignal; streams?: LocalStreams},
  run: (io: StreamIo) => Promise<T>,
): Promise<T> {
  const streams = options.streams ?? {stdin: process.stdin, stdout: process.stdout, stderr: process.stderr}
  const onProcess = options.streams === undefined
  // Raw only when the keys go to the container (-i): `exec -t` alone leaves Ctrl-C to podctl.
  const terminal = options.tty && onProcess ? openTerminal(process.stdin, process.stdout, options.stdin) : undefined
  try {
    return await run({
      stdin: options.stdin ? streams.stdin : undefined,
      stdout: streams.stdout,
      stderr: streams.stderr,
      terminal,
      signal: options.signal,
    })
  } finally {
    terminal?.restore()
  }
}
