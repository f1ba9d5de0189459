import type {CriClient} from '../cri/client.js'
import {settleLimit} from '../util/concurrency.js'
import {AmbiguousError, NotFoundError, PodctlError} from '../errors.js'
import {toPlain} from '../util/plain.js'
import {epochNanos, nanosToRfc3339} from '../util/time.js'
import type {Container, Image, PodSandbox} from '../../generated/runtime/v1/api.js'
import {containerName} from './containers.js'
import {imageLabel, resolveImage} from '../images/store.js'
import {podFullName, shortId} from '../kube/helpers.js'
import {matchContainerRef, matchPodSandboxes, type ResolveOptions} from './resolve.js'
import {redactInspectDocument} from './redact.js'
import {runtimeHandlerFromInfo} from './runtime-handler.js'
import {withVerboseInfo} from './verbose-info.js'

/**
 * `inspect`: the runtime's full status of a container, pod or image, with its verbose `info`
 * map merged in as real JSON and the CRI's int64 nanosecond timestamps as RFC 3339, in the
 * shape crictl users know: `{"status": {...}, "info": {...}}`.
 */

export const INSPECT_KINDS = ['container', 'pod', 'image'] as const
export type InspectKind = (typeof INSPECT_KINDS)[number]

/** At most this many *Status calls in flight. */
export const INSPECT_CONCURRENCY = 8

const INT64 = /^-?\d+$/

/** Every `…At` int64 field, at any depth, rewritten to RFC 3339 (a copy; the input is untouched). */
export function rewriteTimestamps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteTimestamps(item))
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const isTimestamp = key.endsWith('At') && ((typeof item === 'string' && INT64.test(item)) || typeof item === 'number')
    out[key] = isTimestamp ? nanosToRfc3339(item as string | number) : rewriteTimestamps(item)
  }

  return out
}

/**
 * `{status, ...info}`: the CRI status (timestamps as RFC 3339) with each info key at the top
 * level. An info key that would overwrite one of ours is kept under `<key>Info` instead.
 */
export function statusDocument(
  status: unknown,
  info: Readonly<Record<string, string>> | undefined,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return withVerboseInfo({status: rewriteTimestamps(toPlain(status)), ...extra}, info)
}

export interface InspectTarget {
  kind: InspectKind
  id: string
  /** "container 1a2b3c4d5e6f7 (web)" for messages. */
  label: string
}

/** What the resolver searches; only the lists a kind needs are fetched. */
export interface InspectLists {
  containers?: readonly Container[]
  sandboxes?: readonly PodSandbox[]
  images?: readonly Image[]
}

function containerTarget(container: Container): InspectTarget {
  return {kind: 'container', id: container.id, label: `container ${shortId(container.id)} (${containerName(container) || '?'})`}
}

function podTarget(pod: PodSandbox): InspectTarget {
  const name = podFullName(pod.metadata?.name ?? '?', pod.metadata?.namespace ?? '?')
  return {kind: 'pod', id: pod.id, label: `pod ${shortId(pod.id)} (${name})`}
}

function imageTarget(image: Image): InspectTarget {
  return {kind: 'image', id: image.id, label: `image ${shortId(image.id)} (${imageLabel(image)})`}
}

const RESOLVERS: Record<InspectKind, (lists: InspectLists, ref: string, options: ResolveOptions) => InspectTarget> = {
  container: (lists, ref, options) => containerTarget(matchContainerRef(lists.containers ?? [], lists.sandboxes ?? [], ref, options)),
  // A pod name names every attempt; inspect shows the newest sandbox.
  pod: (lists, ref, options) => podTarget(matchPodSandboxes(lists.sandboxes ?? [], ref, options)[0]),
  image: (lists, ref) => imageTarget(resolveImage(lists.images ?? [], ref)),
}

/**
 * One reference → one object. With a kind, only that kind is searched. Without, it is tried as
 * a container, a pod and an image; more than one hit (or an ambiguous prefix in any kind) is an
 * error that lists every candidate, so the user can add the kind or more characters.
 */
