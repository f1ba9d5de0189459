/**
 * The screen of `podctl ui` as lines of text, each exactly the terminal's width: the node header,
 * a title, the open screen (pods, containers, a log, describe, help) and a footer. Pure, so what a
 * person sees is unit-tested at 80x24 and wider; the Ink view (view/) only paints these lines, with
 * colour where the terminal allows it and marks that read without it.
 */
import {humanSize} from '../output/format.js'
import {KEY_HELP, type ScreenKind} from './keys.js'
import type {NodeHeader} from './node-header.js'
import {type ContainerRow, formatAge, formatCpu, formatMemory, type PodRow, type Tone} from './pod-rows.js'
import {
  HEADER_LINES,
  listHeight,
  type Screen,
  screen,
  selectedContainer,
  selectedPod,
  type ViewState,
  visibleContainers,
  visiblePods,
} from './view-state.js'

export interface Line {
  text: string
  tone?: Tone | 'title' | 'heading' | 'warn'
  /** The selected row. */
  selected?: boolean
}

interface Column<Row> {
  title: string
  /** Smallest useful width; flexible columns share what is left. */
  width: number
  flex?: boolean
  /** Columns with the lowest priority go first when the terminal is narrow. */
  priority: number
  cell: (row: Row) => string
  right?: boolean
}

const POD_COLUMNS: Array<Column<PodRow>> = [
  {title: 'NAME', width: 15, flex: true, priority: 9, cell: (r) => r.name},
  {title: 'NAMESPACE', width: 11, flex: true, priority: 7, cell: (r) => r.namespace},
  {title: 'READY', width: 5, priority: 8, cell: (r) => r.ready},
  {title: 'STATUS', width: 16, priority: 9, cell: (r) => r.status},
  {title: 'RESTARTS', width: 8, priority: 6, cell: (r) => String(r.restarts), right: true},
  {title: 'CPU', width: 6, priority: 8, cell: (r) => formatCpu(r.cpuCores), right: true},
  {title: 'MEM', width: 6, priority: 8, cell: (r) => formatMemory(r.memoryBytes), right: true},
  {title: 'AGE', width: 4, priority: 5, cell: (r) => formatAge(Date.now() - r.createdAtMs), right: true},
  {title: 'IP', width: 15, priority: 4, cell: (r) => r.ip || '-'},
]

const CONTAINER_COLUMNS: Array<Column<ContainerRow>> = [
  {title: 'NAME', width: 12, flex: true, priority: 9, cell: (r) => r.name},
  {title: 'TYPE', width: 7, priority: 3, cell: (r) => r.type},
  {title: 'STATE', width: 16, priority: 9, cell: (r) => r.state},
  {title: 'READY', width: 5, priority: 6, cell: (r) => String(r.ready)},
  {title: 'RESTARTS', width: 8, priority: 7, cell: (r) => String(r.restarts), right: true},
  {title: 'LAST STATE', width: 14, priority: 5, cell: (r) => r.lastState},
  {title: 'CPU', width: 6, priority: 8, cell: (r) => formatCpu(r.cpuCores), right: true},
  {title: 'MEM', width: 6, priority: 8, cell: (r) => formatMemory(r.memoryBytes), right: true},
  {title: 'IMAGE', width: 14, flex: true, priority: 4, cell: (r) => r.image},
  {title: 'PORTS', width: 8, priority: 2, cell: (r) => r.ports || '-'},
]

/** Every line of the screen: never more than rows - 1 (a full last line makes terminals scroll). */
export function screenLines(state: ViewState): Line[] {
  const width = state.size.columns
  const lines = [...headerLines(state), ...bodyLines(state), footerLine(state)]
  return lines.slice(0, Math.max(1, state.size.rows - 1)).map((line) => ({...line, text: fit(line.text, width)}))
}

