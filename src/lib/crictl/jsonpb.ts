/**
 * CRI messages as crictl v1.29 prints them: golang/protobuf's jsonpb with EmitDefaults and a
 * two-space indent. Every field crictl's copy of the CRI API declares is written, in declaration
 * order, under its lowerCamelCase JSON name: unset messages as null, empty lists as "[\n  ]" and
 * empty maps as "{\n  }" (the closing bracket on its own line, at the key's indent), int64 and
 * uint64 as quoted decimals, enums by name, bytes as base64, map entries sorted by key, strings
 * with Go's escapes. Values are the ts-proto objects the client decodes (int64 as strings, enums as
 * their names), read through the field list generated from the wire schema (jsonpb-schema.ts).
 */
import {JSONPB_MESSAGES, type JsonpbField} from '../../generated/runtime/v1/jsonpb-schema.js'
import {compareGoStrings, goJsonString} from './go-json.js'

const INDENT = '  '

export type JsonpbMessageName = keyof typeof JSONPB_MESSAGES & string

/** The message `value` of CRI type `type`, as crictl's protobufObjectToJSON writes it. */
export function toJsonpb(type: JsonpbMessageName, value: object): string {
  return message(type, value as Record<string, unknown>, '')
}

function message(type: string, value: Record<string, unknown>, indent: string): string {
  const fields = JSONPB_MESSAGES[type]
  if (!fields) throw new Error(`crictl JSON: no field list for CRI message ${type}; regenerate it with scripts/jsonpb-schema-from-wire.mjs`)
  const inner = indent + INDENT
  const lines = fields.map((field) => `${inner}"${field[0]}": ${fieldValue(field, value[field[0]], indent)}`)
  return `{\n${lines.join(',\n')}\n${indent}}`
}

function fieldValue([, type, shape]: JsonpbField, value: unknown, indent: string): string {
  const inner = indent + INDENT
  const item = inner + INDENT
  if (shape === 'list') {
    const items = (value as unknown[] | undefined) ?? []
    return `[${items.map((entry) => `\n${item}${singular(type, entry, inner)}`).join(',')}\n${inner}]`
  }

  if (shape === 'map') {
    const entries = Object.entries((value as Record<string, unknown> | undefined) ?? {}).sort(([a], [b]) => compareGoStrings(a, b))
    return `{${entries.map(([key, entry]) => `\n${item}${goJsonString(key)}: ${singular(type, entry, inner)}`).join(',')}\n${inner}}`
  }

  return singular(type, value, indent)
}

function singular(type: string, value: unknown, indent: string): string {
  switch (type) {
    case 'string':
      return goJsonString((value as string | undefined) ?? '')
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
      return goFloat((value as number | undefined) ?? 0)
    default:
      if (type in JSONPB_MESSAGES)
        return value === undefined || value === null ? 'null' : message(type, value as Record<string, unknown>, indent + INDENT)
      // An enum: ts-proto decodes it to its value name.
      return `"${String(value)}"`
  }
}

/** jsonpb's floats: NaN and the infinities as strings, other values as json.Marshal writes them. */
function goFloat(value: number): string {
  if (Number.isNaN(value)) return '"NaN"'
  if (value === Infinity) return '"Infinity"'
  if (value === -Infinity) return '"-Infinity"'
  return String(value)
}
