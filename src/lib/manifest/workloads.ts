/**
 * Deployment, ReplicaSet, StatefulSet, DaemonSet, Job and CronJob documents → the one Pod their
 * controller would create first, named and labelled as the controller names and labels it:
 * - Deployment: ReplicaSet <deploy>-<pod-template-hash>, pod <rs>-<5 chars>, label pod-template-hash;
 * - ReplicaSet: <rs>-<5 chars>; DaemonSet: <ds>-<5 chars>, controller-revision-hash and pod-template-generation;
 * - StatefulSet: <sts>-0 with statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index and
 *   controller-revision-hash <sts>-<hash>; hostname <sts>-0; volumeClaimTemplates become
 *   persistentVolumeClaim volumes (bound with --volume NAME=DIR);
 * - Job: <job>-<5 chars> (Indexed: <job>-0-<5 chars>), job-name / controller-uid labels, old and new;
 * - CronJob: its jobTemplate as the Job <cronjob>-<minutes since the epoch> scheduled now.
 * Hashes are FNV-32a of the template, encoded as the controllers encode them (rand.SafeEncodeString);
 * the value differs from a cluster's (that hashes Go's in-memory object), the form does not.
 */
import {randomInt, randomUUID} from 'node:crypto'

import {FieldReader, type Json, type JsonObject} from './fields.js'
import type {PodOwnerModel} from './model.js'

export const WORKLOAD_KINDS = ['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob'] as const
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number]

const API_VERSIONS: Record<WorkloadKind, string> = {
  Deployment: 'apps/v1',
  ReplicaSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  DaemonSet: 'apps/v1',
  Job: 'batch/v1',
  CronJob: 'batch/v1',
}

/** Controller settings that shape many pods over time; with one pod on one node they change nothing. */
const SPEC_FIELDS: Record<WorkloadKind, string[]> = {
  Deployment: [
    'replicas',
    'selector',
    'template',
    'strategy',
    'minReadySeconds',
    'revisionHistoryLimit',
    'paused',
    'progressDeadlineSeconds',
  ],
  ReplicaSet: ['replicas', 'selector', 'template', 'minReadySeconds'],
  StatefulSet: [
    'replicas',
    'selector',
    'template',
    'serviceName',
    'volumeClaimTemplates',
    'podManagementPolicy',
    'updateStrategy',
    'revisionHistoryLimit',
    'minReadySeconds',
    'persistentVolumeClaimRetentionPolicy',
    'ordinals',
  ],
  DaemonSet: ['selector', 'template', 'updateStrategy', 'minReadySeconds', 'revisionHistoryLimit'],
  Job: [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'podFailurePolicy',
    'successPolicy',
    'backoffLimit',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
    'selector',
    'manualSelector',
    'template',
    'ttlSecondsAfterFinished',
    'completionMode',
    'suspend',
    'podReplacementPolicy',
    'managedBy',
  ],
  CronJob: [
    'schedule',
    'timeZone',
    'startingDeadlineSeconds',
    'concurrencyPolicy',
    'suspend',
    'jobTemplate',
    'successfulJobsHistoryLimit',
    'failedJobsHistoryLimit',
  ],
}

const ROOT_RULE = {supported: ['apiVersion', 'kind', 'metadata', 'spec'], ignored: ['status']}
const METADATA_RULE = {
  supported: ['name', 'namespace', 'uid', 'labels', 'annotations'],
  ignored: ['creationTimestamp', 'resourceVersion', 'generation', 'managedFields', 'selfLink', 'ownerReferences', 'finalizers'],
}
const TEMPLATE_RULE = {supported: ['metadata', 'spec']}
const TEMPLATE_METADATA_RULE = {supported: ['labels', 'annotations', 'name', 'namespace'], ignored: ['creationTimestamp']}
const SELECTOR_RULE = {supported: ['matchLabels', 'matchExpressions']}
const JOB_TEMPLATE_RULE = {supported: ['metadata', 'spec']}

/** utilrand's alphabet: no vowels, no 0/1/3 (no words, no look-alikes). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789'
/** names.SimpleNameGenerator: a generateName base is cut to 58 characters before the 5 random ones. */
const MAX_GENERATED_BASE = 58

/** utilrand.String(n). */
export function randomSuffix(length = 5, random: (max: number) => number = randomInt): string {
  let out = ''
  for (let index = 0; index < length; index++) out += ALPHANUMS[random(ALPHANUMS.length)]
  return out
}

