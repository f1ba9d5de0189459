/**
 * What `podctl ui` shows and where the cursor is, as a pure state machine: a key press gives the next
 * state and, for what needs the runtime (logs, a shell, describe, a kill), an effect the session
 * carries out (session.ts). No I/O and no terminal here, so every key is unit-tested.
 */
import type {NodeHeader} from './node-header.js'
import type {NodeSnapshot} from './node-snapshot.js'
import {type KeyName, moveBy, type ScreenKind} from './keys.js'
import {type ContainerRow, containerRows, filterRows, type PodRow, podRows, SORT_KEYS, type SortKey, sortRows} from './pod-rows.js'

export type Screen =
  | {kind: 'pods'}
  | {kind: 'containers'; podKey: string}
  | {kind: 'logs'; podKey: string; container: string; containerId: string; previous: boolean}
  | {kind: 'describe'; podKey: string}

/** What the session is asked to do after a key. */
export type Effect =
  | {kind: 'quit'}
  | {kind: 'logs'; containerId: string; previous: boolean}
  | {kind: 'stop-logs'}
  | {kind: 'shell'; containerId: string; title: string}
  | {kind: 'describe'; pod: PodRow}
  | {kind: 'kill'; pod: PodRow}

export interface TextPane {
  lines: string[]
  /** First line shown. */
  top: number
  /** Keep the newest line in view (logs). */
  follow: boolean
  note?: string
}

export interface ViewState {
  stack: Screen[]
  /** Selected row per screen kind: a pod key, a container name. */
  selectedPod?: string
  selectedContainer?: string
  filter: string
  filtering: boolean
  sort: {key: SortKey; descending: boolean}
  help: boolean
  confirmKill?: PodRow
  /** One line under the table: what just happened. */
  message?: {text: string; bad: boolean}
  /** Set while the runtime does not answer; the view says so and keeps trying. */
  lost?: string
  snapshot?: NodeSnapshot
  header?: NodeHeader
  pane: TextPane
  size: {columns: number; rows: number}
}

export function initialState(size: {columns: number; rows: number}): ViewState {
  return {
    stack: [{kind: 'pods'}],
    filter: '',
    filtering: false,
    sort: {key: 'name', descending: false},
    help: false,
    pane: {lines: [], top: 0, follow: true},
    size,
  }
}

export function screen(state: ViewState): Screen {
  return state.stack.at(-1)!
}

/** The pod rows as shown: filtered by `/`, sorted by `o`. */
export function visiblePods(state: ViewState): PodRow[] {
  if (!state.snapshot) return []
  return sortRows(filterRows(podRows(state.snapshot), state.filter), state.sort.key, state.sort.descending)
}

export function podOf(state: ViewState, key: string | undefined): PodRow | undefined {
  if (!state.snapshot || key === undefined) return undefined
  return podRows(state.snapshot).find((row) => row.key === key)
}

export function visibleContainers(state: ViewState, podKey: string): ContainerRow[] {
  const pod = podOf(state, podKey)
  return pod && state.snapshot ? containerRows(pod.pod, state.snapshot) : []
}

/** Rows a list screen has below the header, title and footer. */
export function listHeight(state: ViewState): number {
  return Math.max(3, state.size.rows - HEADER_LINES - 4)
}

/** The node header's lines (node-header.ts). */
export const HEADER_LINES = 3

export function selectedPod(state: ViewState, rows = visiblePods(state)): PodRow | undefined {
  return rows.find((row) => row.key === state.selectedPod) ?? rows[0]
}

export function selectedContainer(state: ViewState, podKey: string, rows = visibleContainers(state, podKey)): ContainerRow | undefined {
  return rows.find((row) => row.name === state.selectedContainer) ?? rows[0]
}

export interface Step {
  state: ViewState
  effect?: Effect
}

