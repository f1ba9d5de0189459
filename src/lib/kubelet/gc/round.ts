/**
 * What every collector of one garbage collection round shares (collect.ts makes it): the client,
 * whether this is a dry run, the records and the runtime that the ownership proof reads, the
 * explanation being written, and `attempt`, which keeps a failing removal from stopping the round.
 */
import type {CriClient} from '../../cri/client.js'
import {asPodctlError} from '../../errors.js'
import {PodLabel} from '../../kube/labels.js'
import type {PodRecords} from '../../kube/ownership.js'
import {GcExplanation, type GcKind} from './explain.js'

export interface GcFailure {
  /** What could not be removed: "container ID", "sandbox ID", "image REF", a path. */
  object: string
  message: string
}

export interface GcRound {
  client: CriClient
  dryRun: boolean
  signal?: AbortSignal
  nowMs: number
  /** Only this namespace's containers, sandboxes, log directories and links. */
  namespace?: string
  /** Root of the pod directories, where the records are. */
  podDirRoot: string
  /** The pods' records (pod.json), by uid, judged from this runtime. */
  records: PodRecords
  explanation: GcExplanation
  failures: GcFailure[]
}

export function newRound(client: CriClient, fields: Omit<GcRound, 'client' | 'explanation' | 'failures' | 'records'>): GcRound {
  return {client, ...fields, records: new Map(), explanation: new GcExplanation(), failures: []}
}

/**
 * Removes one object the round has decided on (nothing on a dry run) and records why: `work`'s
 * failure is a failure of the round, and the object leaves the explanation. True when it went.
 */
export async function removeDecided(
  round: GcRound,
  decided: {kind: GcKind; object: string; why: string; failureName?: string},
  work: () => Promise<unknown>,
): Promise<boolean> {
  round.explanation.removing(decided.kind, decided.object, decided.why)
  if (round.dryRun) return true
  try {
    await work()
    return true
  } catch (error) {
    round.explanation.failed(decided.kind, decided.object)
    round.failures.push({object: decided.failureName ?? decided.object, message: asPodctlError(error).message})
    return false
  }
}

/** Whether an object (by its io.kubernetes.pod.namespace label) is in the round's namespace, when it has one. */
export function inRoundNamespace(round: Pick<GcRound, 'namespace'>): (object: {labels: Readonly<Record<string, string>>}) => boolean {
  return (object) => round.namespace === undefined || object.labels[PodLabel.namespace] === round.namespace
}
