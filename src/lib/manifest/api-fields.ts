/**
 * The Kubernetes Pod API as data (pod-api-fields.ts, written from the API's types.go of each release):
 * which keys an object of a type may have, in any release podctl knows. A key that none has is what
 * `kubectl apply` refuses with its default strict field validation ("unknown field"); a key of some
 * release that podctl does not read is dropped, as an API server without the field's feature gate
 * (or of an older release) drops it.
 */
import {closestField} from './names.js'
import {POD_API_RELEASES, POD_API_TABLE} from './pod-api-fields.js'

/** The API's object types podctl's rules name (ObjectRule.api). */
export type ApiType = string

/** Each type's fields (name → the field's object type, '' for a value), read from the table on first use. */
const fieldsByType = new Map<string, ReadonlyMap<string, string>>()

function fieldsOf(type: ApiType): ReadonlyMap<string, string> {
  let fields = fieldsByType.get(type)
  if (!fields) {
    const entries = (Object.hasOwn(POD_API_TABLE, type) ? POD_API_TABLE[type] : '').split(' ').filter(Boolean)
    fields = new Map(
      entries.map((entry): [string, string] => {
        const colon = entry.indexOf(':')
        return colon === -1 ? [entry, ''] : [entry.slice(0, colon), entry.slice(colon + 1)]
      }),
    )
    fieldsByType.set(type, fields)
  }

  return fields
}

/** Whether the table has this type (a rule naming one it does not have is a mistake the tests catch). */
export function isApiType(type: string): boolean {
  return Object.hasOwn(POD_API_TABLE, type)
}

/** "1.17–1.36": the releases the table covers, for messages. */
export const API_RELEASES = `${POD_API_RELEASES.oldest}–${POD_API_RELEASES.newest}`

/** Whether `key` is a field of `type` in some release ("__proto__" and "constructor" are keys like any other, and no fields). */
export function isApiField(type: ApiType, key: string): boolean {
  return fieldsOf(type).has(key)
}

/** Why `key` is no field of `type`: the did-you-mean of kubectl users expect, else the releases looked in. */
export function unknownFieldMessage(type: ApiType, key: string): string {
  const guess = closestField(key, [...fieldsOf(type).keys()])
  return guess ? `is not a known field; did you mean ${guess}?` : `is not a field of ${type} in Kubernetes ${API_RELEASES}`
}

/**
 * Every key under `value` (the value of field `key` of a `type`) that no release has, as
 * `{path, message}`: for the fields podctl does not read itself (warned, ignored, dropped), whose
 * contents kubectl's strict validation checks all the same.
 */
export function unknownFieldsUnder(type: ApiType, key: string, value: unknown, path: string): Array<{path: string; message: string}> {
  const found: Array<{path: string; message: string}> = []
  const fieldType = fieldsOf(type).get(key) ?? ''
  walk(fieldType, value, path, found)
  return found
}

function walk(fieldType: string, value: unknown, path: string, found: Array<{path: string; message: string}>): void {
  if (fieldType === '' || value === null || typeof value !== 'object') return
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) walk(fieldType, item, `${path}[${index}]`, found)
    return
  }

  if (fieldType.startsWith('map:')) {
    for (const [key, item] of Object.entries(value as object)) walk(fieldType.slice(4), item, `${path}.${key}`, found)
    return
  }

  const type = fieldType as ApiType
  for (const [key, item] of Object.entries(value as object)) {
    if (isApiField(type, key)) walk(fieldsOf(type).get(key) ?? '', item, `${path}.${key}`, found)
    else found.push({path: `${path}.${key}`, message: unknownFieldMessage(type, key)})
  }
}
