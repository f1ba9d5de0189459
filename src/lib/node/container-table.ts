/**
 * `ps`'s table read straight from ListContainers' bytes (cri/container-columns.ts): the same rows,
 * filters and order as listContainers + the command's table, with IDs and names copied from the
 * message instead of becoming strings and objects first. On a node of 10 000 containers, that was
 * most of a listing's own time (decoding, and the garbage collector copying what it made).
 * It takes the common case, a kubelet's containers in plain ASCII; for anything else it hands back
 * the containers' entries, for the string table to draw.
 */
import type {CriClient} from '../cri/client.js'
import {type ContainerColumns, Span, spanIndex, text} from '../cri/container-columns.js'
import type {ContainerListing} from '../cri/decoders.js'
import {type PooledText, poolText, setText, spanCells, type SpanCells} from '../util/span-cells.js'
import {compareNanosWordsDesc, nanosToMs, nanosWordsToMs} from '../util/time.js'
import {nameMatcher} from '../util/filters.js'
import {ContainerLabel, PodLabel} from '../kube/labels.js'
import {SHORT_ID_LENGTH, shortId} from '../kube/helpers.js'
import type {Container, Image} from '../../generated/runtime/v1/api.js'
import {
  checkFilters,
  type ContainerImageFields,
  type ContainerListEntry,
  type ContainerListFilters,
  containerListRequest,
  containerName,
  imageCandidates,
  imageName,
  imageTagsById,
  isDigest,
  listImagesForDisplay,
  namedByLabels,
  selectContainers,
  stateLabel,
  stateToRequest,
  truncateDigest,
} from './containers.js'

export const CONTAINER_TABLE_HEADERS = ['CONTAINER', 'IMAGE', 'CREATED', 'STATE', 'NAME', 'ATTEMPT', 'POD ID', 'POD', 'NAMESPACE']

export interface ContainerTableOptions {
  noTrunc: boolean
  /** A state's display name as the table shows it (painted or not). */
  paintState: (state: string) => string
  nowMs: number
  /** The CREATED cell of a container created this many milliseconds ago ("3 minutes ago"). */
  age: (elapsedMs: number) => string
}

/** Draws the cells with the headers as bytes, or undefined when they are not plain ASCII (output/span-table.ts). */
export type SpanRenderer = (headers: readonly string[], cells: SpanCells) => Buffer | undefined

/** The labels read as columns: the kubelet's names of the container and of its pod. */
const LABEL_KEYS = [ContainerLabel.name, PodLabel.name, PodLabel.namespace]
const NAME_LABEL = Span.label0
const POD_LABEL = Span.label1
const NAMESPACE_LABEL = Span.label2

/** The table drawn (`table`), or, where it cannot be drawn from bytes, the entries to draw it from. */
export type ContainerTable =
  {table: Buffer; count: number; containers: () => Container[]} | {table?: undefined; entries: ContainerListEntry[]}

export async function containerTable(
  client: CriClient,
  filters: ContainerListFilters,
  options: ContainerTableOptions,
  render: SpanRenderer,
): Promise<ContainerTable> {
  checkFilters(filters)
  const [listing, images] = await Promise.all([
    client.listContainerColumns(containerListRequest(filters), LABEL_KEYS),
    listImagesForDisplay(client),
  ])
  const rows = filters.pod === undefined ? selectRows(listing, filters, images) : undefined
  const table = rows && render(CONTAINER_TABLE_HEADERS, cellsOf(listing, rows, images, options))
  if (rows && table) return {table, count: rows.length, containers: () => pick(listing.containers(), rows)}
  // --pod, containers that do not name their pods, cells that are not plain ASCII: listContainers' way.
  const containers = listing.containers()
  const named = containers.every(namedByLabels)
  const sandboxes = filters.pod === undefined && named ? [] : (await client.listSummaries('listPodSandbox', {})).items
  return {entries: selectContainers(containers, sandboxes, filters, images)}
}

/** -o wide's columns and how its non-zero exit codes are painted. */
export interface EntryRowOptions extends ContainerTableOptions {
  wide?: boolean
  paintExitCode?: (text: string) => string
}

/**
 * The same table's rows from listContainers' entries, as strings: for -o wide, colour, and whatever
 * the bytes cannot draw (test/unit/node/container-table.test.ts holds the two to the same output).
 */
