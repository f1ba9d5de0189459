/**
 * Deployment, ReplicaSet, StatefulSet, DaemonSet, Job and CronJob documents → the Pods their
 * controller would create on one node, in its order, named and labelled as the controller names and labels them:
 * - Deployment: spec.replicas pods (default 1) of ReplicaSet <deploy>-<pod-template-hash>, each
 *   <rs>-<5 chars> with label pod-template-hash; ReplicaSet: spec.replicas pods <rs>-<5 chars>;
 * - DaemonSet: one pod (one node) <ds>-<5 chars>, controller-revision-hash and pod-template-generation;
 * - StatefulSet: spec.replicas pods <sts>-<ordinal> from spec.ordinals.start, with
 *   statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index and controller-revision-hash
 *   <sts>-<hash>; hostname the pod's name, subdomain spec.serviceName (the FQDN in /etc/hosts);
 *   volumeClaimTemplates become persistentVolumeClaim volumes <claim>-<sts>-<ordinal> (bound with
 *   --volume NAME=DIR). OrderedReady (the default): each pod starts after the one before is Running
 *   and Ready (startAfter, honoured by run-pods.ts); Parallel: together;
 * - Job: completions pods (default parallelism, default 1) <job>-<5 chars> (Indexed: <job>-<index>-<5 chars>
 *   with the completion index), job-name / controller-uid labels, old and new; at most parallelism at
 *   once (pod N starts after pod N - parallelism completed);
 * - CronJob: its jobTemplate as the Job <cronjob>-<minutes since the epoch> scheduled now.
 * The 5 characters are derived from the workload, its template hash and the replica index
 * (workload-names.ts replicaSuffix): reading the same file again gives the same pods.
 * run --replicas replaces spec.replicas and completions. Hashes are FNV-32a of the template, encoded
 * as the controllers encode them (workload-names.ts); the value differs from a cluster's (that
 * hashes Go's in-memory object), the form does not. workloadMatch (workload-names.ts) is what `kill -f`
 * finds the pods by.
 */
import {FieldReader, INT32, type Json, type JsonObject} from './fields.js'
import type {PodOwnerModel, StartAfterModel} from './model.js'
import {replicaName, templateHash, type WorkloadMatch, workloadMatch, workloadUid} from './workload-names.js'

export {randomSuffix, replicaName, safeEncode, templateHash, type WorkloadMatch} from './workload-names.js'

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

/** Each kind's spec fields: replicas, ordering and the template shape the pods; strategy, history and deadlines change nothing here. */
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

/** The largest replica count or completions podctl starts on one node. */
const MAX_REPLICAS = 1000

export interface WorkloadPod {
  /** A v1 Pod document for parsePod. */
  document: JsonObject
  owner: PodOwnerModel
  /** Where the template sits, for messages: "deploy.yaml (Deployment web, spec.template)". */
  source: string
  startAfter?: StartAfterModel
}

export interface WorkloadOptions {
  random?: (max: number) => number
  newUid?: () => string
  now?: () => number
  /** run --replicas: replaces spec.replicas (Deployment, ReplicaSet, StatefulSet) and a Job's completions. */
  replicas?: number
}

function labelsOf(r: FieldReader, value: Json | undefined, path: string): Record<string, string> {
  return r.stringMap(value, path)
}

function clone<T extends Json>(value: T): T {
  return structuredClone(value)
}

/** The first pod of a workload (podsFromWorkload with one replica). */
export function podFromWorkload(document: JsonObject, kind: WorkloadKind, source: string, options: WorkloadOptions = {}): WorkloadPod {
  return podsFromWorkload(document, kind, source, {...options, replicas: 1}).pods[0]
}

/** A workload's template read and checked once; each pod is a copy of it. */
interface Template {
  kind: WorkloadKind
  name: string
  namespace?: string
  uid: string
  spec: JsonObject
  specPath: string
  templatePath: string
  jobName: string
  labels: Record<string, string>
  annotations: Record<string, string>
  podSpec: JsonObject
  hash: string
  /** The file, for messages. */
  source: string
  random?: (max: number) => number
}

