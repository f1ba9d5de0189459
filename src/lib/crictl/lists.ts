/**
 * crictl v1.37's `pods`, `ps` and `images` as it prints them: its columns and tabwriter layout, -q
 * and its -v blocks. Pure functions over the CRI lists, selected and sorted by list-calls.ts.
 */
import type {Container, Image, PodSandbox} from '../../generated/runtime/v1/api.js'
import {humanAge} from '../output/format.js'
import {PodLabel} from '../kube/labels.js'
import {tabwrite} from './tabwriter.js'
import {goHumanSize} from './units.js'
import {containerBlock, podBlock} from '../output/verbose-blocks.js'

const TRUNCATED_ID_LENGTH = 13

/** crictl's getTruncatedID: drop `prefix`, keep 13 characters. */
export function crictlTruncate(id: string, prefix = ''): string {
  const rest = id.startsWith(prefix) ? id.slice(prefix.length) : id
  return rest.slice(0, TRUNCATED_ID_LENGTH)
}

export interface CrictlListOptions {
  quiet?: boolean
  verbose?: boolean
  noTrunc?: boolean
  latest?: boolean
  last?: number
  now?: number
}

/** crictl's truncateCount: --latest keeps one, --last N keeps N (0: all). */
export function truncateCount<T>(items: readonly T[], options: CrictlListOptions): T[] {
  let count = items.length
  if (options.latest) count = 1
  if (options.last !== undefined && options.last > 0) count = options.last
  return items.slice(0, Math.min(count, items.length))
}

export function podState(state: string): string {
  return state === 'SANDBOX_READY' ? 'Ready' : 'NotReady'
}

export function containerState(state: string): string {
  const names: Record<string, string> = {
    CONTAINER_CREATED: 'Created',
    CONTAINER_RUNNING: 'Running',
    CONTAINER_EXITED: 'Exited',
  }
  return names[state] ?? 'Unknown'
}

const runtimeHandler = (pod: PodSandbox) => pod.runtimeHandler || '(default)'

/** `crictl pods`: the table, -q IDs, or -v blocks (stdout, exactly). */
export function crictlPodsText(pods: readonly PodSandbox[], options: CrictlListOptions): string {
  if (options.quiet) return pods.map((pod) => `${pod.id}\n`).join('')
  if (options.verbose) return pods.map((pod) => podBlock(pod)).join('')
  const now = options.now ?? Date.now()
  const rows = [['POD ID', 'CREATED', 'STATE', 'NAME', 'NAMESPACE', 'ATTEMPT', 'RUNTIME']]
  for (const pod of pods) {
    rows.push([
      options.noTrunc ? pod.id : crictlTruncate(pod.id),
      humanAge(pod.createdAt, now),
      podState(pod.state),
      pod.metadata?.name ?? '',
      pod.metadata?.namespace ?? '',
      String(pod.metadata?.attempt ?? 0),
      runtimeHandler(pod),
    ])
  }

  return tabwrite(rows)
}

/** go-digest's Parse: a registered algorithm and its hex of the right length. */
const DIGEST = /^(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$/

/** `crictl ps`: the table, -q IDs, or -v blocks. `repoImage` answers -r (the image's first tag, from ImageStatus). */
export async function crictlPsText(
  containers: readonly Container[],
  options: CrictlListOptions & {repoImage?: (image: string) => Promise<string>},
): Promise<string> {
  if (options.quiet) return containers.map((container) => `${container.id}\n`).join('')
  const now = options.now ?? Date.now()
  if (options.verbose) return containers.map((container) => containerBlock(container, now)).join('')
  const rows = [['CONTAINER', 'IMAGE', 'CREATED', 'STATE', 'NAME', 'ATTEMPT', 'POD ID', 'POD', 'NAMESPACE']]
  for (const container of containers) {
    let image = container.image?.image ?? ''
    // The kubelet creates containers by image ID: crictl shortens a digest to 13 hex characters.
    if (!options.noTrunc && DIGEST.test(image)) image = crictlTruncate(image.slice(image.indexOf(':') + 1))
    if (options.repoImage) image = await options.repoImage(image)
    rows.push([
      options.noTrunc ? container.id : crictlTruncate(container.id),
      image,
      humanAge(container.createdAt, now),
      containerState(container.state),
      container.metadata?.name ?? '',
      String(container.metadata?.attempt ?? 0),
      options.noTrunc ? container.podSandboxId : crictlTruncate(container.podSandboxId),
      container.labels[PodLabel.name] ?? 'unknown',
      container.labels[PodLabel.namespace] ?? 'unknown',
    ])
  }

  return tabwrite(rows)
}

export interface CrictlImagesOptions {
  quiet?: boolean
  verbose?: boolean
  noTrunc?: boolean
  digests?: boolean
  pinned?: boolean
}

/** `crictl images` of a list in crictl's order (byImageRef): one row per tag; -q IDs; -v blocks. */
export function crictlImagesText(images: readonly Image[], options: CrictlImagesOptions): string {
  if (options.quiet) return images.map((image) => `${image.id}\n`).join('')
  if (options.verbose) return images.map((image) => imageBlock(image)).join('')
  const header = ['IMAGE', 'TAG', ...(options.digests ? ['DIGEST'] : []), 'IMAGE ID', 'SIZE', ...(options.pinned ? ['PINNED'] : [])]
  const rows = [header]
  for (const image of images) {
    const [repository, digest] = repoDigestOf(image.repoDigests)
    const id = options.noTrunc ? image.id : crictlTruncate(image.id, 'sha256:')
    const shownDigest = options.noTrunc ? digest : crictlTruncate(digest, 'sha256:')
    for (const [name, tag] of repoTagPairs(image.repoTags, repository)) {
      rows.push([
        name,
        tag,
        ...(options.digests ? [shownDigest] : []),
        id,
        goHumanSize(image.size, 3),
        ...(options.pinned ? [String(image.pinned)] : []),
      ])
    }
  }

  return tabwrite(rows)
}

function imageBlock(image: Image): string {
  let text = `ID: ${image.id}\n`
  for (const tag of image.repoTags) text += `RepoTags: ${tag}\n`
  for (const digest of image.repoDigests) text += `RepoDigests: ${digest}\n`
  if (image.size !== '0' && image.size !== '') text += `Size: ${image.size}\n`
  if (image.uid) text += `Uid: value:${image.uid.value}\n`
  if (image.username) text += `Username: ${image.username}\n`
  if (image.pinned) text += `Pinned: true\n`
  return `${text}\n`
}

export function repoDigestOf(repoDigests: readonly string[]): [string, string] {
  if (repoDigests.length === 0) return ['<none>', '<none>']
  const parts = repoDigests[0].split('@')
  return parts.length === 2 ? [parts[0], parts[1]] : ['errorName', 'errorRepoDigest']
}

export function repoTagPairs(repoTags: readonly string[], imageName: string): Array<[string, string]> {
  if (repoTags.length === 0) return [[imageName, '<none>']]
  return repoTags.map((repoTag) => {
    const colon = repoTag.lastIndexOf(':')
    if (colon === -1) return ['errorRepoTag', 'errorRepoTag']
    const name = repoTag.slice(0, colon)
    return [name === '<none>' ? imageName : name, repoTag.slice(colon + 1)]
  })
}
