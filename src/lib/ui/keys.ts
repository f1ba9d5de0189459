/**
 * Every key of `podctl ui`, per screen: what the state machine (view-state.ts) obeys, what `?` lists
 * and what docs/ui.md documents (a unit test keeps the three in step).
 */

/** A key press, named: a printable character as itself, else one of these words. */
export type KeyName =
  'up' | 'down' | 'pageup' | 'pagedown' | 'home' | 'end' | 'enter' | 'escape' | 'backspace' | 'tab' | 'ctrl-c' | (string & {})

export type ScreenKind = 'pods' | 'containers' | 'logs' | 'describe'

export interface KeyHelp {
  keys: string
  what: string
}

const MOVE: KeyHelp[] = [
  {keys: '↑ ↓ / k j', what: 'move'},
  {keys: 'PgUp PgDn / Home End', what: 'a page / the first or last line'},
]

export const KEY_HELP: Record<ScreenKind | 'everywhere', KeyHelp[]> = {
  pods: [
    ...MOVE,
    {keys: 'Enter', what: "the pod's containers"},
    {keys: '/', what: 'filter by name (Enter keeps it, Esc clears it)'},
    {keys: 'o / O', what: 'sort by the next column / reverse the order'},
    {keys: 'l', what: "logs of the pod's first container"},
    {keys: 's', what: "a shell in the pod's first running container"},
    {keys: 'd', what: "describe: the pod's status (podctl status) and events"},
    {keys: 'K', what: 'kill the pod (asks first), as podctl kill does'},
    {keys: 'Esc', what: 'clear the filter'},
  ],
  containers: [
    ...MOVE,
    {keys: 'l', what: "the container's logs, followed"},
    {keys: 's', what: 'a shell in it (exec -it); exit the shell to come back'},
    {keys: 'd', what: 'describe the pod'},
    {keys: 'K', what: 'kill the pod (asks first)'},
    {keys: 'Esc', what: 'back to the pods'},
  ],
  logs: [
    ...MOVE,
    {keys: 'p', what: 'the previous attempt / the current one'},
    {keys: 'f', what: 'follow (keep the newest line in view) on or off'},
    {keys: 'Esc', what: 'back'},
  ],
  describe: [...MOVE, {keys: 'Esc', what: 'back'}],
  everywhere: [
    {keys: '?', what: 'this help (any key closes it)'},
    {keys: 'q / Ctrl-C', what: 'quit (the terminal is restored)'},
  ],
}

/** Scrolling keys shared by every list and text screen: the new position, or undefined when `key` does not move. */
export function moveBy(key: KeyName, position: number, count: number, page: number): number | undefined {
  const last = Math.max(0, count - 1)
  const step: Record<string, number> = {up: -1, k: -1, down: 1, j: 1, pageup: -page, pagedown: page}
  if (key in step) return Math.min(last, Math.max(0, position + step[key]))
  if (key === 'home' || key === 'g') return 0
  if (key === 'end' || key === 'G') return last
  return undefined
}
