import {existsSync, mkdirSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import type {CriClient} from '../../../../src/lib/cri/client.js'
import {recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {claimRows, deleteNamedClaims} from '../../../../src/lib/kubelet/claims/claim-list.js'
import {claimsOfPods, deleteClaims} from '../../../../src/lib/kubelet/claims/kill-claims.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'

const A = 'unix:///run/a/containerd.sock'
const base = mkdtempSync(join(tmpdir(), 'podctl-kill-claims-'))
afterAll(() => rmSync(base, {recursive: true, force: true}))
const podDirRoot = join(base, 'pods')
const claimsRoot = join(base, 'claims')

const pod = (name: string, uid: string, claims: string[]) =>
  ({
    name,
    namespace: 'prod',
    uid,
    labels: {},
    containers: [],
    initContainers: [],
    volumes: claims.map((claim) => ({
      name: claim,
      persistentVolumeClaim: {claimName: claim, readOnly: false, path: `${claimsRoot}/prod/${claim}`},
    })),
  }) as unknown as PodModel

/** A runtime whose READY sandboxes are those of `ready` (pod uids). */
function runtime(ready: string[]): CriClient {
  return {
    runtimeEndpoint: A,
    async runtime(method: string) {
      if (method !== 'listPodSandbox') throw new Error(`unexpected ${method}`)
      return {
        items: ready.map((uid) => ({id: `sb-${uid}`, state: 'SANDBOX_READY', metadata: {name: 'x', namespace: 'prod', uid, attempt: 0}})),
      }
    },
  } as unknown as CriClient
}

const sandboxes = (...uids: string[]) => ({sandboxes: uids.map((uid) => ({metadata: {uid}}))})

describe('kill --delete-claims', () => {
  it("removes the killed pods' claims, keeps one a running pod uses, naming it", async () => {
    await recordDesiredPod(podDirRoot, pod('web', 'u1', ['data', 'shared']), A)
    await recordDesiredPod(podDirRoot, pod('db', 'u2', ['shared']), A)
    for (const claim of ['data', 'shared']) mkdirSync(`${claimsRoot}/prod/${claim}`, {recursive: true})
    const claims = await claimsOfPods(podDirRoot, [sandboxes('u1', 'u1')], A)
    expect(claims.map((claim) => claim.name)).toEqual(['data', 'shared'])
    const outcome = await deleteClaims(runtime(['u2']), claims, {podDirRoot, claimsRoot})
    expect(outcome.removed.map((claim) => claim.name)).toEqual(['data'])
    expect(outcome.kept).toEqual([{claim: claims[1], reason: 'in use by pod db_prod'}])
    expect(existsSync(`${claimsRoot}/prod/data`)).toBe(false)
    expect(existsSync(`${claimsRoot}/prod/shared`)).toBe(true)
  })

  it('leaves a claim recorded under another root alone', async () => {
    mkdirSync(`${claimsRoot}/prod/data`, {recursive: true})
    const claims = await claimsOfPods(podDirRoot, [sandboxes('u1')], A)
    const other = join(base, 'other-root')
    const outcome = await deleteClaims(runtime([]), claims, {podDirRoot, claimsRoot: other})
    expect(outcome.removed).toEqual([])
    expect(outcome.kept[0].reason).toBe(`${claimsRoot}/prod/data is not under --claims-root ${other}; left alone`)
    expect(existsSync(`${claimsRoot}/prod/data`)).toBe(true)
  })
})

describe('podctl claims', () => {
  it('lists the claims with the running pods using them, and deletes by name only when none does', async () => {
    const root = join(base, 'listed')
    await recordDesiredPod(podDirRoot, pod('a', 'u3', []), A)
    const model = pod('web', 'u4', ['logs'])
    model.volumes[0].persistentVolumeClaim!.path = `${root}/prod/logs`
    await recordDesiredPod(podDirRoot, model, A)
    const other = pod('tail', 'u5', ['logs'])
    other.volumes[0].persistentVolumeClaim!.path = `${root}/prod/logs`
    await recordDesiredPod(podDirRoot, other, A)
    for (const claim of ['logs', 'old']) mkdirSync(`${root}/prod/${claim}`, {recursive: true})
    const settings = {podDirRoot, claimsRoot: root}
    const rows = await claimRows(runtime(['u4', 'u5']), settings)
    expect(rows.map(({name, usedBy}) => ({name, usedBy}))).toEqual([
      {name: 'logs', usedBy: 'web_prod, tail_prod'},
      {name: 'old', usedBy: undefined},
    ])
    expect(await claimRows(runtime([]), settings, {namespace: 'other'})).toEqual([])
    const outcome = await deleteNamedClaims(runtime(['u4']), settings, 'prod', ['logs', 'old', 'gone'])
    expect(outcome.removed).toEqual(['prod/old'])
    expect(outcome.failures.map(({error}) => [error.code, error.message])).toEqual([
      ['ClaimInUse', 'claim prod/logs is in use by pod web_prod; kill the pod first'],
      ['NotFound', `no claim prod/gone (${root}/prod/gone); see podctl claims`],
    ])
  })
})