/** The pods a workload's controller makes on one node, in the order it makes them, and what identifies them. */
export function podsFromWorkload(
  document: JsonObject,
  kind: WorkloadKind,
  source: string,
  options: WorkloadOptions = {},
): {pods: WorkloadPod[]; match: WorkloadMatch} {
  const r = new FieldReader(source)
  const t = {...readTemplate(r, document, kind, options), source, random: options.random}
  const count = replicaCount(r, t, options.replicas)
  const pods: WorkloadPod[] = []
  for (let index = 0; index < count; index++) pods.push(workloadPod(r, t, index, pods))
  for (const pod of pods) pod.owner.replicas = count
  return {pods, match: workloadMatch(t)}
}

function readTemplate(
  r: FieldReader,
  document: JsonObject,
  kind: WorkloadKind,
  options: WorkloadOptions,
): Omit<Template, 'source' | 'random'> {
  const root = r.object(document, '', ROOT_RULE)
  const apiVersion = r.string(root.apiVersion, 'apiVersion', {required: true})
  if (apiVersion !== API_VERSIONS[kind]) r.fail('apiVersion', `must be "${API_VERSIONS[kind]}" for a ${kind}, not "${apiVersion}"`)
  const metadata = r.object(root.metadata, 'metadata', METADATA_RULE)
  const name = r.requiredString(metadata.name, 'metadata.name')
  const namespace = r.string(metadata.namespace, 'metadata.namespace') || undefined
  const uid = r.string(metadata.uid, 'metadata.uid') || (options.newUid?.() ?? workloadUid(kind, namespace, name))
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
  if (kind === 'Job' || kind === 'CronJob') {
    const restartPolicy = podSpec.restartPolicy
    if (restartPolicy !== 'Never' && restartPolicy !== 'OnFailure') {
      r.fail(
        `${templatePath}.spec.restartPolicy`,
        `must be "OnFailure" or "Never" for a Job, not ${restartPolicy === undefined ? 'unset (Always)' : JSON.stringify(restartPolicy)}`,
      )
    }
  }

  const hash = templateHash(template)
  return {kind, name, namespace, uid, spec, specPath, templatePath, jobName, labels, annotations, podSpec, hash}
}

/**
 * How many pods: spec.replicas (default 1) of a Deployment, ReplicaSet or StatefulSet; one for a
 * DaemonSet (one node); a Job's completions (default its parallelism, default 1). --replicas
 * replaces replicas and completions.
 */
function replicaCount(r: FieldReader, t: Template, override: number | undefined): number {
  if (t.kind === 'DaemonSet') return 1
  const isJob = t.kind === 'Job' || t.kind === 'CronJob'
  const field = isJob ? 'completions' : 'replicas'
  const written = r.integer(t.spec[field], `${t.specPath}.${field}`, {min: 0, max: MAX_REPLICAS})
  if (override !== undefined) return override
  return written ?? (isJob ? jobParallelism(r, t) : 1)
}

/** A Job's parallelism, default 1 (0 would suspend it: podctl runs it one at a time instead). */
function jobParallelism(r: FieldReader, t: Template): number {
  return Math.max(1, r.integer(t.spec.parallelism, `${t.specPath}.parallelism`, {min: 0, max: MAX_REPLICAS}) ?? 1)
}

