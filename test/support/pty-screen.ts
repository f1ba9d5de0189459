/**
 * A person at a terminal: podctl on a pseudo-terminal (util-linux `script`) of a given size, keys
 * written to it, and what it draws replayed by a terminal emulator (@xterm/headless), so a test
 * reads the screen as it looks. After podctl exits, the shell that ran it prints its exit code and
 * whether the terminal is back in its normal mode (echo and line editing on).
 */
import {spawn} from 'node:child_process'

import xterm from '@xterm/headless'

import {BIN} from './podctl.js'

export interface PtySession {
  /** The screen's lines now, trailing blanks trimmed. */
  lines(): string[]
  /** Waits until some line matches; fails with the screen in the message. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>
  press(keys: string): void
  /** Everything podctl and the shell wrote, escape sequences included. */
  raw(): string
  /** Waits for podctl and the shell to end: podctl's exit code, and the terminal's mode afterwards. */
  ended(timeoutMs?: number): Promise<{code: number; echo: boolean; canonical: boolean; normalScreen: boolean}>
  kill(): void
}

const quote = (word: string) => `'${word.replaceAll("'", String.raw`'\''`)}'`

export function podctlOnPty(args: string[], env: Record<string, string | undefined>, columns = 80, rows = 24): PtySession {
  const podctl = [process.execPath, BIN, ...args].map(quote).join(' ')
  const modes = String.raw`stty -a | tr ' ' '\n' | grep -E '^-?(echo|icanon)$' | tr '\n' ' '`
  const shell = `stty cols ${columns} rows ${rows}; ${podctl}; code=$?; ${modes}; echo "EXIT=$code"`
  const childEnv: Record<string, string | undefined> = {...process.env, TERM: 'xterm-256color', ...env}
  for (const key of Object.keys(childEnv)) if (childEnv[key] === undefined) delete childEnv[key]
  const child = spawn('script', ['-q', '-e', '-c', shell, '/dev/null'], {
    env: childEnv as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const terminal = new xterm.Terminal({cols: columns, rows, allowProposedApi: true})
  let raw = ''
  const closed = new Promise<void>((resolve) => {
    child.on('close', () => resolve())
  })
  const onData = (chunk: Buffer) => {
    raw += chunk.toString('utf8')
    terminal.write(chunk)
  }

  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  // The emulator applies writes asynchronously: an empty write's callback says it caught up.
  const settled = () =>
    new Promise<void>((resolve) => {
      terminal.write('', resolve)
    })
  const lines = () => {
    const buffer = terminal.buffer.active
    const out: string[] = []
    for (let row = 0; row < terminal.rows; row++) out.push(buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '')
    return out
  }

  return {
    lines,
    async waitFor(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        await settled()
        const found = lines().find((line) => pattern.test(line))
        if (found !== undefined) return found
        if (Date.now() > deadline) throw new Error(`no line matches ${pattern} in ${timeoutMs} ms; the screen:\n${lines().join('\n')}`)
        await new Promise((resolve) => {
          setTimeout(resolve, 50)
        })
      }
    },
    press(keys) {
      child.stdin.write(keys)
    },
    raw: () => raw,
    async ended(timeoutMs = 20_000) {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
      await closed
      clearTimeout(timer)
      await settled()
      const tail = /((?:-?(?:echo|icanon) )+)EXIT=(\d+)/.exec(raw)
      if (!tail) throw new Error(`the shell did not report the exit code; the screen:\n${lines().join('\n')}`)
      const modes = tail[1].trim().split(' ')
      return {
        code: Number(tail[2]),
        echo: modes.includes('echo'),
        canonical: modes.includes('icanon'),
        normalScreen: terminal.buffer.active.type === 'normal',
      }
    },
    kill() {
      child.kill('SIGKILL')
    },
  }
}
