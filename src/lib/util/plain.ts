/**
 * JSON/YAML for scripts. Decoded CRI messages already carry every proto3 field (defaults
 * included) with camelCase keys, int64 as strings and enums as names; this only turns what
 * JSON cannot hold into stable values: absent messages → null, bytes → UTF-8 text.
 */
export function toPlain(value: unknown): unknown {
  if (value === undefined || value === null) return null
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8')
  if (Array.isArray(value)) return value.map((item) => toPlain(item))
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'object') {
    if (typeof (value as {toJSON?: unknown}).toJSON === 'function') return (value as {toJSON(): unknown}).toJSON()
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = toPlain(item)
    return out
  }

  return value
}
