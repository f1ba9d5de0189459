import type {ReadStream, WriteStream} from 'node:tty'

import type {TerminalSource} from './remote-command.js'

/**
 * The local terminal for `exec -t` / `attach -t`: raw mode while the session lasts (every key,
 * Ctrl-C included, goes to the remote terminal, as with kubectl and crictl), the window size and
 * its changes (SIGWINCH, seen by Node as 'resize' on stdout).
 */
export interface LocalTerminal extends TerminalSource {
  /** Puts the terminal back as it was; safe to call more than once. Also runs on process exit. */
  restore(): void
}

/**
 * With `raw` (stdin is sent), raw mode on stdin when it is a terminal; without, the keys stay local (Ctrl-C
 * interrupts podctl). The size is stdout's when stdout is a terminal.
 */
export function openTerminal(stdin: NodeJS.ReadStream, stdout: NodeJS.WriteStream, raw: boolean): LocalTerminal {
  const input = stdin as ReadStream
  const makeRaw = raw && Boolean(input.isTTY)
  const wasRaw = makeRaw ? input.isRaw : false
  if (makeRaw) input.setRawMode(true)
  let restored = !makeRaw
  const restore = () => {
    if (restored) return
    restored = true
    try {
      input.setRawMode(wasRaw)
    } catch {}
  }

  // Whatever way the process ends (an error, process.exit, a signal handled by exiting), the terminal comes back.
  process.once('exit', restore)
  return {
    size() {
      const output = stdout as WriteStream
      return output.isTTY ? {width: output.columns, height: output.rows} : undefined
    },
    onResize(listener) {
      if (!stdout.isTTY) return () => {}
      stdout.on('resize', listener)
      return () => stdout.off('resize', listener)
    },
    restore() {
      restore()
      process.off('exit', restore)
    },
  }
}
