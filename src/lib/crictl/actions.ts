/**
 * Each crictl command's Action, loaded when that command runs (one module per group of commands), so a
 * `crictl pods` evaluates the listing code only.
 */
import type {CrictlInvocation} from './front.js'
import type {CrictlSession} from './session.js'

export type Action = (session: CrictlSession) => Promise<void>

type Group = Record<string, Action>

const GROUPS: Record<string, () => Promise<Group>> = {
  lists: async () => (await import('./actions/lists.js')).ACTIONS,
  status: async () => (await import('./actions/status.js')).ACTIONS,
  containers: async () => (await import('./actions/containers.js')).ACTIONS,
  sandboxes: async () => (await import('./actions/sandboxes.js')).ACTIONS,
  images: async () => (await import('./actions/images.js')).ACTIONS,
  stats: async () => (await import('./actions/stats.js')).ACTIONS,
  streams: async () => (await import('./actions/streams.js')).ACTIONS,
  tools: async () => (await import('./actions/tools.js')).ACTIONS,
}

/** The module (GROUPS) of each crictl command; the quick bundle keeps those its commands use (scripts/bundle/quick.mjs). */
export const ACTION_GROUP_OF: Record<string, keyof typeof GROUPS> = {
  pods: 'lists',
  ps: 'lists',
  images: 'lists',
  inspect: 'status',
  inspectp: 'status',
  inspecti: 'status',
  info: 'status',
  imagefsinfo: 'status',
  version: 'status',
  'runtime-config': 'status',
  'update-runtime-config': 'status',
  create: 'containers',
  start: 'containers',
  stop: 'containers',
  rm: 'containers',
  update: 'containers',
  checkpoint: 'containers',
  run: 'sandboxes',
  runp: 'sandboxes',
  stopp: 'sandboxes',
  rmp: 'sandboxes',
  pull: 'images',
  rmi: 'images',
  stats: 'stats',
  statsp: 'stats',
  metricsp: 'stats',
  metricdescs: 'stats',
  events: 'stats',
  exec: 'streams',
  attach: 'streams',
  'port-forward': 'streams',
  logs: 'streams',
  config: 'tools',
  completion: 'tools',
  jsonschema: 'tools',
}

/** The Action of a command (a subcommand's is found under its own name). */
export async function loadAction(invocation: CrictlInvocation): Promise<Action> {
  const name = invocation.parent ? `${invocation.parent.name} ${invocation.command.name}` : invocation.command.name
  const group = ACTION_GROUP_OF[invocation.command.name]
  const actions = await GROUPS[group]()
  const action = actions[name] ?? actions[invocation.command.name]
  if (!action) throw new Error(`crictl ${name}: no action`)
  return action
}