export function entryRows(entries: readonly ContainerListEntry[], options: EntryRowOptions): {headers: string[]; rows: string[][]} {
  const {noTrunc, nowMs, wide} = options
  const headers = wide ? [...CONTAINER_TABLE_HEADERS, 'EXIT CODE', 'IMAGE REF'] : [...CONTAINER_TABLE_HEADERS]
  // A few states for thousands of rows: each painted once.
  const painted = new Map<string, string>()
  const paint = (state: string) => painted.get(state) ?? painted.set(state, options.paintState(state)).get(state)!
  const rows = entries.map((entry) => {
    const {container} = entry
    const row = [
      noTrunc ? container.id : shortId(container.id),
      truncateDigest(entry.imageName, noTrunc),
      options.age(nowMs - nanosToMs(container.createdAt)),
      paint(stateLabel(container.state)),
      containerName(container),
      String(container.metadata?.attempt ?? 0),
      noTrunc ? container.podSandboxId : shortId(container.podSandboxId),
      entry.podName || '-',
      entry.podNamespace || '-',
    ]
    if (wide) {
      const exitCode = entry.exitCode === undefined ? '-' : String(entry.exitCode)
      row.push(entry.exitCode ? (options.paintExitCode ?? String)(exitCode) : exitCode, truncateDigest(container.imageRef, noTrunc) || '-')
    }

    return row
  })
  return {headers, rows}
}

/** The indices of the containers selectContainers would keep, in its order; undefined when one lacks its pod's labels. */
function selectRows(listing: ContainerListing, filters: ContainerListFilters, images: Image[] | undefined): number[] | undefined {
  const {columns} = listing
  const wantedState = stateToRequest(filters)
  const matchName = nameMatcher(filters.name)
  const matchNamespace = nameMatcher(filters.namespace)
  const matchImage = nameMatcher(filters.image)
  const tags = filters.image === undefined ? undefined : imageTagsById(images)
  const rows: number[] = []
  for (let i = 0; i < columns.count; i++) {
    if (!hasText(columns, i, POD_LABEL) || !hasText(columns, i, NAMESPACE_LABEL)) return undefined
    if (wantedState !== undefined && listing.stateName(columns.states[i]) !== wantedState) continue
    if (filters.id !== undefined && !text(columns, i, Span.id).startsWith(filters.id)) continue
    if (filters.name !== undefined && !matchName(nameOf(columns, i))) continue
    if (tags && !imageCandidates(imageFields(columns, i), tags).some(matchImage)) continue
    if (filters.namespace !== undefined && !matchNamespace(text(columns, i, NAMESPACE_LABEL))) continue
    rows.push(i)
  }

  const {createdHigh: high, createdLow: low} = columns
  rows.sort(
    (a, b) => compareNanosWordsDesc(high[a], low[a], high[b], low[b]) || text(columns, a, Span.id).localeCompare(text(columns, b, Span.id)),
  )
  const count = filters.latest ? 1 : filters.last
  return count !== undefined && count > 0 ? rows.slice(0, count) : rows
}

function cellsOf(listing: ContainerListing, rows: number[], images: Image[] | undefined, options: ContainerTableOptions): SpanCells {
  const cells = spanCells(listing.columns.bytes, rows.length, CONTAINER_TABLE_HEADERS.length)
  const filler = new RowFiller(listing, cells, imageTagsById(images), options)
  for (let row = 0; row < rows.length; row++) filler.fill(row, rows[row])
  return cells
}

/**
 * The cells of one row at a time (a method per row, which optimises sooner than one long loop);
 * what repeats down a column (images, ages, states, attempts) is made and pooled once.
 */
class RowFiller {
  private readonly images = new Map<string, PooledText>()
  private readonly ages = new Map<number, PooledText>()
  private lastSecond = Number.NaN
  private lastAge: PooledText = {start: -1, end: 0}
  private readonly attempts: PooledText[] = []
  private readonly states = new Map<number, PooledText>()
  private readonly columns: ContainerColumns

  constructor(
    private readonly listing: ContainerListing,
    private readonly cells: SpanCells,
    private readonly tags: ReadonlyMap<string, string[]>,
    private readonly options: ContainerTableOptions,
  ) {
    this.columns = listing.columns
  }

