#!/usr/bin/env node
/**
 * Writes src/lib/manifest/pod-api-fields.ts: every field of a v1 Pod, type by type, as the Kubernetes
 * API defines it (the JSON names of k8s.io/api core/v1 types.go and apimachinery meta/v1 types.go),
 * merged over several Kubernetes releases, so a manifest field that no release has can be refused
 * (kubectl's strict field validation) while one of some release is only dropped.
 *
 * Usage: node scripts/pod-api-fields.mjs GIT_DIR REV=VERSION [REV=VERSION ...]
 * GIT_DIR is any repository that vendors k8s.io/api and k8s.io/apimachinery at those revisions (CRI-O
 * does: `git show v1.34.0:go.mod` names its k8s.io/api); REV is a commit or tag of it, VERSION the
 * Kubernetes minor release its vendored k8s.io/api belongs to. Nothing fetched is written anywhere else.
 */
import {execFileSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'

const CORE = 'vendor/k8s.io/api/core/v1/types.go'
const META = 'vendor/k8s.io/apimachinery/pkg/apis/meta/v1/types.go'
/** Types with their own JSON form (a string or a number, or raw JSON): values, not objects with fields. */
const OPAQUE = new Set(['Time', 'MicroTime', 'Quantity', 'IntOrString', 'FieldsV1', 'RawExtension', 'Duration'])

/** `type X struct { ... }` blocks of a Go file → {X: [{json, type, inline}]}. */
function structs(source) {
  const out = {}
  const lines = source.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const start = /^type (\w+) struct \{\s*$/.exec(lines[i])
    if (!start) continue
    const fields = []
    for (i++; i < lines.length && lines[i] !== '}'; i++) {
      const line = lines[i].trim()
      if (line.startsWith('//') || line === '') continue
      const tag = /`[^`]*json:"([^"]*)"[^`]*`/.exec(line)
      const declaration = line.replace(/`.*$/, '').trim()
      if (!tag) continue
      const [json] = tag[1].split(',')
      if (json === '-') continue
      const parts = declaration.split(/\s+/)
      // An embedded type has no field name: `VolumeSource \`json:",inline"\``.
      const type = baseType(parts.length === 1 ? parts[0] : parts.slice(1).join(' '))
      fields.push(json === '' ? {inline: true, type} : {json, type, map: /^\*?map\[/.test(parts.at(-1) ?? '')})
    }

    out[start[1]] = fields
  }

  return out
}

/** `*[]metav1.Time` → `Time`; `map[string]Foo` → `Foo`. */
function baseType(expression) {
  return expression
    .replace(/^[*[\]]+/, '')
    .replace(/^map\[[^\]]*\][*[\]]*/, '')
    .replace(/^\w+\./, '')
}

function gitShow(gitDir, rev, path) {
  return execFileSync('git', ['-C', gitDir, 'show', `${rev}:${path}`], {encoding: 'utf8', maxBuffer: 64 * 1024 * 1024})
}

/** The fields of every struct reachable from Pod, inline structs flattened: {Type: {json: 'Type' | ''}}. */
function reachable(types) {
  const out = {}
  const visit = (name) => {
    if (out[name] || !types[name] || OPAQUE.has(name)) return
    const fields = {}
    out[name] = fields
    const add = (list) => {
      for (const field of list) {
        if (field.inline) {
          add(types[field.type] ?? [])
          continue
        }

        const struct = types[field.type] && !OPAQUE.has(field.type) ? field.type : ''
        fields[field.json] = struct && field.map ? `map:${struct}` : struct
        if (struct) visit(struct)
      }
    }

    add(types[name])
  }

  visit('Pod')
  return out
}

const [gitDir, ...revisions] = process.argv.slice(2)
if (!gitDir || revisions.length === 0) throw new Error('usage: node scripts/pod-api-fields.mjs GIT_DIR REV=VERSION [REV=VERSION ...]')

const merged = {}
const versions = []
// Oldest first, so a field's type is the newest release's.
for (const spec of revisions) {
  const [rev, version] = spec.split('=')
  versions.push(version)
  const types = {...structs(gitShow(gitDir, rev, META)), ...structs(gitShow(gitDir, rev, CORE))}
  for (const [type, fields] of Object.entries(reachable(types))) merged[type] = {...merged[type], ...fields}
}

const sortedKeys = (object) => Object.keys(object).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
// One line per type: its fields as "name" (a value) or "name:Type" (an object, "name:map:Type" a map of them).
const body = sortedKeys(merged)
  .map(
    (type) =>
      `  ${type}: '${sortedKeys(merged[type])
        .map((json) => (merged[type][json] ? `${json}:${merged[type][json]}` : json))
        .join(' ')}',`,
  )
  .join('\n')

writeFileSync(
  new URL('../src/lib/manifest/pod-api-fields.ts', import.meta.url),
  `/* eslint-disable @stylistic/max-len -- written by a script: one line per API type */
/**
 * Every field of a v1 Pod in Kubernetes ${versions[0]} to ${versions.at(-1)}, by type: each field's JSON name, and for a
 * field that is an object its type ("name:Type"; "name:map:Type" for a map of them). Written by
 * scripts/pod-api-fields.mjs from k8s.io/api core/v1 and apimachinery meta/v1 types.go of releases
 * ${versions.join(', ')}: do not edit.
 */

/** The releases the table was merged from. */
export const POD_API_RELEASES = {oldest: '${versions[0]}', newest: '${versions.at(-1)}'} as const

export const POD_API_TABLE: Readonly<Record<string, string>> = {
${body}
}
`,
)
console.log(`${Object.keys(merged).length} types, ${Object.values(merged).reduce((n, fields) => n + Object.keys(fields).length, 0)} fields`)
