/**
 * Whose is it: the one proof every path that removes a container or a sandbox asks first. The
 * kubelet owns its node and removes whatever its garbage collection finds; podctl shares the node
 * with crictl, a kubelet and other runtimes, so it removes only what it can prove it made, on this
 * runtime. What proves it:
 *
 * - a sandbox carries what podctl writes on every sandbox it makes (kube/labels.ts newPodAnnotations):
 *   io.podctl.restartPolicy and io.podctl.podDirectory naming `<root>/<its uid>`; a container carries
 *   io.podctl.containerType (init|app) with the kubelet's pod uid and container name labels. crictl
 *   writes none of them, the kubelet writes none on a container and copies onto a sandbox only the
 *   annotations of the pod's manifest (where podctl writes only io.podctl.staticPod, never these);
 * - or, for pods of older podctl versions, a record of this runtime (pod.json, read by
 *   kubelet/core/pod-records.ts) names the object's pod (uid, name and namespace; for a container also its name in the spec);
 * - and in both cases no record names another runtime for the pod: the two would share its
 *   directories (logs, volumes), so removing one runtime's object could remove the other's files.
 *
 * The object is one the runtime listed, so it is this runtime's. Pure: the records are read by
 * the caller. Files (log directories, links) have their own proof in kubelet/core/owned-logs.ts,
 * images theirs in images/pull-records.ts. Rules are tried in order, first answer wins: a new kind of
 * owner (a debug session's or a library session's label, issues 35 and 36) is a new rule here,
 * proving the object podctl's and saying what else makes it collectable (its session gone).
 */
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {ContainerLabel, PodctlAnnotation, PodLabel} from './labels.js'

/**
 * Whose a pod's record is, seen from a runtime (kubelet/core/record-owner.ts decides it): 'this'
 * runtime's (or the caller did not say which runtime it is), an 'other' runtime's, or 'legacy':
 * it names none.
 */
export type RecordOwner = 'this' | 'other' | 'legacy'

/** How an object was judged: the first two make it podctl's, the others leave it alone. */
export type OwnershipRule = 'podctl-annotations' | 'podctl-record' | 'podctl-mark' | 'not-podctl' | 'other-runtime'

export interface Ownership {
  ours: boolean
  rule: OwnershipRule
  /** For people: what proves it podctl's, or why it is left alone. */
  why: string
}

/** What a pod's record says about whose the pod is (the fields the proof needs). */
export interface RecordedPod {
  uid: string
  name: string
  namespace: string
  owner: RecordOwner
  /** The runtime the record names, normalised; undefined for a legacy record. */
  runtimeEndpoint?: string
  /** Names of its containers and init containers. */
  containers: readonly string[]
}

/** Records by pod uid. */
export type PodRecords = ReadonlyMap<string, RecordedPod>

const NO_RECORDS: PodRecords = new Map()

export const NOT_PODCTL: Ownership = {
  ours: false,
  rule: 'not-podctl',
  why: 'not made by podctl (no io.podctl annotations, no podctl record)',
}

const BY_RECORD: Ownership = {ours: true, rule: 'podctl-record', why: 'recorded by podctl for this runtime (its pod.json)'}

export function otherRuntime(endpoint: string | undefined): Ownership {
  return {ours: false, rule: 'other-runtime', why: `its pod is recorded for another runtime (${endpoint ?? 'unknown'})`}
}

type Annotated = {annotations: Readonly<Record<string, string>>; labels: Readonly<Record<string, string>>}

/** What podctl writes on every sandbox: a restart policy and its pod directory, `<root>/<uid>`. */
export function hasPodctlSandboxMark(sandbox: Pick<PodSandbox, 'annotations' | 'metadata'>): boolean {
  const uid = sandbox.metadata?.uid ?? ''
  const directory = sandbox.annotations[PodctlAnnotation.podDirectory] ?? ''
  return uid !== '' && sandbox.annotations[PodctlAnnotation.restartPolicy] !== undefined && directory.endsWith(`/${uid}`)
}

/** What podctl writes on every container: its type, beside the kubelet's pod uid and container name labels. */
export function hasPodctlContainerMark(container: Annotated): boolean {
  const type = container.annotations[PodctlAnnotation.containerType]
  return (type === 'init' || type === 'app') && Boolean(container.labels[PodLabel.uid]) && Boolean(container.labels[ContainerLabel.name])
}

interface Candidate {
  uid: string
  marked: boolean
  why: string
  /** Whether a record of the pod names this object. */
  recordNames: (record: RecordedPod) => boolean
}

function judge(candidate: Candidate, records: PodRecords): Ownership {
  const record = candidate.uid === '' ? undefined : records.get(candidate.uid)
  if (record?.owner === 'other') return otherRuntime(record.runtimeEndpoint)
  if (candidate.marked) return {ours: true, rule: 'podctl-annotations', why: candidate.why}
  if (record && candidate.recordNames(record)) return BY_RECORD
  return NOT_PODCTL
}

/** Whether podctl made this sandbox on this runtime (`records`: of the pods' uids, from kubelet/core/pod-records.ts). */
export function sandboxOwnership(sandbox: Pick<PodSandbox, 'annotations' | 'metadata'>, records: PodRecords = NO_RECORDS): Ownership {
  const {uid = '', name = '', namespace = ''} = sandbox.metadata ?? {}
  return judge(
    {
      uid,
      marked: hasPodctlSandboxMark(sandbox),
      why: 'made by podctl (io.podctl.restartPolicy and io.podctl.podDirectory annotations)',
      recordNames: (record) => record.name === name && record.namespace === namespace,
    },
    records,
  )
}

/** The proof from the sandbox alone (no records): what bulk selections (kill --all, -l, -f) may choose. */
export function isPodctlSandbox(sandbox: Pick<PodSandbox, 'annotations' | 'metadata'>): boolean {
  return sandboxOwnership(sandbox).ours
}

/** Whether podctl made this container on this runtime. */
export function containerOwnership(container: Pick<Container, 'annotations' | 'labels'>, records: PodRecords = NO_RECORDS): Ownership {
  const {labels} = container
  const name = labels[ContainerLabel.name] ?? ''
  return judge(
    {
      uid: labels[PodLabel.uid] ?? '',
      marked: hasPodctlContainerMark(container),
      why: 'made by podctl (io.podctl.containerType annotation)',
      recordNames: (record) =>
        record.name === labels[PodLabel.name] && record.namespace === labels[PodLabel.namespace] && record.containers.includes(name),
    },
    records,
  )
}

/** The proof from the container alone (no records): what `rm --all` and `stop --all` may choose. */
export function isPodctlContainer(container: Pick<Container, 'annotations' | 'labels'>): boolean {
  return containerOwnership(container).ours
}
