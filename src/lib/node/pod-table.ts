/**
 * `pods`'s table read straight from ListPodSandbox's bytes (cri/sandbox-columns.ts), as
 * container-table.ts draws `ps`'s: the same rows, filters and order as listPods + the command's
 * table, with IDs, names and namespaces copied from the message. Cells that are not plain ASCII
 * (colour included) hand back the entries, for the string table to draw.
 */
import type {CriClient} from '../cri/client.js'
import type {SandboxListing} from '../cri/decoders.js'
import {SandboxSpan, sandboxSpanIndex, sandboxText} from '../cri/sandbox-columns.js'
import type {GroupCount} from '../cri/count-states.js'
import {shortId} from '../kube/helpers.js'
import {nameMatcher} from '../util/filters.js'
import {spanCells, type SpanCells} from '../util/span-cells.js'
import {nanosToMs} from '../util/time.js'
import type {PodSandbox} from '../../generated/runtime/v1/api.js'
import type {SpanRenderer} from './container-table.js'
import {type PodListEntry, type PodListFilters, podListRequest, selectPods} from './pods.js'
import {Ages, compareWordsDesc, SHORT_ID, shortIdStart} from './row-cells.js'

export const POD_TABLE_HEADERS = ['POD ID', 'NAME', 'NAMESPACE', 'STATE', 'CONTAINERS', 'ATTEMPT', 'CREATED']

export interface PodTableOptions {
  noTrunc: boolean
  /** The STATE cell of a ready and of a not-ready sandbox (painted or not). */
  ready: string
  notReady: string
  nowMs: number
  /** The CREATED cell of a sandbox created this many milliseconds ago ("3 minutes ago"). */
  age: (elapsedMs: number) => string
}

/** The table drawn (`table`), or, where it cannot be drawn from bytes, the entries to draw it from. */
export type PodTable = {table: Buffer; count: number; sandboxes: () => PodSandbox[]} | {table?: undefined; entries: PodListEntry[]}

export async function podTable(
  client: CriClient,
  filters: PodListFilters,
  options: PodTableOptions,
  render: SpanRenderer,
): Promise<PodTable> {
  const [listing, counts] = await Promise.all([
    client.listColumns('listPodSandbox', podListRequest(filters)),
    client.countContainersBySandbox({filter: {}}),
  ])
  const rows = selectRows(listing, filters)
  const table = render(POD_TABLE_HEADERS, cellsOf(listing, rows, counts, options))
  if (table) return {table, count: rows.length, sandboxes: () => rows.map((i) => listing.sandboxes()[i])}
  return {entries: selectPods(listing.sandboxes(), counts, filters)}
}

/** The indices of the sandboxes listPods would keep, in its order. */
function selectRows(listing: SandboxListing, filters: PodListFilters): number[] {
  const {columns} = listing
  const matchName = nameMatcher(filters.name)
  const matchNamespace = nameMatcher(filters.namespace)
  const rows: number[] = []
  for (let i = 0; i < columns.count; i++) {
    if (filters.name !== undefined && !matchName(sandboxText(columns, i, SandboxSpan.name))) continue
    if (filters.namespace !== undefined && !matchNamespace(sandboxText(columns, i, SandboxSpan.namespace))) continue
    if (filters.id !== undefined && !sandboxText(columns, i, SandboxSpan.id).startsWith(filters.id)) continue
    rows.push(i)
  }

  const {createdHigh: high, createdLow: low} = columns
  rows.sort(
    (a, b) =>
      compareWordsDesc(high[a], low[a], high[b], low[b]) ||
      sandboxText(columns, a, SandboxSpan.id).localeCompare(sandboxText(columns, b, SandboxSpan.id)),
  )
  const count = filters.latest ? 1 : filters.last
  return count !== undefined && count > 0 ? rows.slice(0, count) : rows
}

function cellsOf(listing: SandboxListing, rows: number[], counts: Map<string, GroupCount>, options: PodTableOptions): SpanCells {
  const {columns} = listing
  const cells = spanCells(columns.bytes, rows.length, POD_TABLE_HEADERS.length)
  const {starts, ends, texts} = cells
  const ages = new Ages(options.nowMs, options.age)
  const attempts: string[] = []
  const containers = new Map<number, string>()
  const short = !options.noTrunc
  // eslint-disable-next-line unicorn/no-for-loop -- the row is the cell's offset; entries() runs cold in a one-shot process
  for (let row = 0; row < rows.length; row++) {
    const i = rows[row]
    const cell = row * POD_TABLE_HEADERS.length
    const idAt = sandboxSpanIndex(i, SandboxSpan.id)
    const idStart = columns.starts[idAt]
    if (idStart >= 0) {
      const from = short ? shortIdStart(columns.bytes, idStart, columns.ends[idAt]) : idStart
      starts[cell] = from
      ends[cell] = short ? Math.min(columns.ends[idAt], from + SHORT_ID) : columns.ends[idAt]
    }

    const nameAt = sandboxSpanIndex(i, SandboxSpan.name)
    starts[cell + 1] = columns.starts[nameAt]
    ends[cell + 1] = columns.ends[nameAt]
    const namespaceAt = sandboxSpanIndex(i, SandboxSpan.namespace)
    starts[cell + 2] = columns.starts[namespaceAt]
    ends[cell + 2] = columns.ends[namespaceAt]

    texts[cell + 3] = listing.stateName(columns.states[i]) === 'SANDBOX_READY' ? options.ready : options.notReady
    const count = counts.get(sandboxText(columns, i, SandboxSpan.id))
    const running = count?.matching ?? 0
    const total = count?.total ?? 0
    // running/total: small numbers, few pairs.
    const key = running * 65_536 + total
    let shown = total < 65_536 ? containers.get(key) : `${running}/${total}`
    if (shown === undefined) containers.set(key, (shown = `${running}/${total}`))
    texts[cell + 4] = shown
    const attempt = columns.attempts[i]
    texts[cell + 5] = attempt < 64 ? (attempts[attempt] ??= String(attempt)) : String(attempt)
    texts[cell + 6] = ages.of(columns.createdHigh[i], columns.createdLow[i])
  }

  return cells
}

/** The same table's rows from listPods' entries, as strings: for -o wide, colour, and whatever the bytes cannot draw. */
export function podEntryRows(entries: readonly PodListEntry[], options: PodTableOptions): string[][] {
  return entries.map(({sandbox, containers}) => [
    options.noTrunc ? sandbox.id : shortId(sandbox.id),
    sandbox.metadata?.name ?? '',
    sandbox.metadata?.namespace ?? '',
    sandbox.state === 'SANDBOX_READY' ? options.ready : options.notReady,
    `${containers.running}/${containers.total}`,
    String(sandbox.metadata?.attempt ?? 0),
    options.age(options.nowMs - nanosToMs(sandbox.createdAt)),
  ])
}
