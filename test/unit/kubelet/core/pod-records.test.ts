/**
 * The records the ownership proof reads: each judged from the runtime asking, with the names a
 * record must match; unreadable, foreign-shaped or misplaced pod.json files are no records.
 */
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {readPodRecords} from '../../../../src/lib/kubelet/core/pod-records.js'

const A = 'unix:///run/a/containerd.sock'
const B = 'unix:///run/b/containerd.sock'
const root = mkdtempSync(join(tmpdir(), 'podctl-pod-records-'))

function write(directory: string, content: string): void {
  mkdirSync(join(root, directory), {recursive: true})
  writeFileSync(join(root, directory, 'pod.json'), content)
}

beforeAll(() => {
  const pod = (uid: string, extra: object) =>
    JSON.stringify({uid, name: 'web', namespace: 'shop', containers: [{name: 'app'}], initContainers: [{name: 'init'}], ...extra})
  write('u-this', pod('u-this', {runtimeEndpoint: A}))
  write('u-other', pod('u-other', {runtimeEndpoint: '/run/b/containerd.sock'}))
  write('u-legacy', pod('u-legacy', {}))
  write('u-moved', pod('u-elsewhere', {runtimeEndpoint: A}))
  write('u-broken', '{"uid": "u-broken", ')
  mkdirSync(join(root, 'u-empty'))
  writeFileSync(join(root, '.image-gc-0123456789ab.json'), '{}')
})

afterAll(() => rmSync(root, {recursive: true, force: true}))

describe('readPodRecords', () => {
  it('reads every pod directory, judging each record from the runtime asking', async () => {
    const records = await readPodRecords(root, A)
    expect([...records.keys()].sort()).toEqual(['u-legacy', 'u-other', 'u-this'])
    expect(records.get('u-this')).toEqual({
      uid: 'u-this',
      name: 'web',
      namespace: 'shop',
      owner: 'this',
      runtimeEndpoint: A,
      containers: ['app', 'init'],
    })
    expect(records.get('u-other')).toMatchObject({owner: 'other', runtimeEndpoint: B})
    expect(records.get('u-legacy')).toMatchObject({owner: 'legacy'})
    expect(records.get('u-legacy')).not.toHaveProperty('runtimeEndpoint')
  })

  it('reads only the uids asked, never a path out of the root', async () => {
    const records = await readPodRecords(root, B, ['u-this', 'u-missing', '..', '../u-this', ''])
    expect([...records.entries()]).toEqual([['u-this', expect.objectContaining({owner: 'other'})]])
  })

  it('finds nothing under a root that does not exist', async () => {
    expect((await readPodRecords(join(root, 'nowhere'), A)).size).toBe(0)
  })
})
