/**
 * `podctl run`'s result table: one row per container, the pod's columns only on its first row.
 * Pods that never got a sandbox are left out; their error line says what happened.
 */
import type {ChalkInstance} from 'chalk'

import {podFullName} from '../kube/helpers.js'
import {truncateId} from './format.js'
import {renderTable} from './table.js'

/** What the table shows of a pod's run (kubelet/sync-pod.ts PodRunResult has these fields; output never imports the kubelet). */
export interface RunTablePod {
  pod: string
  namespace: string
  sandboxId: string | null
  attempt: number
  ip: string | null
  phase: string | null
  error: unknown
  rolledBack: boolean
  removed: boolean
  containers: ReadonlyArray<{name: string; type: string; state: string; exitCode: number | null; attempt: number; id: string}>
}

const HEADERS = ['POD', 'SANDBOX', 'ATTEMPT', 'IP', 'PHASE', 'CONTAINER', 'TYPE', 'STATE', 'EXIT', 'RESTARTS', 'ID']

/** The table, or '' when no pod got a sandbox. */
export function renderRunTable(pods: readonly RunTablePod[], chalk: ChalkInstance): string {
  const rows: string[][] = []
  for (const pod of pods) {
    if (pod.sandboxId === null) continue
    const phase = pod.phase ?? (pod.error ? 'Failed' : '-')
    const sandbox = pod.removed ? '(removed)' : pod.rolledBack ? '(rolled back)' : pod.sandboxId ? truncateId(pod.sandboxId) : '-'
    const podColumns = [
      podFullName(pod.pod, pod.namespace),
      sandbox,
      String(pod.attempt),
      pod.ip ?? '-',
      phase === 'Running' || phase === 'Succeeded' ? chalk.green(phase) : phase === 'Failed' ? chalk.red(phase) : phase,
    ]
    const containers = pod.containers.length > 0 ? pod.containers : [undefined]
    for (const [index, container] of containers.entries()) {
      rows.push([
        ...(index === 0 ? podColumns : podColumns.map(() => '')),
        container?.name ?? '-',
        container?.type ?? '',
        container?.state === 'Running' ? chalk.green(container.state) : (container?.state ?? ''),
        container?.exitCode === null || container?.exitCode === undefined ? '' : String(container.exitCode),
        container ? String(container.attempt) : '',
        container ? truncateId(container.id) : '',
      ])
    }
  }

  return rows.length === 0 ? '' : renderTable(HEADERS, rows)
}