function headerLines(state: ViewState): Line[] {
  const {header, snapshot} = state
  if (!header) return [{text: 'podctl ui: connecting to the runtime…', tone: 'title'}, {text: ''}, {text: ''}]
  const bad = header.conditions.filter((c) => !c.status)
  const conditions = bad.length === 0 ? 'runtime ready' : bad.map((c) => `${c.type}=false${c.reason ? ` (${c.reason})` : ''}`).join(' ')
  const counts = snapshot?.counts
  const pods = `pods ${counts?.readyPods ?? 0}/${counts?.pods ?? 0} ready`
  const containers = `containers ${counts?.runningContainers ?? 0}/${counts?.containers ?? 0} running`
  const lines: Line[] = [
    {text: `${header.runtime} · ${conditions} · ${header.endpoint}`, tone: bad.length > 0 ? 'bad' : 'title'},
    {text: `${pods} · ${containers} · ${imageFsUse(header.imageFs)}`},
    {text: `owner: ${header.owner}`, tone: header.kubelet ? 'warn' : undefined},
  ]
  return lines.slice(0, HEADER_LINES)
}

/** `images 1.2 GB of 20 GB (6%)`. */
function imageFsUse(fs: NodeHeader['imageFs']): string {
  if (!fs) return 'images -'
  const capacity = fs.capacityBytes ? ` of ${humanSize(fs.capacityBytes)} (${Math.round((100 * fs.usedBytes) / fs.capacityBytes)}%)` : ''
  return `images ${humanSize(fs.usedBytes)}${capacity}`
}

function bodyLines(state: ViewState): Line[] {
  if (state.help) return helpLines(state)
  const current = screen(state)
  switch (current.kind) {
    case 'pods':
      return podsLines(state)
    case 'containers':
      return containerLines(state, current.podKey)
    case 'logs':
      return paneLines(state, logsTitle(state, current))
    case 'describe':
      return paneLines(state, `Describe ${podName(state, current.podKey)}`)
  }
}

function logsTitle(state: ViewState, logs: Extract<Screen, {kind: 'logs'}>): string {
  const previous = logs.previous ? ' (previous attempt)' : ''
  return `Logs ${podName(state, logs.podKey)}/${logs.container}${previous}${state.pane.follow ? ' · following' : ''}`
}

function podName(state: ViewState, key: string): string {
  return state.snapshot?.pods.find((pod) => (pod.uid || pod.sandboxes[0].id) === key)?.fullName ?? key
}

function podsLines(state: ViewState): Line[] {
  const rows = visiblePods(state)
  const selected = selectedPod(state, rows)
  const total = state.snapshot?.pods.length ?? 0
  const filter = state.filtering || state.filter ? ` /${state.filter}${state.filtering ? '_' : ''}` : ''
  const order = `sort: ${state.sort.key} ${state.sort.descending ? 'v' : '^'}`
  const title = `Pods${filter} (${rows.length} of ${total}) · ${order}${state.lost ? '' : liveNote(state)}`
  const empty = state.snapshot ? (total === 0 ? 'no pods on this node' : 'no pod matches the filter') : 'listing…'
  return [{text: title, tone: 'title'}, ...table(state, POD_COLUMNS, rows, rows.indexOf(selected!), empty)]
}

function liveNote(state: ViewState): string {
  const took = state.snapshot?.tookMs
  return took === undefined ? '' : ` · refreshed in ${took} ms`
}

function containerLines(state: ViewState, podKey: string): Line[] {
  const rows = visibleContainers(state, podKey)
  const selected = selectedContainer(state, podKey, rows)
  return [
    {text: `Containers of ${podName(state, podKey)}`, tone: 'title'},
    ...table(state, CONTAINER_COLUMNS, rows, selected ? rows.indexOf(selected) : -1, 'no containers'),
  ]
}

function table<Row extends {tone: Tone}>(
  state: ViewState,
  columns: Array<Column<Row>>,
  rows: Row[],
  selected: number,
  empty: string,
): Line[] {
  const height = listHeight(state)
  const widths = layout(columns, state.size.columns - 2)
  const shown = columns.filter((_, index) => widths[index] > 0)
  const shownWidths = widths.filter((w) => w > 0)
  const render = (cells: string[]) => cells.map((cell, i) => pad(cell, shownWidths[i], shown[i].right)).join(' ')
  const top = Math.max(0, Math.min(selected - Math.floor(height / 2), rows.length - height))
  const body: Line[] = rows.slice(top, top + height).map((row, index) => {
    const isSelected = top + index === selected
    return {text: `${isSelected ? '>' : ' '} ${render(shown.map((column) => column.cell(row)))}`, tone: row.tone, selected: isSelected}
  })
  if (rows.length === 0) body.push({text: `  ${empty}`})
  while (body.length < height) body.push({text: ''})
  return [{text: `  ${render(shown.map((column) => column.title))}`, tone: 'heading'}, ...body]
}