export function resolveInspectTarget(
  lists: InspectLists,
  ref: string,
  kind: InspectKind | undefined,
  options: ResolveOptions = {},
): InspectTarget {
  if (kind) return RESOLVERS[kind](lists, ref, options)

  const found: InspectTarget[] = []
  const ambiguous: AmbiguousError[] = []
  for (const candidate of INSPECT_KINDS) {
    try {
      found.push(RESOLVERS[candidate](lists, ref, options))
    } catch (error) {
      if (error instanceof AmbiguousError) ambiguous.push(error)
      else if (!(error instanceof NotFoundError)) throw error
    }
  }

  if (found.length === 1 && ambiguous.length === 0) return found[0]
  if (found.length === 0 && ambiguous.length === 1) throw ambiguous[0]
  if (found.length === 0 && ambiguous.length === 0) {
    throw new NotFoundError(`no container, pod or image matches "${ref}"; list them with: podctl ps -a / podctl pods / podctl images`)
  }

  const matches = [...found.map((target) => target.label), ...ambiguous.map((error) => error.message)]
  throw new AmbiguousError(
    `"${ref}" matches more than one object: ${matches.join('; ')}; say which with: podctl inspect container|pod|image ${ref}`,
  )
}

/** The lists needed to resolve `refs` as `kind` (all three without a kind), fetched concurrently. */
export async function listForInspect(client: CriClient, refs: readonly string[], kind: InspectKind | undefined): Promise<InspectLists> {
  const needContainers = kind === undefined || kind === 'container'
  const needSandboxes = kind === undefined || kind === 'pod' || refs.some((ref) => ref.includes('/'))
  const needImages = kind === undefined || kind === 'image'
  const [containers, sandboxes, images] = await Promise.all([
    needContainers ? client.runtime('listContainers', {}).then((r) => r.containers) : undefined,
    needSandboxes ? client.runtime('listPodSandbox', {}).then((r) => r.items) : undefined,
    needImages ? client.image('listImages', {}).then((r) => r.images) : undefined,
  ])
  return {containers, sandboxes, images}
}

/** The verbose status document of one object. */
export async function inspectTarget(client: CriClient, target: InspectTarget, verbose = true): Promise<Record<string, unknown>> {
  switch (target.kind) {
    case 'container': {
      const response = await client.runtime('containerStatus', {containerId: target.id, verbose})
      // Env values podctl took from a Secret are shown as <redacted> (io.podctl.secretEnv).
      return redactInspectDocument(statusDocument(response.status, response.info))
    }

    case 'pod': {
      const response = await client.runtime('podSandboxStatus', {podSandboxId: target.id, verbose})
      const extra: Record<string, unknown> = {}
      // Newer runtimes return the pod's containers with it (KEP-3386); older ones leave these empty.
      if (response.containersStatuses.length > 0) extra.containersStatuses = rewriteTimestamps(toPlain(response.containersStatuses))
      // CRI-O 1.26 sends both of its sandbox times in seconds.
      if (response.timestamp && response.timestamp !== '0') extra.timestamp = nanosToRfc3339(epochNanos(response.timestamp))
      const status = response.status && {...response.status, createdAt: epochNanos(response.status.createdAt)}
      if (status && !status.runtimeHandler) status.runtimeHandler = runtimeHandlerFromInfo(response.info) ?? ''
      return statusDocument(status, response.info, extra)
    }

    case 'image': {
      const response = await client.image('imageStatus', {image: {image: target.id}, verbose})
      // ImageStatus answers "no image" rather than NotFound when it is gone.
      if (!response.image) throw new NotFoundError(`${target.label} was removed while inspecting it`)
      return statusDocument(response.image, response.info)
    }
  }
}

export interface InspectOutcome<T = Record<string, unknown>> {
  documents: T[]
  failures: Array<{ref: string; error: PodctlError}>
}

/**
 * Resolves and inspects every reference, at most INSPECT_CONCURRENCY at a time; a reference
 * that fails is reported and never stops the others. Documents keep the order of `refs`.
 */
export async function inspectObjects<T = Record<string, unknown>>(
  client: CriClient,
  refs: readonly string[],
  kind: InspectKind | undefined,
  options: ResolveOptions & {verbose?: boolean} = {},
  // What one resolved object becomes: podctl's document, or (crictl personality) crictl's text.
  inspect: (client: CriClient, target: InspectTarget, verbose: boolean) => Promise<T> = inspectTarget as never,
): Promise<InspectOutcome<T>> {
  const lists = await listForInspect(client, refs, kind)
  const settled = await settleLimit(refs, INSPECT_CONCURRENCY, async (ref) =>
    inspect(client, resolveInspectTarget(lists, ref, kind, options), options.verbose ?? true),
  )
  const outcome: InspectOutcome<T> = {documents: [], failures: []}
  for (const [i, result] of settled.entries()) {
    if (result.status === 'fulfilled') outcome.documents.push(result.value as T)
    else outcome.failures.push({ref: refs[i], error: result.reason as PodctlError})
  }

  return outcome
}
