/**
 * `podctl unit`: the systemd service that keeps `podctl sync --watch` running on a node with no
 * control plane, as the kubelet's own unit keeps the kubelet (Restart=always, RestartSec=10, no start
 * limit, after the network and the unit that runs the runtime, found by runtime-unit.ts). Everything
 * the service runs is spelled out absolutely: the program as it was invoked, the manifests, the pod
 * roots and the runtime endpoint, so the unit does not depend on the working directory, PATH or the
 * environment `unit` ran in.
 *
 * The stop: systemd sends SIGTERM to podctl alone (KillMode=mixed). `sync --watch` takes SIGTERM as
 * Ctrl-C: every pod worker finishes its step in flight, the supervisor locks are released and podctl
 * exits 0 — the pods keep running, as they do when the kubelet stops. The containers are the
 * runtime's processes (its shims), never in this unit's control group, so the final SIGKILL of the
 * group after TimeoutStopSec reaches only podctl and what it spawned itself (a mount in flight).
 */
import {existsSync, realpathSync} from 'node:fs'
import {basename, dirname, join, resolve} from 'node:path'
import {pathToFileURL} from 'node:url'

import {UsageError} from '../errors.js'
import {DEPENDENCY_SUFFIXES, execLine, isUnitName, renderUnit} from '../util/systemd-unit.js'

/** What `podctl unit` was given, flags already parsed (paths as typed; resolved here). */
export interface AgentUnitRequest {
  /** --name: the unit's name without .service. */
  name: string
  /** The program podctl runs as: process.execPath and the script it ran (process.argv[1]). */
  execPath: string
  script?: string
  cwd: string
  /** The runtime endpoint podctl resolved (unix://...), and the image endpoint when one was set apart. */
  endpoint: string
  imageEndpoint?: string
  /** --after: units to order after and want instead of the runtime's own service. */
  after: readonly string[]
  /** The unit that runs the runtime (runtime-unit.ts), when one was found: wanted unless --after is given. */
  runtimeUnit?: string
  /** The flags `sync --watch` gets. */
  watch: WatchSelection
}

export interface WatchSelection {
  pods: readonly string[]
  manifests: readonly string[]
  namespace?: string
  labels: readonly string[]
  all: boolean
  parallel?: number
  podLogsRoot?: string
  podDirRoot?: string
  /** --claims-root beside -f manifests whose claims live elsewhere than the default root. */
  claimsRoot?: string
  /** --metrics-address, checked when the unit is printed. */
  metricsAddress?: string
  quiet: boolean
  force: boolean
}

export interface AgentUnit {
  name: string
  /** Where it is meant to be installed. */
  path: string
  /** The service's command line, as systemd runs it. */
  execStart: string[]
  unit: string
}

/** The signal systemd stops the service with: sync --watch takes it as "stop supervising, leave the pods". */
export const STOP_SIGNAL = 'SIGTERM'
/** The kubelet's unit waits 10 s between restarts. */
const RESTART_SEC = '10s'
/** Long enough for a worker's step in flight (a container's 30 s grace period, a preStop hook). */
const TIMEOUT_STOP_SEC = '90s'
const NETWORK = 'network-online.target'

/** The unit for a request: refuses (UsageError naming the flag) a name, dependency or manifest path that cannot work. */
export function agentUnit(request: AgentUnitRequest): AgentUnit {
  const {name} = request
  if (!isUnitName(`${name}.service`, ['service']) || name.includes('@')) {
    throw new UsageError(`--name: "${name}" is not a unit name; use letters, digits and ":-_." (e.g. --name podctl)`)
  }

  const runtimeUnits = request.after.length > 0 ? checkedAfter(request.after) : request.runtimeUnit ? [request.runtimeUnit] : []
  const program = programOf(request.execPath, request.script)
  const watch = {...request.watch, manifests: absoluteManifests(request.watch.manifests, request.cwd)}
  const execStart = [...program, 'sync', '--watch', ...watchArgs(watch, request.cwd), ...endpointArgs(request)]
  const readme = readmeOf(request.execPath, request.script)
  const path = `/etc/systemd/system/${name}.service`
  const dependencies = [NETWORK, ...runtimeUnits].join(' ')
  const unit = renderUnit({
    header: [
      `${name}.service: podctl supervising pods as a node agent (podctl sync --watch), written by \`podctl unit\`.`,
      `Install: podctl unit ... > ${path} && systemctl daemon-reload && systemctl enable --now ${name}`,
      `"systemctl stop ${name}" stops the supervision and leaves the pods running; "podctl kill" removes pods.`,
    ],
    sections: [
      {
        name: 'Unit',
        entries: [
          {key: 'Description', value: `${name}: podctl node agent (sync --watch) for ${describe(watch)}`},
          ...(readme ? [{key: 'Documentation', value: readme}] : []),
          {key: 'After', value: dependencies},
          {key: 'Wants', value: dependencies},
          {key: 'StartLimitIntervalSec', value: '0', comment: 'Never give up restarting, as the kubelet unit.'},
        ],
      },
      {
        name: 'Service',
        entries: [
          {key: 'Type', value: 'exec'},
          {key: 'ExecStart', value: execLine(execStart)},
          {key: 'Restart', value: 'always'},
          {key: 'RestartSec', value: RESTART_SEC},
          {key: 'RestartPreventExitStatus', value: '2', comment: 'Exit 2 is a usage error (a bad flag): restarting cannot fix it.'},
          {
            key: 'KillMode',
            value: 'mixed',
            comment: `The stop signal goes to podctl alone; on ${STOP_SIGNAL} it stops supervising and leaves the pods running.`,
          },
          {key: 'KillSignal', value: STOP_SIGNAL},
          {key: 'TimeoutStopSec', value: TIMEOUT_STOP_SEC},
        ],
      },
      {name: 'Install', entries: [{key: 'WantedBy', value: 'multi-user.target'}]},
    ],
  })
  return {name, path, execStart, unit}
}

