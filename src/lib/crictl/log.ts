/**
 * crictl's logrus lines on stderr: `time="2026-01-02T15:04:05Z" level=info msg="…"` when stderr is
 * not a terminal, `INFO[0000] …` (level coloured, seconds since start) on one. crictl logs its
 * notes (rm -a with nothing to remove) and per-item failures (rm, rmi) this way.
 */
const startedAt = Date.now()

type Level = 'info' | 'warning' | 'error' | 'fatal'

const LEVEL_COLOURS: Record<Level, number> = {info: 36, warning: 33, error: 31, fatal: 31}

export function info(message: string): void {
  write('info', message)
}

export function warning(message: string): void {
  write('warning', message)
}

export function error(message: string): void {
  write('error', message)
}

/** The line logrus writes, for a given clock and terminal. */
export function logLine(level: Level, message: string, options: {tty: boolean; now?: Date}): string {
  const now = options.now ?? new Date()
  if (options.tty) {
    // logrus on a terminal: the level in its colour, seconds since start, the message padded to 44.
    const elapsed = String(Math.floor((now.getTime() - startedAt) / 1000)).padStart(4, '0')
    return `\u001B[${LEVEL_COLOURS[level]}m${level.toUpperCase().slice(0, 4)}\u001B[0m[${elapsed}] ${message.padEnd(44)} \n`
  }

  return `time="${rfc3339(now)}" level=${level} msg=${quoteIfNeeded(message)}\n`
}

function write(level: Level, message: string): void {
  process.stderr.write(logLine(level, message, {tty: Boolean(process.stderr.isTTY)}))
}

/** RFC 3339 in UTC to the second, as logrus's default TextFormatter prints time.Now(). */
function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`
}

/** logrus quotes a value unless it is made only of letters, digits and -._/@^+ (Go %q escaping inside). */
function quoteIfNeeded(value: string): string {
  if (/^[\w\-./@^+]*$/.test(value)) return value
  return JSON.stringify(value)
}
