import {randomBytes} from 'node:crypto'
import {mkdir, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, test} from 'vitest'

import type {CriClient} from '../../src/lib/cri/client.js'
import type {PodctlError} from '../../src/lib/errors.js'
import {imageIdPattern, lab, labClient, labEnv} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

interface PulledJson {
  requested: string
  image: string
  imageRef?: string
  pulled?: boolean
  pullMs?: number
  sizeBytes?: string
  policy?: string
  attempts?: number
  credentialSource?: string
  message?: string
  events: Array<{type: string; reason: string; message: string; at: string}>
  error?: {code: string; exitCode: number; message: string; reason: string; image: string}
}

const {busybox, registry} = lab()
/** A name nobody ever pushes: absent locally and in the lab registry. */
const absent = () => `${registry}/podctl/absent-${randomBytes(4).toString('hex')}:v1`

/**
 * The lab runtime's own answer to PullImage for an image the registry lacks, asked straight through
 * the CRI, in the words the kubelet shows: grpc-go's status string ("rpc error: code = NotFound desc
 * = …", containerd), or the bare message for code Unknown (CRI-O). Each runtime words it its own way.
 */
async function notFoundText(image: string): Promise<string> {
  const failure = await client.image('pullImage', {image: {image}}).then(
    () => undefined,
    (error: PodctlError) => error.grpc,
  )
  if (failure?.code === undefined) throw new Error(`the runtime pulled ${image}, which the registry does not have`)
  const names: Record<number, string> = {2: 'Unknown', 5: 'NotFound', 13: 'Internal'}
  return failure.code === 2 ? failure.details : `rpc error: code = ${names[failure.code] ?? failure.code} desc = ${failure.details}`
}

let client: CriClient
let home: string

/** podctl against the lab, with an empty HOME so no stray ~/.docker/config.json takes part. */
function run(args: string[], env: Record<string, string | undefined> = {}) {
  return podctl(args, {env: labEnv({HOME: home, DOCKER_CONFIG: undefined, PODCTL_BACKOFF_BASE_MS: undefined, ...env})})
}

function images(stdout: string): PulledJson[] {
  return (JSON.parse(stdout) as {images: PulledJson[]}).images
}

