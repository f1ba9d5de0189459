/**
 * CRI messages as crictl v1.37 prints them: google.golang.org/protobuf's protojson with
 * EmitDefaultValues and a two-space indent. The fields of crictl's copy of the CRI API (cri-api
 * v0.37) are written in declaration order under their lowerCamelCase JSON names: scalars, lists and
 * maps always (empty ones as `[]` and `{}`), a message only when it is set. int64 and uint64 are
 * quoted decimals, enums their names, bytes base64, map entries sorted by key; strings escape only
 * `"`, `\` and control characters. Values are the ts-proto objects the client decodes, read through
 * the field lists generated from the wire schema (protojson-schema.ts).
 *
 * protojson adds a second space after a key's colon in some builds (internal/detrand: a hash of the
 * crictl binary decides, so two builds of one release may differ); podctl writes one, the form a
 * build without the extra space prints, and the tests compare modulo that space.
 */
import {PROTOJSON_MESSAGES, type ProtojsonField} from '../../generated/runtime/v1/protojson-schema.js'
import {compareGoStrings} from './go-json.js'

const INDENT = '  '

export type ProtojsonMessageName = keyof typeof PROTOJSON_MESSAGES & string

/** The message `value` of CRI type `type`, as crictl's protobufObjectToJSON writes it. */
export function toProtojson(type: ProtojsonMessageName, value: object): string {
  return message(type, value as Record<string, unknown>, '')
}

/** A string as protojson quotes it: JSON.stringify's escapes, which are protojson's for valid UTF-8. */
export function protojsonString(value: string): string {
  return JSON.stringify(value)
}

function message(type: string, value: Record<string, unknown>, indent: string): string {
  const fields = PROTOJSON_MESSAGES[type]
  if (!fields)
    throw new Error(`crictl JSON: no field list for CRI message ${type}; regenerate it with scripts/protojson-schema-from-wire.mjs`)
  const inner = indent + INDENT
  const members: string[] = []
  for (const field of fields) {
    const text = fieldValue(field, value[field[0]], inner)
    if (text !== undefined) members.push(`${inner}"${field[0]}": ${text}`)
  }

  return members.length === 0 ? '{}' : `{\n${members.join(',\n')}\n${indent}}`
}

/** A field's JSON at `indent` (the indent of its key), or undefined for an unset message, which protojson leaves out. */
function fieldValue([, type, shape]: ProtojsonField, value: unknown, indent: string): string | undefined {
  const item = indent + INDENT
  if (shape === 'list') {
    const items = (value as unknown[] | undefined) ?? []
    if (items.length === 0) return '[]'
    return `[\n${items.map((entry) => `${item}${singular(type, entry, item) ?? '{}'}`).join(',\n')}\n${indent}]`
  }

  if (shape === 'map') {
    const entries = Object.entries((value as Record<string, unknown> | undefined) ?? {}).sort(([a], [b]) => compareGoStrings(a, b))
    if (entries.length === 0) return '{}'
    return `{\n${entries.map(([key, entry]) => `${item}${protojsonString(key)}: ${singular(type, entry, item)}`).join(',\n')}\n${indent}}`
  }

  return singular(type, value, indent)
}

function singular(type: string, value: unknown, indent: string): string | undefined {
  switch (type) {
    case 'string':
      return protojsonString((value as string | undefined) ?? '')
    case 'int64':
    case 'uint64':
      return `"${(value as string | undefined) ?? '0'}"`
    case 'int32':
    case 'uint32':
      return String((value as number | undefined) ?? 0)
    case 'bool':
      return value ? 'true' : 'false'
    case 'bytes':
      return `"${Buffer.from((value as Uint8Array | undefined) ?? []).toString('base64')}"`
    case 'double':
    case 'float':
      return protojsonFloat((value as number | undefined) ?? 0)
    default:
      if (type in PROTOJSON_MESSAGES)
        return value === undefined || value === null ? undefined : message(type, value as Record<string, unknown>, indent)
      // An enum: ts-proto decodes it to its value name.
      return `"${String(value)}"`
  }
}

/** protojson's floats: NaN and the infinities as strings, other values as encoding/json writes them. */
function protojsonFloat(value: number): string {
  if (Number.isNaN(value)) return '"NaN"'
  if (value === Infinity) return '"Infinity"'
  if (value === -Infinity) return '"-Infinity"'
  return String(value)
}
