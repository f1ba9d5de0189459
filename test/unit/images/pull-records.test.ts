/**
 * The records of podctl's pulls: one file per image under the pod directory root, per runtime;
 * matched to listed images by ID or digest; forgotten once the image is gone, but never one written
 * after the listing that would forget it.
 */
import {mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {Image} from '../../../src/generated/runtime/v1/api.js'
import {isPullOf, PullRecords, pullRecordsDir} from '../../../src/lib/images/pull-records.js'

const root = mkdtempSync(join(tmpdir(), 'podctl-pull-records-'))
afterAll(() => rmSync(root, {recursive: true, force: true}))

const BUSYBOX = 'sha256:7b3ccabffc97de872a30dfd234fd972a66d247c8cfc69b0550f276481852627c'
const PAUSE = 'sha256:e6f1816883972d4be47bd48879a08919b96afcd344132622e4d444987919323c'

describe('pull records', () => {
  it('live in a directory per runtime, whatever spelling names the endpoint', () => {
    const dir = pullRecordsDir(root, 'unix:///run/containerd/containerd.sock')
    expect(dir).toMatch(new RegExp(`^${root}/\\.image-pulls-[0-9a-f]{12}$`))
    expect(pullRecordsDir(root, '/run/containerd/containerd.sock')).toBe(dir)
    expect(pullRecordsDir(root, 'unix:///run/crio/crio.sock')).not.toBe(dir)
  })

  it('keep one file per image, read back as written; a second pull of the same image replaces it', async () => {
    const records = new PullRecords(pullRecordsDir(root, 'unix:///run/a.sock'))
    await records.record({imageId: BUSYBOX, imageRef: BUSYBOX, image: 'localhost:5000/busybox:1.36', pulledMs: 1000})
    await records.record({imageId: BUSYBOX, imageRef: BUSYBOX, image: 'localhost:5000/busybox:1.36', pulledMs: 2000})
    await records.record({imageId: PAUSE, imageRef: `localhost:5000/pause@${PAUSE}`, image: 'localhost:5000/pause:3.9', pulledMs: 3000})
    expect(readdirSync(records.dir).sort()).toHaveLength(2)
    const read = (await records.read()).sort((a, b) => a.pulledMs - b.pulledMs)
    expect(read.map((record) => [record.imageId, record.pulledMs])).toEqual([
      [BUSYBOX, 2000],
      [PAUSE, 3000],
    ])
  })

  it('match an image by its ID, or by the digest reference a pull answered', () => {
    const record = {imageId: 'abc123', imageRef: `localhost:5000/pause@${PAUSE}`, image: 'localhost:5000/pause:3.9', pulledMs: 0}
    expect(isPullOf(record, Image.fromPartial({id: 'abc123'}))).toBe(true)
    expect(isPullOf(record, Image.fromPartial({id: 'other', repoDigests: [`localhost:5000/pause@${PAUSE}`]}))).toBe(true)
    expect(isPullOf(record, Image.fromPartial({id: 'other', repoTags: ['localhost:5000/pause:3.9']}))).toBe(false)
  })

  it('forget images the runtime no longer lists, but not a pull newer than the listing', async () => {
    const records = new PullRecords(pullRecordsDir(root, 'unix:///run/b.sock'))
    await records.record({imageId: BUSYBOX, imageRef: BUSYBOX, image: 'busybox', pulledMs: 1000})
    await records.record({imageId: PAUSE, imageRef: PAUSE, image: 'pause', pulledMs: 5000})
    await records.record({imageId: 'sha256:fresh', imageRef: 'sha256:fresh', image: 'fresh', pulledMs: 9000})
    await records.forgetGone([Image.fromPartial({id: PAUSE})], 8000)
    expect((await records.read()).map((record) => record.imageId).sort()).toEqual([PAUSE, 'sha256:fresh'])
  })

  it('read nothing, and write nothing that could fail a pull, where the directory cannot be made', async () => {
    const file = join(root, 'a-file')
    writeFileSync(file, '')
    const records = new PullRecords(join(file, 'below-a-file'))
    await expect(records.record({imageId: BUSYBOX, imageRef: BUSYBOX, image: 'busybox', pulledMs: 0})).resolves.toBeUndefined()
    expect(await records.read()).toEqual([])
  })
})
