/**
 * `inspect -o table` (crictl's `inspect*`/`imagefsinfo -o table`): the status documents as
 * `Key: value` blocks, one per object, the fields crictl shows for each kind.
 */
import {humanSize} from './format.js'
import {renderFields} from './table.js'

type Doc = Record<string, unknown>

const get = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Doc)[key] : undefined), value)
const text = (value: unknown): string => (value === undefined || value === null ? '' : String(value))

function mapLines(value: unknown): string {
  const entries = Object.entries((value as Record<string, string> | undefined) ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return entries.map(([key, item]) => `\n  ${key} -> ${item}`).join('')
}

function containerFields(status: Doc): Array<[string, string]> {
  return [
    ['ID', text(status.id)],
    ['Name', text(get(status, 'metadata', 'name'))],
    ['Attempt', text(get(status, 'metadata', 'attempt') ?? 0)],
    ['State', text(status.state)],
    ['Image', text(get(status, 'image', 'image'))],
    ['Image Ref', text(status.imageRef)],
    ['Created', text(status.createdAt)],
    ['Started', text(status.startedAt)],
    ['Finished', text(status.finishedAt)],
    ['Exit Code', text(status.exitCode ?? 0)],
    ['Reason', text(status.reason)],
    ['Labels', mapLines(status.labels)],
    ['Annotations', mapLines(status.annotations)],
  ]
}

function podFields(status: Doc): Array<[string, string]> {
  const additional = (get(status, 'network', 'additionalIps') as Array<{ip: string}> | undefined) ?? []
  return [
    ['ID', text(status.id)],
    ['Name', text(get(status, 'metadata', 'name'))],
    ['UID', text(get(status, 'metadata', 'uid'))],
    ['Namespace', text(get(status, 'metadata', 'namespace'))],
    ['Attempt', text(get(status, 'metadata', 'attempt') ?? 0)],
    ['Status', text(status.state)],
    ['Created', text(status.createdAt)],
    ['IP Addresses', text(get(status, 'network', 'ip'))],
    ['Additional IP', additional.map((entry) => entry.ip).join(', ')],
    ['Runtime Handler', text(status.runtimeHandler) || '(default)'],
    ['Labels', mapLines(status.labels)],
    ['Annotations', mapLines(status.annotations)],
  ]
}

function imageFields(status: Doc): Array<[string, string]> {
  const list = (value: unknown) => ((value as string[] | undefined) ?? []).join(', ')
  return [
    ['ID', text(status.id)],
    ['Tags', list(status.repoTags)],
    ['Digests', list(status.repoDigests)],
    ['Size', humanSize(text(status.size) || 0)],
    ['Pinned', text(status.pinned ?? false)],
  ]
}

/** Which kind of object a status document describes, from its fields. */
export function statusKind(status: Doc): 'container' | 'image' | 'pod' {
  if ('repoTags' in status) return 'image'
  if ('network' in status || String(status.state ?? '').startsWith('SANDBOX')) return 'pod'
  return 'container'
}

/** One `Key: value` block per document, separated by blank lines. */
export function statusTable(documents: readonly Doc[]): string {
  return documents
    .map((document) => {
      const status = (document.status ?? {}) as Doc
      const kind = statusKind(status)
      const fields = kind === 'image' ? imageFields(status) : kind === 'pod' ? podFields(status) : containerFields(status)
      return renderFields(fields.filter(([, value]) => value !== ''))
    })
    .join('\n\n')
}