export function press(state: ViewState, key: KeyName): Step {
  if (key === 'ctrl-c') return {state, effect: {kind: 'quit'}}
  if (state.filtering) return {state: typeFilter(state, key)}
  if (state.confirmKill) return confirmKey(state, key)
  if (state.help) return {state: {...state, help: false}}
  if (key === '?') return {state: {...state, help: true}}
  if (key === 'q') return {state, effect: {kind: 'quit'}}
  const current = screen(state)
  switch (current.kind) {
    case 'pods':
      return podsKey(state, key)
    case 'containers':
      return containersKey(state, current, key)
    case 'logs':
      return logsKey(state, current, key)
    case 'describe':
      return paneKey(state, key)
  }
}

function typeFilter(state: ViewState, key: KeyName): ViewState {
  if (key === 'enter') return {...state, filtering: false, selectedPod: undefined}
  if (key === 'escape') return {...state, filtering: false, filter: ''}
  if (key === 'backspace') return {...state, filter: state.filter.slice(0, -1)}
  // One printable character (a paste arrives as several).
  // eslint-disable-next-line no-control-regex -- exactly the control characters
  if (key.length > 0 && !/[\u0000-\u001F\u007F]/.test(key) && !isNamedKey(key)) return {...state, filter: state.filter + key}
  return state
}

function isNamedKey(key: string): boolean {
  return ['backspace', 'down', 'end', 'enter', 'escape', 'home', 'pagedown', 'pageup', 'tab', 'up'].includes(key)
}

function confirmKey(state: ViewState, key: KeyName): Step {
  const pod = state.confirmKill!
  if (key === 'y' || key === 'Y') return {state: {...state, confirmKill: undefined}, effect: {kind: 'kill', pod}}
  return {state: {...state, confirmKill: undefined, message: {text: `Kill of ${pod.pod.fullName} cancelled`, bad: false}}}
}

function podsKey(state: ViewState, key: KeyName): Step {
  const rows = visiblePods(state)
  const pod = selectedPod(state, rows)
  const position = pod ? rows.indexOf(pod) : 0
  const moved = moveBy(key, position, rows.length, listHeight(state))
  if (moved !== undefined) return {state: {...state, selectedPod: rows[moved]?.key}}
  switch (key) {
    case '/':
      return {state: {...state, filtering: true}}
    case 'escape':
      return {state: {...state, filter: ''}}
    case 'o':
    case 'O':
      return {state: {...state, sort: nextSort(state.sort, key === 'O')}}
  }

  if (!pod) return {state}
  if (key === 'enter') return {state: push(state, {kind: 'containers', podKey: pod.key}, {selectedContainer: undefined})}
  if (key === 'l' || key === 's') {
    const rows = state.snapshot ? containerRows(pod.pod, state.snapshot) : []
    const first = rows.find((row) => row.type === 'app' && (key === 'l' || row.running))
    if (!first)
      return {state: {...state, message: {text: `${pod.pod.fullName} has no ${key === 's' ? 'running ' : ''}container`, bad: true}}}
    return containerAction(state, pod, first, key)
  }

  return podAction(state, pod, key)
}

/** `d` and `K`, the same on the pods and on the containers screens. */
function podAction(state: ViewState, pod: PodRow, key: KeyName): Step {
  if (key === 'd')
    return {state: push(state, {kind: 'describe', podKey: pod.key}, {pane: emptyPane(false)}), effect: {kind: 'describe', pod}}
  if (key === 'K') return {state: {...state, confirmKill: pod}}
  return {state}
}

function containersKey(state: ViewState, current: Extract<Screen, {kind: 'containers'}>, key: KeyName): Step {
  const rows = visibleContainers(state, current.podKey)
  const container = selectedContainer(state, current.podKey, rows)
  const moved = moveBy(key, container ? rows.indexOf(container) : 0, rows.length, listHeight(state))
  if (moved !== undefined) return {state: {...state, selectedContainer: rows[moved]?.name}}
  if (key === 'escape' || key === 'backspace') return {state: pop(state)}
  const pod = podOf(state, current.podKey)
  if (!pod) return {state}
  if ((key === 'l' || key === 's') && container) return containerAction(state, pod, container, key)
  return podAction(state, pod, key)
}