const rpcLines = (stderr: string) => stderr.split('\n').filter((line) => /^debug: (ImageService|RuntimeService)\//.test(line))

beforeAll(async () => {
  client = labClient()
  home = await mkdtemp(join(tmpdir(), 'podctl-pull-home-'))
})

afterAll(async () => {
  client.close()
  await rm(home, {recursive: true, force: true})
})

describe('podctl pull', () => {
  test('Always (the default): PullImage without ImageStatus first, the Pulling event, the result line once', async () => {
    const result = await run(['pull', busybox, '--debug'])
    expect(result.stderr).not.toMatch(/Error/)
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      new RegExp(`^Successfully pulled image "${busybox}" in \\d+(\\.\\d+)?m?s\\. Image size: [1-9]\\d* bytes\\. ID: [0-9a-f]{13}\\n$`),
    )
    // The result line says it; the kubelet's Pulled event would say it again on stderr.
    const events = result.stderr.split('\n').filter((line) => !line.startsWith('debug:') && line !== '')
    expect(events).toEqual([`Normal  Pulling           Pulling image "${busybox}"`])
    expect(`${result.stdout}${result.stderr}`.match(/Successfully pulled/g)).toHaveLength(1)
    // Always never asks ImageStatus first; the one after the pull reads the size.
    expect(rpcLines(result.stderr).map((line) => line.split(' ')[1])).toEqual(['ImageService/PullImage', 'ImageService/ImageStatus'])
  })

  test('-o json: image ref, size and events; the runtime has exactly that image', async () => {
    const result = await run(['pull', busybox, '-o', 'json'])
    expect(result.code).toBe(0)
    const [pulled] = images(result.stdout)
    expect(pulled).toMatchObject({requested: busybox, image: busybox, pulled: true, policy: 'Always', attempts: 1})
    expect(pulled.imageRef).toMatch(new RegExp(`^${imageIdPattern()}$`))
    expect(pulled.sizeBytes).toMatch(/^[1-9]\d*$/)
    expect(pulled.pullMs).toBeGreaterThanOrEqual(0)
    expect(pulled.events.map((event) => event.reason)).toEqual(['Pulling', 'Pulled'])
    expect(pulled.events[0].at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(pulled.error).toBeUndefined()
    const status = await client.image('imageStatus', {image: {image: busybox}})
    expect(status.image?.id).toBe(pulled.imageRef)
    expect(status.image?.size).toBe(pulled.sizeBytes)
  })

  test('IfNotPresent with the image present: ImageStatus only, no PullImage', async () => {
    expect((await run(['pull', busybox])).code).toBe(0)
    const result = await run(['pull', '--policy', 'IfNotPresent', busybox, '--debug'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`^Image "${busybox}" is already present \\(IfNotPresent\\)\\. ID: [0-9a-f]{13}\\n$`))
    // The result line says it is present; the kubelet's Pulled event is not said again on stderr.
    expect(result.stderr).not.toContain('already present')
    expect(rpcLines(result.stderr).map((line) => line.split(' ')[1])).toEqual(['ImageService/ImageStatus'])
    expect(result.stderr).not.toContain('PullImage')
  })

  test('Never with the image absent: exit 12 with the kubelet message, nothing pulled', async () => {
    const image = absent()
    const result = await run(['pull', '--policy', 'Never', image, '--debug'])
    expect(result.code).toBe(12)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`Warning ErrImageNeverPull Container image "${image}" is not present with pull policy of Never`)
    expect(result.stderr).toContain(`Error: ErrImageNeverPull: Container image "${image}" is not present with pull policy of Never`)
    expect(rpcLines(result.stderr).map((line) => line.split(' ')[1])).toEqual(['ImageService/ImageStatus'])
    expect((await client.image('imageStatus', {image: {image}})).image).toBeUndefined()
  })

  test('an image missing from the registry: ErrImagePull (exit 10) with the runtime text, one attempt by default', async () => {
    const image = absent()
    const text = await notFoundText(image)
    const result = await run(['pull', image, '-o', 'json'])
    expect(result.code).toBe(10)
    const [failed] = images(result.stdout)
    expect(failed.error).toEqual({code: 'ErrImagePull', exitCode: 10, reason: 'ErrImagePull', image, message: text})
    expect(failed.events.map((event) => `${event.type} ${event.reason}: ${event.message}`)).toEqual([
      `Normal Pulling: Pulling image "${image}"`,
      `Warning Failed: Failed to pull image "${image}": ${text}`,
    ])
    expect(result.stderr).toContain(`Error: ErrImagePull: ${text}`)
  })

  test('--retry-for: retries on the back-off ladder with BackOff events, then the last error (ladder shrunk for the test)', async () => {
    const image = absent()
    const text = await notFoundText(image)
    const result = await run(['pull', image, '--retry-for', '4s', '-o', 'json'], {PODCTL_BACKOFF_BASE_MS: '300'})
    expect(result.code).toBe(10)
    const [failed] = images(result.stdout)
    expect(failed.error?.code).toBe('ErrImagePull')
    // Unloaded, the 300 ms, 600 ms and 1.2 s waits fit in 4 s and the 2.4 s one does not; a slow runtime leaves room for fewer.
    const reasons = failed.events.map((event) => event.reason)
    const attempts = reasons.filter((reason) => reason === 'Pulling').length
    expect(attempts).toBeGreaterThanOrEqual(2)
    expect(attempts).toBeLessThanOrEqual(4)
    expect(reasons).toEqual([...Array.from({length: attempts - 1}, () => ['Pulling', 'Failed', 'BackOff']).flat(), 'Pulling', 'Failed'])
    const backOffs = failed.events.filter((event) => event.reason === 'BackOff')
    for (const event of backOffs) {
      expect(event).toMatchObject({type: 'Normal', message: `Back-off pulling image "${image}": ErrImagePull: ${text}`})
    }

    const pulls = failed.events.filter((event) => event.reason === 'Pulling').map((event) => Date.parse(event.at))
    for (let i = 1; i < attempts; i++) expect(pulls[i] - pulls[i - 1]).toBeGreaterThanOrEqual(300 * 2 ** (i - 1))
  })

  test('--retry-for with the real kubelet ladder: one 10 s back-off fits in 15 s, the 20 s one does not', async () => {
    const image = absent()
    const result = await run(['pull', image, '--retry-for', '15s'])
    expect(result.code).toBe(10)
    const reasons = result.stderr
      .split('\n')
      .filter((line) => /^(Normal|Warning) /.test(line))
      .map((line) => line.split(/\s+/)[1])
    expect(reasons).toEqual(['Pulling', 'Failed', 'BackOff', 'Pulling', 'Failed'])
    expect(result.ms).toBeGreaterThanOrEqual(10_000)
  }, 60_000)

  test('SIGINT while backing off stops at once with exit 130', async () => {
    const image = absent()
    let sentAt = 0
    const result = await podctl(['pull', image, '--retry-for', '5m'], {
      env: labEnv({HOME: home, PODCTL_BACKOFF_BASE_MS: undefined}),
      onSpawn(child) {
        // The first attempt fails within a second or two; the 10 s back-off wait follows.
        let sent = false
        child.stderr?.on('data', (chunk: Buffer) => {
          if (!sent && chunk.toString().includes('BackOff')) {
            sent = true
            sentAt = Date.now()
            child.kill('SIGINT')
          }
        })
      },
    })
    expect(result.stderr).toContain('Normal  BackOff')
    expect(result.code).toBe(130)
    expect(result.stderr).toContain('Error: pull interrupted')
    // Well inside the 10 s back-off window: the wait was cut short, not waited out.
    expect(Date.now() - sentAt).toBeLessThan(5000)
  })

  test('an invalid name: exit 11 with the kubelet message and no runtime call at all', async () => {
    const result = await run(['pull', 'localhost:5000/Podctl/BusyBox:1.36', '--debug'])
    expect(result.code).toBe(11)
    const message =
      'Failed to apply default image tag "localhost:5000/Podctl/BusyBox:1.36": ' +
      'couldn\'t parse image name "localhost:5000/Podctl/BusyBox:1.36": ' +
      'invalid reference format: repository name (Podctl/BusyBox) must be lowercase'
    expect(result.stderr).toContain(`Warning InspectFailed     ${message}`)
    expect(result.stderr).toContain(`Error: InvalidImageName: ${message}`)
    expect(result.stderr).not.toMatch(/debug: (connect|ImageService|RuntimeService|runtime endpoint)/)
  })

  test(`several images: all attempted, an image named twice pulled and reported once, \
exit code of the first failure in argument order`, async () => {
    const missing = absent()
    const first = await run(['pull', busybox, missing, 'Bad:Name', busybox, '-o', 'json', '--debug'])
    expect(first.code).toBe(10)
    const pulled = images(first.stdout)
    expect(pulled.map((entry) => [entry.requested, entry.pulled ?? false, entry.error?.code])).toEqual([
      [busybox, true, undefined],
      [missing, false, 'ErrImagePull'],
      ['Bad:Name', false, 'InvalidImageName'],
    ])
    expect(rpcLines(first.stderr).filter((line) => line.includes('PullImage'))).toHaveLength(2)
    expect(pulled[0].events.map((event) => event.reason)).toEqual(['Pulling', 'Pulled'])

    const second = await run(['pull', 'Bad:Name', missing])
    expect(second.code).toBe(11)
    expect(second.stderr).toContain('Error: InvalidImageName:')
    expect(second.stderr).toContain('Error: ErrImagePull:')
  })

  test('by digest: the reference is sent unchanged, and IfNotPresent finds it without pulling', async () => {
    expect((await run(['pull', busybox])).code).toBe(0)
    const status = await client.image('imageStatus', {image: {image: busybox}})
    const digestRef = status.image?.repoDigests.find((digest) => digest.startsWith(`${registry}/podctl/busybox@`))
    expect(digestRef).toBeDefined()
    const result = await run(['pull', '--policy', 'IfNotPresent', digestRef!, '-o', 'json', '--debug'])
    expect(result.code).toBe(0)
    expect(images(result.stdout)[0]).toMatchObject({image: digestRef, pulled: false, imageRef: status.image?.id})
    expect(result.stderr).not.toContain('PullImage')
  })
})

