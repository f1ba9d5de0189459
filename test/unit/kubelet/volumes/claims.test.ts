import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {
  claimDirectory,
  claimsRootFromEnv,
  listClaims,
  provisionClaim,
  removeClaim,
  resolveClaims,
} from '../../../../src/lib/kubelet/volumes/claims.js'
import {volumeHostPaths} from '../../../../src/lib/kubelet/volumes/pod-dirs.js'
import {volumeMounts} from '../../../../src/lib/kubelet/volumes/mounts.js'
import type {PodModel, VolumeModel} from '../../../../src/lib/manifest/model.js'

const base = mkdtempSync(join(tmpdir(), 'podctl-claims-'))
afterAll(() => rmSync(base, {recursive: true, force: true}))

function pod(volumes: VolumeModel[]): PodModel {
  const container = {
    name: 'app',
    volumeMounts: volumes.map((volume) => ({name: volume.name, mountPath: `/${volume.name}`, readOnly: false})),
  }
  return {name: 'web', namespace: 'prod', uid: 'u1', volumes, containers: [container], initContainers: []} as unknown as PodModel
}

describe('claim directories', () => {
  it('the root comes from PODCTL_CLAIMS_ROOT, else /var/lib/podctl/claims', () => {
    expect(claimsRootFromEnv({})).toBe('/var/lib/podctl/claims')
    expect(claimsRootFromEnv({PODCTL_CLAIMS_ROOT: '/srv/claims'})).toBe('/srv/claims')
    expect(claimDirectory('/srv/claims/', 'prod', 'data')).toBe('/srv/claims/prod/data')
  })

  it('are resolved under the root, with one note for a claim neither in the input nor on disk', () => {
    const root = join(base, 'resolve')
    const pods = [pod([{name: 'a', persistentVolumeClaim: {claimName: 'data', readOnly: false}}])]
    const notes = resolveClaims(pods, root)
    expect(notes).toEqual([
      `claim prod/data (pod web_prod) is neither in the input nor on disk: provisioned empty at ${root}/prod/data ` +
        'when the pod starts, as by a default StorageClass',
    ])
    expect(volumeHostPaths(pods[0], '/pods').get('a')).toBe(`${root}/prod/data`)
    const bound = pod([
      {name: 'a', persistentVolumeClaim: {claimName: 'data', readOnly: false}, hostPath: {path: '/srv', type: 'Directory'}},
    ])
    expect(resolveClaims([bound], root)).toEqual([])
    expect(volumeHostPaths(bound, '/pods').get('a')).toBe('/srv')
  })

  it('are made 0777 on first use with a record beside them, reused after, and read-only when the volume says', async () => {
    const root = join(base, 'provision')
    const volume = {
      name: 'a',
      persistentVolumeClaim: {claimName: 'data', readOnly: true, path: `${root}/prod/data`},
    } satisfies VolumeModel
    const model = pod([volume])
    expect(await provisionClaim(model, volume)).toBe(`${root}/prod/data`)
    expect(statSync(`${root}/prod/data`).mode & 0o777).toBe(0o777)
    const record = JSON.parse(readFileSync(`${root}/prod/data.claim.json`, 'utf8'))
    expect(record).toMatchObject({name: 'data', namespace: 'prod', provisioned: 'dynamic', createdFor: 'web_prod'})
    writeFileSync(`${root}/prod/data/file`, 'x')
    await provisionClaim(model, volume)
    expect(readFileSync(`${root}/prod/data/file`, 'utf8')).toBe('x')
    expect(volumeMounts(model, model.containers[0], volumeHostPaths(model, '/pods'))[0]).toMatchObject({
      hostPath: `${root}/prod/data`,
      readonly: true,
    })
    expect(await listClaims(root)).toEqual([{namespace: 'prod', name: 'data', path: `${root}/prod/data`, record, bytes: 1}])
  })

  it('are removed only at <root>/<namespace>/<claim>', async () => {
    const root = join(base, 'remove')
    mkdirSync(`${root}/prod/data`, {recursive: true})
    writeFileSync(`${root}/prod/data.claim.json`, '{}')
    const outside = join(base, 'outside')
    mkdirSync(outside)
    symlinkSync(outside, `${root}/elsewhere`)
    expect(await removeClaim(root, 'prod', 'data', '/somewhere/else/data')).toBe('outside')
    expect(await removeClaim(root, 'elsewhere', 'x')).toBe('outside')
    expect(await removeClaim(root, '..', 'x')).toBe('outside')
    expect(await removeClaim(root, 'prod', 'data', `${root}/prod/data`)).toBe('removed')
    expect(existsSync(`${root}/prod/data`)).toBe(false)
    expect(existsSync(`${root}/prod/data.claim.json`)).toBe(false)
    expect(await removeClaim(root, 'prod', 'data')).toBe('absent')
    expect(existsSync(outside)).toBe(true)
  })
})
