/**
 * `podctl claims`: the claim directories under the claims root with their size, request and the
 * running pods that use them, and the removal of named claims, refused for one a running pod uses.
 */
import type {CriClient} from '../../cri/client.js'
import {ClaimInUseError, NotFoundError, type PodctlError} from '../../errors.js'
import {claimDirectory, listClaims, removeClaim} from '../volumes/claims.js'
import {claimUsers} from './kill-claims.js'

export interface ClaimRow {
  namespace: string
  name: string
  path: string
  bytes: number
  /** spec.resources.requests.storage of the claim document, if it had one. */
  storage?: string
  provisioned?: string
  createdAt?: string
  /** The running pod (name_namespace) using it. */
  usedBy?: string
}

export interface ClaimSettings {
  claimsRoot: string
  podDirRoot: string
}

/** Every claim under the root (of `namespace` when given; only `names` when any), with who uses it. */
export async function claimRows(
  client: CriClient,
  settings: ClaimSettings,
  filter: {namespace?: string; names?: readonly string[]} = {},
): Promise<ClaimRow[]> {
  const users = await claimUsers(client, settings.podDirRoot)
  return (await listClaims(settings.claimsRoot))
    .filter((claim) => filter.namespace === undefined || claim.namespace === filter.namespace)
    .filter((claim) => !filter.names?.length || filter.names.includes(claim.name))
    .map(({namespace, name, path, bytes, record}) => {
      const usedBy = users.get(path)
      return {
        namespace,
        name,
        path,
        bytes,
        ...(record?.spec.storage ? {storage: record.spec.storage} : {}),
        ...(record ? {provisioned: record.provisioned, createdAt: record.createdAt} : {}),
        ...(usedBy ? {usedBy} : {}),
      }
    })
}

/** Removes the named claims of `namespace`; each one a running pod uses, or that is not there, is a failure of its own. */
export async function deleteNamedClaims(
  client: CriClient,
  settings: ClaimSettings,
  namespace: string,
  names: readonly string[],
): Promise<{removed: string[]; failures: Array<{claim: string; error: PodctlError}>}> {
  const users = await claimUsers(client, settings.podDirRoot)
  const removed: string[] = []
  const failures: Array<{claim: string; error: PodctlError}> = []
  for (const name of names) {
    const claim = `${namespace}/${name}`
    const user = users.get(claimDirectory(settings.claimsRoot, namespace, name))
    if (user) {
      failures.push({claim, error: new ClaimInUseError(`claim ${claim} is in use by pod ${user}; kill the pod first`)})
      continue
    }

    const outcome = await removeClaim(settings.claimsRoot, namespace, name)
    if (outcome === 'removed') removed.push(claim)
    else {
      const where = claimDirectory(settings.claimsRoot, namespace, name)
      const why = outcome === 'absent' ? `no claim ${claim} (${where}); see podctl claims` : `${where} is not a claim directory; left alone`
      failures.push({claim, error: new NotFoundError(why)})
    }
  }

  return {removed, failures}
}
