/**
 * The orders crictl v1.37 lists objects in: newest first for pods and containers, by first tag,
 * digest or ID for images, by ID for stats, each through Go's slices.SortFunc. Apart from
 * documents.ts (the JSON and YAML documents) so that a table listing does not load those.
 */
import type {Image} from '../../generated/runtime/v1/api.js'
import {compareGoStrings} from './go-json.js'

/**
 * Go's slices.SortFunc as it orders short lists: insertion sort (pdqsort's for 12 items or fewer), which
 * decides the order even when the comparison is not consistent (crictl's image order mixes tags, digests
 * and IDs). Longer lists are sorted stably, which agrees with Go whenever the comparison is a true order.
 */
export function goSort<T>(items: readonly T[], less: (a: T, b: T) => boolean): T[] {
  const out = [...items]
  if (out.length > 12) return out.sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0))
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j], out[j - 1]); j--) [out[j], out[j - 1]] = [out[j - 1], out[j]]
  }

  return out
}

/** crictl's list order for pods and containers: newest first by createdAt. */
export function newestFirst<T extends {createdAt: string}>(items: readonly T[]): T[] {
  return goSort(items, (a, b) => BigInt(a.createdAt) > BigInt(b.createdAt))
}

/** crictl's image order: by first tag when both have one, else by first digest, else by ID. */
export function byImageRef(images: readonly Image[]): Image[] {
  return goSort(images, (a, b) => {
    if (a.repoTags.length > 0 && b.repoTags.length > 0) return compareGoStrings(a.repoTags[0], b.repoTags[0]) < 0
    if (a.repoDigests.length > 0 && b.repoDigests.length > 0) return compareGoStrings(a.repoDigests[0], b.repoDigests[0]) < 0
    return compareGoStrings(a.id, b.id) < 0
  })
}

/** crictl's stats order: by the ID in the attributes. */
export function byAttributesId<T extends {attributes?: {id: string}}>(stats: readonly T[]): T[] {
  return goSort(stats, (a, b) => compareGoStrings(a.attributes?.id ?? '', b.attributes?.id ?? '') < 0)
}