function containerAction(state: ViewState, pod: PodRow, container: ContainerRow, key: KeyName): Step {
  if (container.id === '') return {state: {...state, message: {text: `${container.name} has not been created yet`, bad: true}}}
  if (key === 's') {
    if (!container.running) return {state: {...state, message: {text: `${container.name} is not running: no shell`, bad: true}}}
    return {state, effect: {kind: 'shell', containerId: container.id, title: `${pod.pod.fullName}/${container.name}`}}
  }

  const logs: Screen = {kind: 'logs', podKey: pod.key, container: container.name, containerId: container.id, previous: false}
  return {state: push(state, logs, {pane: emptyPane(true)}), effect: {kind: 'logs', containerId: container.id, previous: false}}
}

function logsKey(state: ViewState, current: Extract<Screen, {kind: 'logs'}>, key: KeyName): Step {
  if (key === 'escape' || key === 'backspace') return {state: pop(state), effect: {kind: 'stop-logs'}}
  if (key === 'p') {
    const next = {...current, previous: !current.previous}
    return {
      state: {...state, stack: [...state.stack.slice(0, -1), next], pane: emptyPane(true)},
      effect: {kind: 'logs', containerId: current.containerId, previous: next.previous},
    }
  }

  if (key === 'f') {
    const follow = !state.pane.follow
    return {state: {...state, pane: {...state.pane, follow, top: follow ? lastPage(state) : state.pane.top}}}
  }

  return paneKey(state, key)
}

function paneKey(state: ViewState, key: KeyName): Step {
  if (key === 'escape' || key === 'backspace') return {state: pop(state)}
  const page = listHeight(state)
  const top = moveBy(key, state.pane.top, Math.max(1, state.pane.lines.length - page + 1), page)
  if (top === undefined) return {state}
  // Scrolling up leaves follow; reaching the end again takes it back.
  return {state: {...state, pane: {...state.pane, top, follow: top >= lastPage(state)}}}
}

function lastPage(state: ViewState): number {
  return Math.max(0, state.pane.lines.length - listHeight(state))
}

function nextSort(sort: ViewState['sort'], reverse: boolean): ViewState['sort'] {
  if (reverse) return {...sort, descending: !sort.descending}
  const key = SORT_KEYS[(SORT_KEYS.indexOf(sort.key) + 1) % SORT_KEYS.length]
  // Use and restarts read best largest first.
  return {key, descending: key === 'cpu' || key === 'memory' || key === 'restarts'}
}

function push(state: ViewState, next: Screen, changes: Partial<ViewState> = {}): ViewState {
  return {...state, ...changes, message: undefined, stack: [...state.stack, next]}
}

function pop(state: ViewState): ViewState {
  return state.stack.length > 1 ? {...state, message: undefined, stack: state.stack.slice(0, -1)} : state
}

function emptyPane(follow: boolean): TextPane {
  return {lines: [], top: 0, follow}
}

/** New text for the open pane (log lines as they come, a describe); a following pane shows its end. */
export function withPaneLines(state: ViewState, lines: string[], note?: string): ViewState {
  const pane = {...state.pane, lines, note}
  if (pane.follow) pane.top = Math.max(0, lines.length - listHeight(state))
  return {...state, pane}
}

/** The screen that needs what: for the session, which screen kind is open. */
export function screenKind(state: ViewState): ScreenKind {
  return screen(state).kind
}

/** A refresh came in: screens of a pod that is gone go back to the pods. */
export function withSnapshot(state: ViewState, snapshot: NodeSnapshot): ViewState {
  const keys = new Set(snapshot.pods.map((pod) => pod.uid || pod.sandboxes[0].id))
  const stack = state.stack.filter((s) => s.kind === 'pods' || s.kind === 'logs' || keys.has(s.podKey))
  const gone = stack.length !== state.stack.length
  return {
    ...state,
    snapshot,
    lost: undefined,
    stack,
    message: gone ? {text: 'The pod is gone', bad: false} : state.message,
  }
}
