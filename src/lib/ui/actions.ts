/**
 * What `podctl ui` does on a key, with the pieces the one-shot commands use: a container's log file
 * read and followed (logs/follow.ts, as `logs -f`), the pod's status and conditions (`status POD`),
 * a kill through the pod workers (`kill`), a shell through the runtime's streaming server (`exec -it`).
 */
import {Writable} from 'node:stream'

import type {CriClient} from '../cri/client.js'
import {NotFoundError} from '../errors.js'
import type {Container} from '../../generated/runtime/v1/api.js'
import {LogFileReader, OrderedWriter, showLog} from '../logs/follow.js'
import {containerLiveness, containerLogTarget} from '../node/container-logs.js'
import {renderTable} from '../output/table.js'
import {describeContainerState} from '../kubelet/status/container-status.js'
import {getPodStatus} from '../kubelet/status/pod-status.js'
import {podConditions} from '../kubelet/status/status-manager.js'
import {killPods, userKill} from '../kubelet/workers/kill-pods.js'
import {execInteractive} from '../streaming/runtime-streams.js'
import {humanDuration} from '../output/format.js'
import type {SeenEvent} from './node-watch.js'
import type {PodRow} from './pod-rows.js'

/** Lines kept of a log: the newest. */
const LOG_LINES_KEPT = 5000

export async function containerById(client: CriClient, id: string): Promise<Container> {
  const {containers} = await client.runtime('listContainers', {filter: {id}})
  const container = containers.find((candidate) => candidate.id === id)
  if (!container) throw new NotFoundError(`container ${id.slice(0, 13)} is gone`)
  return container
}

/**
 * Reads the container's log (or its previous attempt's) and, while the container runs, what it
 * appends; `onLines` gets all lines kept so far after each read. Resolves when the log ends or `signal` aborts.
 */
export async function followLogs(
  client: CriClient,
  containerId: string,
  options: {previous: boolean; signal: AbortSignal; onLines: (lines: string[], note?: string) => void},
): Promise<void> {
  const container = await containerById(client, containerId)
  const target = await containerLogTarget(client, container, {previous: options.previous})
  const reader = await LogFileReader.open(target.path)
  let lines: string[] = []
  let partial = ''
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = partial + chunk.toString('utf8')
      const parts = text.split('\n')
      partial = parts.pop() ?? ''
      lines = [...lines, ...parts].slice(-LOG_LINES_KEPT)
      options.onLines(partial === '' ? lines : [...lines, partial])
      done()
    },
  })
  try {
    const writer = new OrderedWriter({stdout: sink, stderr: sink})
    await showLog(reader, writer, {
      follow: target.live,
      isRunning: containerLiveness(client, containerId),
      signal: options.signal,
    })
    if (!options.signal.aborted) options.onLines(lines, target.live ? 'the container exited: end of its log' : 'end of the log')
  } finally {
    await reader.close()
  }
}

/** `status POD`'s view as lines: phase, IP, conditions, each container's state, and the events seen. */
export async function describePod(
  client: CriClient,
  pod: PodRow,
  podDirRoot: string,
  events: ReadonlyMap<string, readonly SeenEvent[]>,
): Promise<string[]> {
  const {items} = await client.runtime('listPodSandbox', {})
  const sandboxes = items.filter((sandbox) => pod.pod.sandboxes.some((s) => s.id === sandbox.id))
  if (sandboxes.length === 0) throw new NotFoundError(`pod ${pod.pod.fullName} is gone`)
  const report = await getPodStatus(client, sandboxes)
  const status = await podConditions(client, report, podDirRoot)
  const lines = [
    `Name:        ${report.name}`,
    `Namespace:   ${report.namespace}`,
    `UID:         ${report.uid}`,
    `Phase:       ${report.phase}${report.ready ? ' (ready)' : ''}`,
    `IP:          ${report.ips.join(', ') || '-'}`,
    `Restart:     ${report.restartPolicy}`,
    `Conditions:  ${status.conditions.map((c) => `${c.type}=${c.status ? 'True' : 'False'}`).join('  ')}`,
    `Supervised:  ${supervisedBy(status)}`,
    ...(status.notice ? ['', ...status.notice.split('\n')] : []),
    '',
    ...renderTable(
      ['CONTAINER', 'STATE', 'READY', 'RESTARTS', 'LAST STATE', 'MESSAGE'],
      status.containerStatuses.map((c) => [
        c.name,
        describeContainerState(c),
        String(c.ready),
        String(c.restartCount),
        c.lastState ? `${c.lastState.reason} (exit ${c.lastState.exitCode}) at ${c.lastState.finishedAt ?? '-'}` : '-',
        (c.waiting?.message || c.message || '-').replaceAll(/\s+/g, ' ').trim().slice(0, 80),
      ]),
    ).split('\n'),
    '',
    'Events:',
    ...eventLines(report, events),
  ]
  return lines
}