describe('credentials are used but never shown', () => {
  const password = `pw-${randomBytes(6).toString('hex')}`
  const auth = Buffer.from(`alice:${password}`).toString('base64')
  const secrets = [password, auth]
  let configDir: string

  beforeAll(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'podctl-docker-config-'))
    await mkdir(configDir, {recursive: true})
    await writeFile(join(configDir, 'config.json'), JSON.stringify({auths: {[`http://${registry}`]: {auth}}}))
  })

  afterAll(async () => {
    await rm(configDir, {recursive: true, force: true})
  })

  const assertHidden = (result: {stdout: string; stderr: string}) => {
    for (const secret of secrets) {
      expect(result.stdout).not.toContain(secret)
      expect(result.stderr).not.toContain(secret)
    }
  }

  test('--creds USER:PASSWORD (the plain-http lab registry ignores them): pulled; not in output, --debug or JSON', async () => {
    const human = await run(['pull', busybox, '--creds', `alice:${password}`, '--debug'])
    expect(human.code).toBe(0)
    assertHidden(human)
    const json = await run(['pull', busybox, '--creds', `alice:${password}`, '-o', 'json', '--debug'])
    expect(json.code).toBe(0)
    expect(images(json.stdout)[0].credentialSource).toBe('--creds')
    assertHidden(json)
  })

  test('--auth BASE64: pulled; not shown; a malformed --auth is a usage error that does not echo it', async () => {
    const ok = await run(['pull', busybox, '--auth', auth, '-o', 'yaml', '--debug'])
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('credentialSource: --auth')
    assertHidden(ok)

    const bad = await run(['pull', busybox, '--auth', `${password}!`])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--auth is not base64 of USER:PASSWORD')
    assertHidden(bad)

    const both = await run(['pull', busybox, '--auth', auth, '--creds', `alice:${password}`])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('pass only one')
    assertHidden(both)
  })

  test('--creds without a password and no terminal: usage error, nothing pulled', async () => {
    const result = await run(['pull', busybox, '--creds', 'alice', '--debug'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--creds has no password and stdin is not a terminal')
    expect(rpcLines(result.stderr)).toEqual([])
  })

  test('$DOCKER_CONFIG/config.json is matched by registry host[:port] and named (never shown) as the source', async () => {
    const result = await run(['pull', busybox, '-o', 'json', '--debug'], {DOCKER_CONFIG: configDir})
    expect(result.code).toBe(0)
    expect(images(result.stdout)[0].credentialSource).toBe(`${join(configDir, 'config.json')} (http://${registry})`)
    assertHidden(result)
  })

  test('a docker config for other hosts or ports does not match: anonymous pull', async () => {
    const otherDir = await mkdtemp(join(tmpdir(), 'podctl-docker-config-other-'))
    try {
      const port = Number(registry.split(':')[1] ?? 5000) + 1
      await writeFile(
        join(otherDir, 'config.json'),
        JSON.stringify({auths: {[`localhost:${port}`]: {auth}, 'registry.example.com': {auth}}}),
      )
      const result = await run(['pull', busybox, '-o', 'json'], {DOCKER_CONFIG: otherDir})
      expect(result.code).toBe(0)
      expect(images(result.stdout)[0].credentialSource ?? undefined).toBeUndefined()
      assertHidden(result)
    } finally {
      await rm(otherDir, {recursive: true, force: true})
    }
  })
})