  fill(row: number, i: number): void {
    const {columns, cells} = this
    const short = !this.options.noTrunc
    const cell = row * CONTAINER_TABLE_HEADERS.length
    this.span(cell, i, Span.id, short)
    setText(cells, cell + 1, this.image(i))
    setText(cells, cell + 2, this.age(i))
    setText(cells, cell + 3, this.state(columns.states[i]))
    this.span(cell + 4, i, hasText(columns, i, NAME_LABEL) ? NAME_LABEL : Span.name, false)
    const attempt = columns.attempts[i]
    const attemptText = attempt < 64 ? (this.attempts[attempt] ??= poolText(cells, String(attempt))) : poolText(cells, String(attempt))
    setText(cells, cell + 5, attemptText)
    this.span(cell + 6, i, Span.podSandboxId, short)
    this.span(cell + 7, i, POD_LABEL, false)
    this.span(cell + 8, i, NAMESPACE_LABEL, false)
  }

  /** A cell that is container i's span, shortened as truncateId does when `short`. */
  private span(cell: number, i: number, field: number, short: boolean): void {
    const {columns} = this
    const at = spanIndex(i, field)
    const start = columns.starts[at]
    if (start < 0) return
    const end = columns.ends[at]
    const from = short ? shortIdStart(columns.bytes, start, end) : start
    this.cells.starts[cell] = from
    this.cells.ends[cell] = short ? Math.min(end, from + SHORT_ID_LENGTH) : end
  }

  /** The IMAGE cell: imageName then truncateDigest, remembered per image name given at creation (a node runs few images). */
  private image(i: number): PooledText {
    const {columns} = this
    const specified = text(columns, i, Span.userSpecifiedImage) || text(columns, i, Span.image)
    const remembered = this.images.get(specified)
    if (remembered !== undefined) return remembered
    const shown = poolText(this.cells, truncateDigest(imageName(imageFields(columns, i), this.tags), this.options.noTrunc))
    // A name given at creation is shown as it is, whatever else the container says; a digest depends on the rest.
    if (specified && !isDigest(specified)) this.images.set(specified, shown)
    return shown
  }

  /** The CREATED cell, remembered per whole second: the only unit an age shows (humanDuration). */
  private age(i: number): PooledText {
    const ms = nanosWordsToMs(this.columns.createdHigh[i], this.columns.createdLow[i])
    const elapsed = this.options.nowMs - ms
    const second = Math.floor(elapsed / 1000)
    // Rows are newest first, so a row's age is most often the one before it.
    if (second === this.lastSecond) return this.lastAge
    let shown = this.ages.get(second)
    if (shown === undefined) this.ages.set(second, (shown = poolText(this.cells, this.options.age(elapsed))))
    this.lastSecond = second
    this.lastAge = shown
    return shown
  }

  private state(value: number): PooledText {
    let shown = this.states.get(value)
    if (shown === undefined) {
      shown = poolText(this.cells, this.options.paintState(stateLabel(this.listing.stateName(value))))
      this.states.set(value, shown)
    }

    return shown
  }
}

/** What imageName and imageCandidates read of a container. */
function imageFields(columns: ContainerColumns, i: number): ContainerImageFields {
  return {
    image: {
      image: text(columns, i, Span.image),
      userSpecifiedImage: text(columns, i, Span.userSpecifiedImage),
      annotations: {},
      runtimeHandler: '',
      imageRef: '',
    },
    imageRef: text(columns, i, Span.imageRef),
    imageId: text(columns, i, Span.imageId),
  }
}

/** containerName: the kubelet's label, else the metadata's name. */
function nameOf(columns: ContainerColumns, i: number): string {
  return text(columns, i, NAME_LABEL) || text(columns, i, Span.name)
}

/** Whether container i holds span s and it is not empty (an absent span's start and end are both -1). */
function hasText(columns: ContainerColumns, i: number, span: number): boolean {
  const at = spanIndex(i, span)
  return columns.ends[at] > columns.starts[at]
}

/** Where shortId starts, on bytes: after "algorithm:" when what precedes the first colon is [a-z0-9]+ (its ALGORITHM). */
function shortIdStart(bytes: Uint8Array, start: number, end: number): number {
  // The typed array's own search: an ID is 64 hex digits, most without a colon; a byte loop over each
  // ran cold, and Buffer#indexOf's argument handling cost as much again.
  const colon = Uint8Array.prototype.indexOf.call(bytes, 0x3a, start)
  if (colon < 0 || colon >= end || colon === start) return start
  for (let j = start; j < colon; j++) {
    const byte = bytes[j]
    if (!((byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39))) return start
  }

  return colon + 1
}

function pick(containers: Container[], rows: number[]): Container[] {
  return rows.map((i) => containers[i])
}