/**
 * The program as it was invoked: the single executable alone (its script is itself), else the
 * Node binary and the absolute path of the script it ran (bin/run.js).
 */
export function programOf(execPath: string, script: string | undefined): string[] {
  if (!script || resolve(script) === execPath) return [execPath]
  return [execPath, resolve(script)]
}

/** Manifest paths made absolute; one that does not exist (or stdin) is refused, naming -f. */
export function absoluteManifests(paths: readonly string[], cwd: string): string[] {
  return paths.map((path) => {
    if (path === '-') throw new UsageError('-f -: a service has no stdin; give a manifest file or directory')
    const absolute = resolve(cwd, path)
    if (!existsSync(absolute))
      throw new UsageError(`-f ${path}: no such file or directory (${absolute}); give an existing manifest file or directory`)
    return absolute
  })
}

/** sync --watch's flags; the manifests are absolute already. */
function watchArgs(watch: WatchSelection, cwd: string): string[] {
  const args = [...watch.pods]
  for (const manifest of watch.manifests) args.push('-f', manifest)
  if (watch.all) args.push('--all')
  if (watch.namespace !== undefined) args.push('-n', watch.namespace)
  for (const label of watch.labels) args.push('-l', label)
  if (watch.parallel !== undefined) args.push('--parallel', String(watch.parallel))
  if (watch.podLogsRoot !== undefined) args.push('--pod-logs-root', resolve(cwd, watch.podLogsRoot))
  if (watch.podDirRoot !== undefined) args.push('--pod-dir-root', resolve(cwd, watch.podDirRoot))
  if (watch.claimsRoot !== undefined) args.push('--claims-root', resolve(cwd, watch.claimsRoot))
  if (watch.metricsAddress !== undefined) args.push('--metrics-address', watch.metricsAddress)
  if (watch.quiet) args.push('--quiet')
  if (watch.force) args.push('--force')
  return args
}

function endpointArgs({endpoint, imageEndpoint}: AgentUnitRequest): string[] {
  return ['--runtime-endpoint', endpoint, ...(imageEndpoint && imageEndpoint !== endpoint ? ['--image-endpoint', imageEndpoint] : [])]
}

function checkedAfter(units: readonly string[]): string[] {
  for (const unit of units) {
    if (!isUnitName(unit, DEPENDENCY_SUFFIXES)) {
      throw new UsageError(`--after: "${unit}" is not a unit name; give one with its type, e.g. --after containerd.service`)
    }
  }

  return [...new Set(units)]
}

function describe(watch: WatchSelection): string {
  if (watch.manifests.length > 0) return `the manifests in ${watch.manifests.join(', ')}`
  const namespace = watch.namespace === undefined ? '' : ` of namespace ${watch.namespace}`
  if (watch.all) return `every pod podctl made${namespace}`
  if (watch.labels.length > 0) return `the pods labelled ${watch.labels.join(', ')}${namespace}`
  return `${watch.pods.join(', ')}${namespace}`
}

/**
 * The README beside the program (bin/run.js's package, or the single executable's folder) as a file:
 * URL. The script's real path: `npm install -g` runs it through a link in /usr/bin.
 */
function readmeOf(execPath: string, script: string | undefined): string | undefined {
  const program = programOf(execPath, script)
  const root = program.length === 1 ? dirname(execPath) : dirname(dirname(realPath(program[1])))
  const readme = join(root, 'README.md')
  return basename(root) !== '' && existsSync(readme) ? pathToFileURL(readme).href : undefined
}

function realPath(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
