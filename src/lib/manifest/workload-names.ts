/**
 * The names the workload controllers give their pods: 5 characters of utilrand's alphabet after a
 * generateName base, the template hashes (FNV-32a, rand.SafeEncodeString), and what a workload's
 * pods are recognised by on the node (kill -f): labels and the form of their names. A controller
 * draws the 5 characters at random, once, and keeps the pod; podctl has no API server to keep it, so
 * it derives them from the workload, its template hash and the replica index (replicaSuffix): the
 * same file gives the same pods every time it is read, and a changed template gives new ones.
 */
import {createHash, randomInt} from 'node:crypto'

/** utilrand's alphabet: no vowels, no 0/1/3 (no words, no look-alikes). */
export const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789'
/** names.SimpleNameGenerator: a generateName base is cut to 58 characters before the 5 random ones. */
export const MAX_GENERATED_BASE = 58

/** utilrand.String(n). */
export function randomSuffix(length = 5, random: (max: number) => number = randomInt): string {
  let out = ''
  for (let index = 0; index < length; index++) out += ALPHANUMS[random(ALPHANUMS.length)]
  return out
}

/**
 * The 5 characters of replica `index` of a workload: utilrand's alphabet, drawn from a generator
 * seeded with the workload's kind, namespace, name, template hash and the index (FNV-32a, then
 * xorshift32), so they look like a controller's and never change while the template does not.
 */
export function replicaSuffix(identity: ReplicaIdentity, index: number): string {
  let state = fnv32a(`${identity.kind}/${identity.namespace ?? ''}/${identity.name}/${identity.hash}/${index}`) || 1
  return randomSuffix(5, (max) => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) % max
  })
}

function fnv32a(text: string): number {
  let hash = 0x81_1c_9d_c5
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte
    hash = Math.imul(hash, 0x01_00_01_93) >>> 0
  }

  return hash >>> 0
}

export interface ReplicaIdentity {
  kind: string
  namespace?: string
  /** The workload's name (a Job's: the Job's, a CronJob's run included). */
  name: string
  hash: string
}

/**
 * A controller-made pod name: the generateName base cut as the API server cuts it, then 5 characters
 * that stay the same for the same workload, template and replica (replicaSuffix), unless a test
 * draws them (`random`).
 */
export function replicaName(base: string, identity: ReplicaIdentity, index: number, random?: (max: number) => number): string {
  return `${base.slice(0, MAX_GENERATED_BASE)}${random ? randomSuffix(5, random) : replicaSuffix(identity, index)}`
}

/**
 * The uid a controller would read from the API server, which podctl does not have: derived from the
 * workload's kind, namespace and name (UUID-shaped), so its pods' controller-uid labels, and so the
 * pods, are the same every time the file is read.
 */
export function workloadUid(kind: string, namespace: string | undefined, name: string): string {
  const hex = createHash('sha256')
    .update(`${kind}/${namespace ?? ''}/${name}`)
    .digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** rand.SafeEncodeString. */
export function safeEncode(text: string): string {
  return [...text].map((char) => ALPHANUMS[char.codePointAt(0)! % ALPHANUMS.length]).join('')
}

/** FNV-32a of a stable JSON rendering, as the controllers' ComputeHash / HashControllerRevision do of theirs. */
export function templateHash(value: unknown): string {
  return safeEncode(String(fnv32a(stableJson(value))))
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
    return `{${entries.join(',')}}`
  }

  return typeof value === 'bigint' ? value.toString() : JSON.stringify(value)
}

/** The 5 generated characters, as a RegExp source. */
export const GENERATED = `[${ALPHANUMS}]{5}`

export function escapeRegExp(text: string): string {
  return text.replaceAll(/[.*+?^${}()|[\]\\]/g, String.raw`\$&`)
}

/** What identifies a workload's pods on the node (kill -f): their names are random, their labels and name form are not. */
export interface WorkloadMatch {
  kind: string
  name: string
  namespace?: string
  /** Labels every pod of it has (the template's, the controller's hash, job-name). */
  labels: Record<string, string>
  /** The form of its pods' names. */
  podName: RegExp
}

/** What workloadMatch reads of a workload. */
export interface MatchTemplate {
  kind: string
  name: string
  namespace?: string
  hash: string
  labels: Record<string, string>
  spec: {manualSelector?: unknown}
}

/** The labels and name form each kind's pods have, whatever their random suffix or the run's uids. */
export function workloadMatch(t: MatchTemplate): WorkloadMatch {
  const {kind, name, hash} = t
  const base = (prefix: string) => escapeRegExp(prefix.slice(0, MAX_GENERATED_BASE))
  const labels = {...t.labels}
  let podName: RegExp
  switch (kind) {
    case 'Deployment': {
      labels['pod-template-hash'] = hash
      podName = new RegExp(`^${base(`${name}-${hash}-`)}${GENERATED}$`)
      break
    }

    case 'StatefulSet': {
      labels['controller-revision-hash'] = `${name}-${hash}`
      podName = new RegExp(`^${escapeRegExp(name)}-\\d+$`)
      break
    }

    case 'Job': {
      if (t.spec.manualSelector !== true) labels['job-name'] = name
      podName = new RegExp(`^${escapeRegExp(name)}-(\\d+-)?${GENERATED}$`)
      break
    }

    case 'CronJob': {
      podName = new RegExp(`^${escapeRegExp(name)}-\\d+-(\\d+-)?${GENERATED}$`)
      break
    }

    default: {
      if (kind === 'DaemonSet') labels['controller-revision-hash'] = hash
      podName = new RegExp(`^${base(`${name}-`)}${GENERATED}$`)
    }
  }

  return {kind, name, ...(t.namespace ? {namespace: t.namespace} : {}), labels, podName}
}