function supervisedBy({
  supervisor,
  supervised,
}: {
  supervisor: {pid: number; holder: string; since: string} | null
  supervised: boolean
}): string {
  if (supervisor) return `pid ${supervisor.pid} (${supervisor.holder}) since ${supervisor.since}`
  return supervised ? 'yes' : 'no'
}

/** The pod's life from its instances (created, started, exited) and the runtime's events this view saw, oldest first. */
function eventLines(report: Awaited<ReturnType<typeof getPodStatus>>, seen: ReadonlyMap<string, readonly SeenEvent[]>): string[] {
  const names = new Map(report.containers.map((c) => [c.id, c.name]))
  const rows: Array<{at: number; reason: string; object: string; message: string}> = []
  for (const sandbox of report.sandboxes) {
    if (sandbox.createdAt)
      rows.push({at: Date.parse(sandbox.createdAt), reason: 'SandboxCreated', object: 'pod', message: `attempt ${sandbox.attempt}`})
    for (const event of seen.get(sandbox.id) ?? []) {
      rows.push({
        at: event.at,
        reason: event.type.replace(/^CONTAINER_(\w+)_EVENT$/, (_, word: string) => `Runtime${word[0]}${word.slice(1).toLowerCase()}`),
        object: names.get(event.containerId) ?? 'pod',
        message: 'runtime event',
      })
    }
  }

  for (const c of report.containers) {
    if (c.createdAt)
      rows.push({at: Date.parse(c.createdAt), reason: 'Created', object: c.name, message: `attempt ${c.attempt}, ${c.image}`})
    if (c.startedAt) rows.push({at: Date.parse(c.startedAt), reason: 'Started', object: c.name, message: `attempt ${c.attempt}`})
    if (c.finishedAt)
      rows.push({
        at: Date.parse(c.finishedAt),
        reason: 'Exited',
        object: c.name,
        message: `exit ${c.exitCode}${c.reason ? ` (${c.reason})` : ''}`,
      })
  }

  rows.sort((a, b) => a.at - b.at)
  const now = Date.now()
  return renderTable(
    ['AGE', 'REASON', 'OBJECT', 'MESSAGE'],
    rows.map((row) => [`${humanDuration(now - row.at)} ago`, row.reason, row.object, row.message]),
  ).split('\n')
}

/** Kills the pod through its worker, as `podctl kill POD` does (preStop, grace period, stop, remove). */
export async function killPod(client: CriClient, pod: PodRow, roots: {podDirRoot: string; podLogsRoot: string}): Promise<string> {
  const {items} = await client.runtime('listPodSandbox', {})
  const sandboxes = items.filter((sandbox) => pod.pod.sandboxes.some((s) => s.id === sandbox.id))
  const outcome = await killPods(client, [{fullName: pod.pod.fullName, sandboxes}], {
    ...userKill('podctl ui', undefined, () => {}),
    parallel: 1,
    podDirRoot: roots.podDirRoot,
    podLogsRoot: roots.podLogsRoot,
  })
  if (outcome.failures.length > 0) throw outcome.failures[0].error
  return `Killed pod ${pod.pod.fullName}`
}

/** A shell in the container on this terminal (bash where it has one, else sh); resolves with its exit code. */
export async function shellIn(client: CriClient, containerId: string): Promise<number> {
  const container = await containerById(client, containerId)
  const cmd = ['/bin/sh', '-c', 'if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi']
  const {exitCode} = await execInteractive(client, container, cmd, {stdin: true, tty: true})
  return exitCode
}
