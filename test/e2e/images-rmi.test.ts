import {randomBytes} from 'node:crypto'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {CriClient} from '../../src/lib/cri/client.js'
import {createContainer, ensureImage, pushUniqueImage, tableRows} from '../support/inspect-fixtures.js'
import {cleanupNamespace, createSandbox, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

/**
 * Every image these tests remove is pushed here with its own config (so its own image ID) under
 * a random repository: removing it can never take busybox's or pause's tags with it.
 */
describe('podctl images and rmi', () => {
  let client: CriClient
  const ns = uniqueNamespace('e2e-rmi')
  const pods = mkdtempSync(join(tmpdir(), 'podctl-rmi-pods-'))
  const env = labEnv({PODCTL_POD_DIR_ROOT: pods})
  const run = randomBytes(3).toString('hex')
  const repo = (name: string) => `${lab().registry}/podctl/rmi-${name}-${run}`
  /** name → {refs, id} */
  const images: Record<string, {refs: string[]; id: string}> = {}
  let busyboxId = ''
  let podId = ''
  let userId = ''

  async function dedicated(name: string, tags: string[]): Promise<void> {
    const refs = await pushUniqueImage(`podctl/rmi-${name}-${run}`, tags)
    let id = ''
    for (const ref of refs) id = await ensureImage(client, ref)
    images[name] = {refs, id}
  }

  async function present(id: string): Promise<boolean> {
    const {images: list} = await client.image('listImages', {})
    return list.some((image) => image.id === id)
  }

  beforeAll(async () => {
    client = labClient()
    busyboxId = await ensureImage(client, lab().busybox)
    await Promise.all([
      dedicated('used', ['v1', 'v2']),
      dedicated('free', ['v1', 'v2']),
      dedicated('solo', ['v1']),
      dedicated('byid', ['v1']),
    ])
    podId = await createSandbox(client, {name: 'user', namespace: ns})
    // "used" is used by a container that never started: any state counts.
    userId = await createContainer(client, {podId, name: 'user', image: images.used.refs[0], start: false})
    // and busybox by a running one, so prune must leave it
    await createContainer(client, {podId, name: 'sleeper'})
  })

  afterAll(async () => {
    await cleanupNamespace(client, ns)
    expect(await sandboxesIn(client, ns)).toEqual([])
    await Promise.all(Object.values(images).map(({id}) => client.image('removeImage', {image: {image: id}}).catch(() => {})))
    for (const {id} of Object.values(images)) expect(await present(id)).toBe(false)
    expect(await present(busyboxId)).toBe(true)
    client.close()
    rmSync(pods, {recursive: true, force: true})
  })

  it('lists one row per tag with the same short image ID', async () => {
    const {code, stdout, stderr} = await podctl(['images', repo('free')], {env})
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const [header, ...rows] = tableRows(stdout)
    expect(header).toEqual(['IMAGE', 'TAG', 'IMAGE ID', 'SIZE'])
    const short = images.free.id.replace('sha256:', '').slice(0, 13)
    expect(rows).toEqual([
      [repo('free'), 'v1', short, expect.stringMatching(/^\d+(\.\d+)?(B|kB|MB)$/)],
      [repo('free'), 'v2', short, rows[0][3]],
    ])
  })

  it('adds DIGEST and PINNED columns on request', async () => {
    const {stdout} = await podctl(['images', `${repo('free')}:v1`, '--digests', '--pinned'], {env})
    const [header, row] = tableRows(stdout)
    expect(header).toEqual(['IMAGE', 'TAG', 'DIGEST', 'IMAGE ID', 'SIZE', 'PINNED'])
    expect(row[2]).toMatch(/^[0-9a-f]{13}$/)
    expect(row[5]).toBe('false')
  })

  it('prints each full image ID once with -q', async () => {
    const {stdout} = await podctl(['images', '-q', '--filter', `reference=*rmi-*-${run}*`], {env})
    expect(stdout.trim().split('\n').sort()).toEqual(
      Object.values(images)
        .map(({id}) => id)
        .sort(),
    )
  })

  it('filters by reference glob (exact without *) and by dangling', async () => {
    const exact = tableRows((await podctl(['images', '--filter', `reference=${repo('free')}:v2`], {env})).stdout)
    expect(exact.slice(1).map((row) => row[1])).toEqual(['v2'])
    const glob = tableRows(
      (await podctl(['images', '-f', `reference=*rmi-solo-${run}*`, '-f', `reference=*rmi-byid-${run}:*`], {env})).stdout,
    )
    expect(glob.slice(1).map((row) => row[0])).toEqual([repo('byid'), repo('solo')])
    const dangling = await podctl(['images', '-q', '--filter', 'dangling=true', '--filter', `reference=*-${run}*`], {env})
    expect(dangling.stdout).toBe('')
    const bad = await podctl(['images', '--filter', 'since=x'], {env})
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--filter "since=x" is not supported/)
  })

  it('prints CRI Image objects as JSON', async () => {
    const parsed = JSON.parse((await podctl(['images', repo('free'), '-o', 'json'], {env})).stdout)
    expect(parsed).toEqual({
      images: [
        expect.objectContaining({id: images.free.id, repoTags: images.free.refs, size: expect.stringMatching(/^\d+$/), pinned: false}),
      ],
    })
  })

  it('refuses an image a container uses, naming it, and keeps the image', async () => {
    const {code, stdout, stderr} = await podctl(['rmi', images.used.refs[0]], {env})
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain(`image ${images.used.refs[0]} is used by container: user (${userId.slice(0, 13)})`)
    expect(await present(images.used.id)).toBe(true)
  })

  it('shows prune candidates with --dry-run without removing anything: podctl pulls only, never busybox or pause', async () => {
    // podctl pulls "free" again (recorded under this file's pod directory root); "solo", unused too, only crictl pulled.
    const pull = await podctl(['pull', '--policy', 'Always', images.free.refs[0], '-q'], {env})
    expect(pull.code, pull.stderr).toBe(0)
    const {code, stdout, stderr} = await podctl(['rmi', '--prune', '--dry-run'], {env})
    expect(code).toBe(0)
    const lines = stdout.trim().split('\n')
    expect(lines).toEqual(images.free.refs.map((ref) => `Would delete: ${ref}`))
    expect(stderr).toMatch(/^left alone \d+ images? podctl did not pull; name an image to remove it\n$/)
    expect(lines).not.toContain(`Would delete: ${images.solo.refs[0]}`)
    expect(lines).not.toContain(`Would delete: ${images.used.refs[0]}`)
    // Old untagged lab images may be candidates; the tags tests rely on never are.
    for (const ref of [lab().busybox, `${lab().registry}/podctl/busybox:latest`, lab().pause]) {
      expect(lines).not.toContain(`Would delete: ${ref}`)
    }

    expect(await present(images.free.id)).toBe(true)
  })

  it("refuses the runtime's sandbox image, pinned or not (containerd 1.6 does not pin it; checked with --dry-run)", async () => {
    const {code, stdout, stderr} = await podctl(['rmi', '--dry-run', lab().pause], {env})
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain(`image ${lab().pause} is pinned by the runtime`)
  })

  it('removes an in-use image with --force, saying every tag that goes', async () => {
    const {code, stdout, stderr} = await podctl(['rmi', '--force', images.used.refs[1]], {env})
    expect(code).toBe(0)
    expect(stdout).toBe(images.used.refs.map((ref) => `Deleted: ${ref}\n`).join(''))
    expect(stderr).toContain(`removing it also removes ${images.used.refs[0]}`)
    expect(await present(images.used.id)).toBe(false)
  })

  it('removes what it can and reports every failure: exit 5 for an unknown image', async () => {
    const missing = `${repo('missing')}:v1`
    const {code, stdout, stderr} = await podctl(['rmi', missing, images.free.refs[0], images.solo.refs[0]], {env})
    expect(code).toBe(5)
    expect(stdout.trim().split('\n').sort()).toEqual([...images.free.refs, ...images.solo.refs].map((ref) => `Deleted: ${ref}`).sort())
    expect(stderr).toContain(`image "${missing}" not found`)
    expect(await present(images.free.id)).toBe(false)
    expect(await present(images.solo.id)).toBe(false)
  })

  it('removes by image ID prefix, with a JSON summary', async () => {
    const prefix = images.byid.id.replace('sha256:', '').slice(0, 16)
    const {code, stdout} = await podctl(['rmi', prefix, '--json'], {env})
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({
      dryRun: false,
      deleted: [{id: images.byid.id, repoTags: images.byid.refs, repoDigests: expect.any(Array)}],
      failures: [],
    })
    expect(await present(images.byid.id)).toBe(false)
  })

  it('exits 5 for one unknown image and 2 without arguments', async () => {
    const missing = await podctl(['rmi', `${repo('missing')}:v9`], {env})
    expect(missing.code).toBe(5)
    const usage = await podctl(['rmi'], {env})
    expect(usage.code).toBe(2)
    expect(usage.stderr).toMatch(/rmi needs IMAGE arguments, --all or --prune/)
  })
})