/** Replica `index` of the workload, named and labelled as its controller names and labels it. */
function workloadPod(r: FieldReader, t: Template, index: number, earlier: WorkloadPod[]): WorkloadPod {
  const {kind, name, hash} = t
  const labels = {...t.labels}
  const annotations = {...t.annotations}
  const podSpec = clone(t.podSpec)
  const identity = {kind, namespace: t.namespace, name: t.jobName, hash}
  const named = (base: string) => replicaName(base, identity, index, t.random)
  let podName: string
  let via: string | undefined
  let startAfter: StartAfterModel | undefined
  switch (kind) {
    case 'Deployment': {
      via = `ReplicaSet ${name}-${hash}`
      labels['pod-template-hash'] = hash
      podName = named(`${name}-${hash}-`)
      break
    }

    case 'ReplicaSet':
    case 'DaemonSet': {
      if (kind === 'DaemonSet') {
        labels['controller-revision-hash'] = hash
        labels['pod-template-generation'] = '1'
      }

      podName = named(`${name}-`)
      break
    }

    case 'StatefulSet': {
      const ordinal = ordinalStart(r, t) + index
      podName = `${name}-${ordinal}`
      labels['controller-revision-hash'] = `${name}-${hash}`
      labels['statefulset.kubernetes.io/pod-name'] = podName
      labels['apps.kubernetes.io/pod-index'] = String(ordinal)
      // The StatefulSet controller's identity: hostname <sts>-<ordinal>, subdomain the governing Service.
      podSpec.hostname = podName
      const serviceName = r.string(t.spec.serviceName, 'spec.serviceName')
      if (serviceName) podSpec.subdomain = serviceName
      addClaimVolumes(r, t.spec, podSpec, podName)
      const policy = r.oneOf(t.spec.podManagementPolicy, 'spec.podManagementPolicy', ['OrderedReady', 'Parallel'])
      if (index > 0 && policy !== 'Parallel') {
        const previous = String(asObject(earlier[index - 1].document.metadata).name)
        const reason = `StatefulSet ${name} starts pod ${podName} once ${previous} is Running and Ready (OrderedReady)`
        startAfter = {pod: previous, until: 'ready', reason}
      }

      break
    }

    default: {
      if (kind === 'CronJob') via = `Job ${t.jobName}`
      if (t.spec.manualSelector !== true) {
        for (const key of ['batch.kubernetes.io/controller-uid', 'controller-uid']) labels[key] = t.uid
        for (const key of ['batch.kubernetes.io/job-name', 'job-name']) labels[key] = t.jobName
      }

      if (t.spec.completionMode === 'Indexed') {
        labels['batch.kubernetes.io/job-completion-index'] = String(index)
        annotations['batch.kubernetes.io/job-completion-index'] = String(index)
        addCompletionIndexEnv(podSpec)
        podName = named(`${t.jobName}-${index}-`)
      } else {
        podName = named(`${t.jobName}-`)
      }

      // At most `parallelism` pods at once: pod N starts once pod N - parallelism has completed.
      const parallelism = jobParallelism(r, t)
      if (index >= parallelism) {
        const previous = String(asObject(earlier[index - parallelism].document.metadata).name)
        const reason = `Job ${t.jobName} runs at most ${parallelism} pod${parallelism === 1 ? '' : 's'} at once (spec.parallelism)`
        startAfter = {pod: previous, until: 'completed', reason}
      }
    }
  }

  const podMetadata: JsonObject = {name: podName, labels, annotations}
  if (t.namespace) podMetadata.namespace = t.namespace
  return {
    document: {apiVersion: 'v1', kind: 'Pod', metadata: podMetadata, spec: podSpec},
    owner: {kind, name, ...(via ? {via} : {}), replica: index},
    source: `${t.source} (${kind} ${name}, ${t.templatePath})`,
    ...(startAfter ? {startAfter} : {}),
  }
}

/** spec.ordinals.start: the first StatefulSet ordinal (default 0). */
function ordinalStart(r: FieldReader, t: Template): number {
  if (t.spec.ordinals === undefined || t.spec.ordinals === null) return 0
  const ordinals = r.object(t.spec.ordinals, 'spec.ordinals', {supported: ['start']})
  return r.integer(ordinals.start, 'spec.ordinals.start', {min: 0, max: INT32.max}) ?? 0
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