/** rand.SafeEncodeString. */
export function safeEncode(text: string): string {
  return [...text].map((char) => ALPHANUMS[char.codePointAt(0)! % ALPHANUMS.length]).join('')
}

/** FNV-32a of a stable JSON rendering, as the controllers' ComputeHash / HashControllerRevision do of theirs. */
export function templateHash(value: unknown): string {
  let hash = 0x81_1c_9d_c5
  for (const byte of Buffer.from(stableJson(value), 'utf8')) {
    hash ^= byte
    hash = Math.imul(hash, 0x01_00_01_93) >>> 0
  }

  return safeEncode(String(hash >>> 0))
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

/** generateName + 5 random characters. */
export function generatedName(base: string, random?: (max: number) => number): string {
  return `${base.slice(0, MAX_GENERATED_BASE)}${randomSuffix(5, random)}`
}

export interface WorkloadPod {
  /** A v1 Pod document for parsePod. */
  document: JsonObject
  owner: PodOwnerModel
  /** Where the template sits, for messages: "deploy.yaml (Deployment web, spec.template)". */
  source: string
}

export interface WorkloadOptions {
  random?: (max: number) => number
  newUid?: () => string
  now?: () => number
}

function labelsOf(r: FieldReader, value: Json | undefined, path: string): Record<string, string> {
  return r.stringMap(value, path)
}

function clone<T extends Json>(value: T): T {
  return structuredClone(value)
}

/** The pod template (and the labels the API server's selector check needs) of any workload kind. */
export function podFromWorkload(document: JsonObject, kind: WorkloadKind, source: string, options: WorkloadOptions = {}): WorkloadPod {
  const r = new FieldReader(source)
  const root = r.object(document, '', ROOT_RULE)
  const apiVersion = r.string(root.apiVersion, 'apiVersion', {required: true})
  if (apiVersion !== API_VERSIONS[kind]) r.fail('apiVersion', `must be "${API_VERSIONS[kind]}" for a ${kind}, not "${apiVersion}"`)
  const metadata = r.object(root.metadata, 'metadata', METADATA_RULE)
  const name = r.requiredString(metadata.name, 'metadata.name')
  const namespace = r.string(metadata.namespace, 'metadata.namespace') || undefined
  const uid = r.string(metadata.uid, 'metadata.uid') || (options.newUid ?? randomUUID)()
  if (root.spec === undefined || root.spec === null) r.fail('spec', 'is required')
  let spec = r.object(root.spec, 'spec', {supported: SPEC_FIELDS[kind]})
  let specPath = 'spec'
  let jobName = name
  if (kind === 'CronJob') {
    r.requiredString(spec.schedule, 'spec.schedule')
    const jobTemplate = r.object(spec.jobTemplate, 'spec.jobTemplate', JOB_TEMPLATE_RULE)
    if (jobTemplate.spec === undefined || jobTemplate.spec === null) r.fail('spec.jobTemplate.spec', 'is required')
    spec = r.object(jobTemplate.spec, 'spec.jobTemplate.spec', {supported: SPEC_FIELDS.Job})
    specPath = 'spec.jobTemplate.spec'
    // The CronJob controller's getJobName: <cronjob>-<scheduled time in minutes since the epoch>.
    jobName = `${name}-${Math.floor((options.now ?? Date.now)() / 60_000)}`
  }

  if (spec.template === undefined || spec.template === null) r.fail(`${specPath}.template`, 'is required')
  const templatePath = `${specPath}.template`
  const template = r.object(spec.template, templatePath, TEMPLATE_RULE)
  const templateMetadata = r.object(template.metadata, `${templatePath}.metadata`, TEMPLATE_METADATA_RULE)
  const labels = labelsOf(r, templateMetadata.labels, `${templatePath}.metadata.labels`)
  const annotations = labelsOf(r, templateMetadata.annotations, `${templatePath}.metadata.annotations`)
  const podSpec = clone(r.object(template.spec, `${templatePath}.spec`, {supported: Object.keys(asObject(template.spec))}))
  checkSelector(r, kind, spec, specPath, labels)

  const hash = templateHash(template)
  let podName: string
  let via: string | undefined
  switch (kind) {
    case 'Deployment': {
      via = `ReplicaSet ${name}-${hash}`
      labels['pod-template-hash'] = hash
      podName = generatedName(`${name}-${hash}-`, options.random)
      break
    }

    case 'ReplicaSet': {
      podName = generatedName(`${name}-`, options.random)
      break
    }

    case 'DaemonSet': {
      labels['controller-revision-hash'] = hash
      labels['pod-template-generation'] = '1'
      podName = generatedName(`${name}-`, options.random)
      break
    }

    case 'StatefulSet': {
      podName = `${name}-0`
      labels['controller-revision-hash'] = `${name}-${hash}`
      labels['statefulset.kubernetes.io/pod-name'] = podName
      labels['apps.kubernetes.io/pod-index'] = '0'
      podSpec.hostname = podName
      addClaimVolumes(r, spec, podSpec, podName)
      break
    }

    default: {
      if (kind === 'CronJob') via = `Job ${jobName}`
      const restartPolicy = podSpec.restartPolicy
      if (restartPolicy !== 'Never' && restartPolicy !== 'OnFailure') {
        r.fail(
          `${templatePath}.spec.restartPolicy`,
          `must be "OnFailure" or "Never" for a Job, not ${restartPolicy === undefined ? 'unset (Always)' : JSON.stringify(restartPolicy)}`,
        )
      }

      if (spec.manualSelector !== true) {
        for (const key of ['batch.kubernetes.io/controller-uid', 'controller-uid']) labels[key] = uid
        for (const key of ['batch.kubernetes.io/job-name', 'job-name']) labels[key] = jobName
      }

      if (spec.completionMode === 'Indexed') {
        labels['batch.kubernetes.io/job-completion-index'] = '0'
        annotations['batch.kubernetes.io/job-completion-index'] = '0'
        addCompletionIndexEnv(podSpec)
        podName = generatedName(`${jobName}-0-`, options.random)
      } else {
        podName = generatedName(`${jobName}-`, options.random)
      }
    }
  }

  const podMetadata: JsonObject = {name: podName, labels, annotations}
  if (namespace) podMetadata.namespace = namespace
  return {
    document: {apiVersion: 'v1', kind: 'Pod', metadata: podMetadata, spec: podSpec},
    owner: {kind, name, ...(via ? {via} : {})},
    source: `${source} (${kind} ${name}, ${templatePath})`,
  }
}

function asObject(value: Json | undefined): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}
}

