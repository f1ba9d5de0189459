/**
 * crictl's stderr lines as logrus' text formatter writes them: `time="2006-01-02T15:04:05Z07:00"
 * level=error msg="…"` when stderr is not a terminal (a value is quoted with Go's %q unless it holds
 * only letters, digits and -._/@^+), and `ERRO[0000] …` in colour on a terminal. crictl v1.37's main
 * logs an Action's failure at error level (exit 1); notes go at info or warning level ("No containers
 * to remove"), and debug lines only with --debug.
 */
import {goQuote} from '../util/go-quote.js'

export type LogLevel = 'fatal' | 'error' | 'warning' | 'info' | 'debug'

const LEVEL_COLOR: Record<LogLevel, number> = {fatal: 31, error: 31, warning: 33, info: 36, debug: 37}
const startedAt = Date.now()

/** logrus' needsQuoting: anything beyond letters, digits and -._/@^+ (or nothing at all is left bare). */
function value(text: string): string {
  return /^[\w./@^+-]*$/.test(text) ? text : goQuote(text)
}

/** time.RFC3339 in the local zone, as logrus stamps entries. */
export function rfc3339(date: Date): string {
  const offset = -date.getTimezoneOffset()
  const pad = (n: number) => String(Math.abs(n)).padStart(2, '0')
  const zone = offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`
  const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, 19)
  return `${local}${zone}`
}

/** One logrus line (with its newline) for stderr; colour and the short form when `terminal`. */
export function logLine(level: LogLevel, message: string, options: {terminal?: boolean; now?: Date} = {}): string {
  const now = options.now ?? new Date()
  if (options.terminal) {
    const seconds = String(Math.max(0, Math.floor((now.getTime() - startedAt) / 1000))).padStart(4, '0')
    const text = level.toUpperCase().slice(0, 4)
    return `\u001B[${LEVEL_COLOR[level]}m${text}\u001B[0m[${seconds}] ${message.replace(/\n$/, '').padEnd(44)} \n`
  }

  return `time=${value(rfc3339(now))} level=${level}${message === '' ? '' : ` msg=${value(message)}`}\n`
}

let debugEnabled = false

/** --debug / `debug: true`: logrus at debug level. */
export function setLogDebug(enabled: boolean): void {
  debugEnabled = enabled
}

/** logrus.Debug. */
export function debug(message: string): void {
  if (debugEnabled) write('debug', message)
}

function write(level: LogLevel, message: string): void {
  process.stderr.write(logLine(level, message, {terminal: Boolean(process.stderr.isTTY)}))
}

/** logrus.Info: an outcome crictl reports on stderr (`No containers to remove`). */
export function info(message: string): void {
  write('info', message)
}

/** logrus.Warning / Warningf. */
export function warning(message: string): void {
  write('warning', message)
}

/** logrus.Error: one failure among several, the command goes on. */
export function error(message: string): void {
  write('error', message)
}
