/**
 * Detach keys for `exec -it` and `attach -it`, as docker has them: a key sequence typed into the
 * session (Ctrl-P Ctrl-Q by default, --detach-keys to change it) ends the session locally and leaves
 * the container's process running. Keys that only begin the sequence are held back until the next
 * key shows whether the sequence goes on; if not, they are sent after all, so Ctrl-P alone still
 * reaches the container.
 */
import {Transform, type TransformCallback} from 'node:stream'

import {UsageError} from '../errors.js'

export const DEFAULT_DETACH_KEYS = 'ctrl-p,ctrl-q'

/** Control characters docker names besides ctrl-a … ctrl-z. */
const CONTROL_SYMBOLS: Readonly<Record<string, number>> = {'@': 0, '[': 27, '\\': 28, ']': 29, '^': 30, _: 31}

/**
 * docker's --detach-keys spelling: comma-separated keys, each `ctrl-X` (X a letter or one of
 * @ [ \ ] ^ _) or a single character. An empty value turns detaching off (an empty sequence).
 */
export function parseDetachKeys(spec: string): Buffer {
  if (spec === '') return Buffer.alloc(0)
  const codes = spec.split(',').map((key) => {
    const ctrl = /^ctrl-(.)$/i.exec(key)
    if (ctrl) {
      const symbol = ctrl[1].toLowerCase()
      if (/^[a-z]$/.test(symbol)) return symbol.codePointAt(0)! - 96
      if (symbol in CONTROL_SYMBOLS) return CONTROL_SYMBOLS[symbol]
    } else if (key.length === 1) return key.codePointAt(0)!

    throw new UsageError(
      `--detach-keys "${spec}": "${key}" is not a key; use e.g. ctrl-p,ctrl-q (ctrl-a…ctrl-z, ctrl-@, ctrl-[, single characters)`,
    )
  })
  return Buffer.from(codes.filter((code) => code < 128))
}

/** "Ctrl-P Ctrl-Q", for the hint line. */
export function describeDetachKeys(keys: Buffer): string {
  return [...keys].map((code) => (code < 32 ? `Ctrl-${String.fromCodePoint(code + 64)}` : String.fromCodePoint(code))).join(' ')
}

/** The hint shown when a session that can be detached starts, or undefined when it cannot (no -it, no keys, no terminal). */
export function detachHint(
  keys: Buffer,
  session: {stdin: boolean; tty: boolean},
  stdinIsTerminal = Boolean(process.stdin.isTTY),
): string | undefined {
  if (!session.stdin || !session.tty || keys.length === 0 || !stdinIsTerminal) return undefined
  return `To detach and leave it running, press ${describeDetachKeys(keys)} (--detach-keys changes the keys).`
}

/**
 * stdin with the detach sequence taken out: passes every other byte on, and on the whole sequence
 * calls `onDetach` once and passes nothing more (without ending, so the process gets no EOF).
 */
export class DetachKeyFilter extends Transform {
  private matched = 0
  private detached = false

  constructor(
    private readonly keys: Buffer,
    private readonly onDetach: () => void,
  ) {
    super()
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.detached) return callback()
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
    if (this.keys.length === 0) return callback(null, bytes)
    const out: number[] = []
    for (const byte of bytes) {
      if (byte !== this.keys[this.matched]) {
        // The held-back keys did not lead to the sequence: send them, then see whether this key starts it anew.
        out.push(...this.keys.subarray(0, this.matched))
        this.matched = 0
        if (byte !== this.keys[0]) {
          out.push(byte)
          continue
        }
      }

      this.matched++
      if (this.matched < this.keys.length) continue
      this.detached = true
      if (out.length > 0) this.push(Buffer.from(out))
      this.onDetach()
      return callback()
    }

    callback(null, out.length > 0 ? Buffer.from(out) : undefined)
  }
}
