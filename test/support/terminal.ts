/**
 * Terminal output, the way a user sees it: podctl under a pseudo-terminal (util-linux `script`),
 * and a small screen model that replays what it wrote (text, CR/LF, cursor up/column, erase line)
 * so a test can tell what stays on the screen at the end from what was drawn and cleared.
 */
import {spawn} from 'node:child_process'

import {BIN} from './podctl.js'

export interface TerminalRun {
  code: number | null
  /** Everything written to the terminal, escape sequences included. */
  raw: string
}

/** podctl on a terminal `columns` wide (stdout and stderr both on it, as in an interactive shell). */
export function podctlOnTerminal(
  args: string[],
  env: Record<string, string | undefined>,
  columns = 120,
  timeoutMs = 110_000,
): Promise<TerminalRun> {
  const quoted = [process.execPath, BIN, ...args].map((word) => `'${word.replaceAll("'", String.raw`'\''`)}'`).join(' ')
  const command = `stty cols ${columns} rows 40; exec ${quoted}`
  // CI=true as CI machines set it: the spinner must not depend on it (ora's own check turns itself off there).
  const childEnv: Record<string, string | undefined> = {...process.env, NO_COLOR: '1', TERM: 'xterm', CI: 'true', ...env}
  for (const key of Object.keys(childEnv)) if (childEnv[key] === undefined) delete childEnv[key]
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      env: childEnv as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let raw = ''
    child.stdout.on('data', (chunk) => (raw += chunk))
    child.stderr.on('data', (chunk) => (raw += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({code, raw})
    })
  })
}

/** The lines left on the screen after replaying `raw` (trailing blanks trimmed). */
export function finalScreen(raw: string): string[] {
  const lines: string[] = ['']
  let row = 0
  let column = 0
  const put = (text: string) => {
    const line = lines[row].padEnd(column, ' ')
    lines[row] = line.slice(0, column) + text + line.slice(column + text.length)
    column += text.length
  }

  // Cursor up/down/column and erase in line; other sequences (cursor show/hide, colours) change nothing a test reads.
  const csi = (token: string) => {
    const n = Number.parseInt(token.slice(2), 10)
    switch (token.at(-1)) {
      case 'A': {
        row = Math.max(0, row - (Number.isNaN(n) ? 1 : n))
        break
      }

      case 'B': {
        row = Math.min(lines.length - 1, row + (Number.isNaN(n) ? 1 : n))
        break
      }

      case 'G': {
        column = (Number.isNaN(n) ? 1 : n) - 1
        break
      }

      case 'K': {
        const mode = Number.isNaN(n) ? 0 : n
        lines[row] = mode === 2 ? '' : mode === 0 ? lines[row].slice(0, column) : ' '.repeat(column) + lines[row].slice(column)
        break
      }
    }
  }

  const ESC = String.fromCodePoint(27)
  // CSI sequences, other escapes, or one plain character.
  const tokens = raw.match(new RegExp(`${ESC}\\[[?]?[\\d;]*[A-Za-z]|${ESC}[^[]|[\\s\\S]`, 'g')) ?? []
  for (const token of tokens) {
    if (token === '\r') column = 0
    else if (token === '\n') {
      row++
      if (row === lines.length) lines.push('')
      column = 0
    } else if (token.startsWith(`${ESC}[`)) csi(token)
    else if (!token.startsWith(ESC)) put(token)
  }

  const trimmed = lines.map((line) => line.trimEnd())
  while (trimmed.length > 0 && trimmed.at(-1) === '') trimmed.pop()
  return trimmed
}