/** apps/v1 requires a selector that selects the template's labels (ValidateDeploymentSpec and friends). */
function checkSelector(r: FieldReader, kind: WorkloadKind, spec: JsonObject, specPath: string, labels: Record<string, string>): void {
  if (kind === 'Job' || kind === 'CronJob') return
  if (spec.selector === undefined || spec.selector === null) r.fail(`${specPath}.selector`, 'is required')
  const selector = r.object(spec.selector, `${specPath}.selector`, SELECTOR_RULE)
  const matchLabels = r.stringMap(selector.matchLabels, `${specPath}.selector.matchLabels`)
  for (const [key, value] of Object.entries(matchLabels)) {
    if (labels[key] !== value)
      r.fail(`${specPath}.template.metadata.labels`, `\`selector\` does not match template \`labels\` (${key}=${value})`)
  }
}

/** The StatefulSet controller's updateStorage: a persistentVolumeClaim volume per claim template, <claim>-<sts>-<ordinal>. */
function addClaimVolumes(r: FieldReader, spec: JsonObject, podSpec: JsonObject, podName: string): void {
  const templates = r.list(spec.volumeClaimTemplates, 'spec.volumeClaimTemplates')
  if (templates.length === 0) return
  const volumes = [...(Array.isArray(podSpec.volumes) ? podSpec.volumes : [])]
  for (const [index, entry] of templates.entries()) {
    const claim = r.requiredString(asObject(asObject(entry).metadata).name, `spec.volumeClaimTemplates[${index}].metadata.name`)
    const existing = volumes.findIndex((volume) => asObject(volume).name === claim)
    const volume = {name: claim, persistentVolumeClaim: {claimName: `${claim}-${podName}`}}
    if (existing === -1) volumes.push(volume)
    else volumes[existing] = volume
  }

  podSpec.volumes = volumes
}

/** Indexed Jobs: JOB_COMPLETION_INDEX from the completion-index annotation, in every container. */
function addCompletionIndexEnv(podSpec: JsonObject): void {
  for (const key of ['initContainers', 'containers']) {
    if (!Array.isArray(podSpec[key])) continue
    for (const container of podSpec[key]) {
      const object = asObject(container)
      const env = Array.isArray(object.env) ? object.env : []
      if (env.some((variable) => asObject(variable).name === 'JOB_COMPLETION_INDEX')) continue
      object.env = [
        ...env,
        {
          name: 'JOB_COMPLETION_INDEX',
          valueFrom: {fieldRef: {fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}},
        },
      ]
    }
  }
}