/** Widths per column (0: dropped), so the row fits `width`: drops the least important columns, then shares the rest. */
export function layout<Row>(columns: ReadonlyArray<Column<Row>>, width: number): number[] {
  const kept = new Set(columns.map((_, index) => index))
  const needed = () => [...kept].reduce((sum, index) => sum + columns[index].width + 1, -1)
  while (needed() > width && kept.size > 1) {
    const drop = [...kept].sort((a, b) => columns[a].priority - columns[b].priority)[0]
    kept.delete(drop)
  }

  const spare = Math.max(0, width - needed())
  const flexible = [...kept].filter((index) => columns[index].flex)
  return columns.map((column, index) => {
    if (!kept.has(index)) return 0
    if (!column.flex) return column.width
    const share = Math.floor(spare / flexible.length) + (index === flexible[0] ? spare % flexible.length : 0)
    return column.width + share
  })
}

function paneLines(state: ViewState, title: string): Line[] {
  const height = listHeight(state) + 1
  const {lines, top, note} = state.pane
  const body: Line[] = lines.slice(top, top + height).map((text) => ({text: `  ${printable(text)}`}))
  if (lines.length === 0) body.push({text: `  ${note ?? 'reading…'}`})
  while (body.length < height) body.push({text: ''})
  const position = lines.length > height ? ` · lines ${top + 1}-${Math.min(lines.length, top + height)} of ${lines.length}` : ''
  return [{text: `${title}${position}${note && lines.length > 0 ? ` · ${note}` : ''}`, tone: 'title'}, ...body]
}

function helpLines(state: ViewState): Line[] {
  const kind: ScreenKind = screen(state).kind
  const entries = [...KEY_HELP[kind], ...KEY_HELP.everywhere]
  const height = listHeight(state) + 1
  const body: Line[] = entries.map((entry) => ({text: `  ${entry.keys.padEnd(22)} ${entry.what}`}))
  while (body.length < height) body.push({text: ''})
  return [{text: `Keys on the ${kind} screen`, tone: 'title'}, ...body.slice(0, height)]
}

const HINTS: Record<ScreenKind, string> = {
  pods: 'Enter containers  / filter  o sort  l logs  s shell  d describe  K kill  ? help  q quit',
  containers: 'l logs  s shell  d describe  K kill  Esc back  ? help  q quit',
  logs: 'p previous attempt  f follow  ↑↓ scroll  Esc back  ? help  q quit',
  describe: '↑↓ scroll  Esc back  ? help  q quit',
}

function footerLine(state: ViewState): Line {
  // What matters first, as a narrow terminal cuts the end: the runtime's own words follow.
  if (state.lost) return {text: `Runtime lost, trying again every second: ${state.lost}`, tone: 'bad'}
  if (state.confirmKill)
    return {text: `Kill pod ${state.confirmKill.pod.fullName}? preStop, grace period, stop, remove [y/N]`, tone: 'warn'}
  if (state.filtering) return {text: 'Filter by name: type, Enter to keep, Esc to clear', tone: 'warn'}
  if (state.message) return {text: state.message.text, tone: state.message.bad ? 'bad' : 'warn'}
  if (state.snapshot?.statsProblem) return {text: `CPU and memory: ${state.snapshot.statsProblem}`, tone: 'warn'}
  return {text: state.help ? 'any key closes the help' : HINTS[screen(state).kind]}
}

/** Control characters from a log would move the cursor: shown as `?`; tabs as spaces. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- exactly the control characters
  return text.replaceAll('\t', '    ').replaceAll(/[\u0000-\u001F\u007F-\u009F]/g, '?')
}

function pad(text: string, width: number, right = false): string {
  const cut = text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text
  return right ? cut.padStart(width) : cut.padEnd(width)
}

/** Exactly `width` characters: cut with … or padded. */
export function fit(text: string, width: number): string {
  return pad(text, width)
}
