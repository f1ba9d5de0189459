import {existsSync, mkdtempSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {status as GrpcStatus} from '@grpc/grpc-js'
import {afterAll, afterEach, beforeAll, describe, expect, test} from 'vitest'

import {CriClient} from '../../../src/lib/cri/client.js'
import {ExitCode, InterruptedError, RuntimeUnreachableError} from '../../../src/lib/errors.js'
import {anonymous, type CredentialStore} from '../../../src/lib/images/credentials.js'
import type {PodEvent} from '../../../src/lib/kube/events.js'
import {ImageManager, type ImageManagerOptions} from '../../../src/lib/images/image-manager.js'
import type {ImageError} from '../../../src/lib/images/errors.js'
import {PullRecords, pullRecordsDir} from '../../../src/lib/images/pull-records.js'
import {fakeImage, FakeImageService} from '../../support/fake-image-service.js'

const NOT_FOUND = {grpcError: {code: GrpcStatus.NOT_FOUND, details: 'failed to pull and unpack image "localhost:5000/x:v1": not found'}}
const PULL_ERROR_TEXT = 'rpc error: code = NotFound desc = failed to pull and unpack image "localhost:5000/x:v1": not found'

let fake: FakeImageService
let client: CriClient
const events: PodEvent[] = []

function manager(options: ImageManagerOptions = {}): ImageManager {
  return new ImageManager(client, (event) => events.push(event), {credentials: anonymous, ...options})
}

const summary = () => events.map((event) => `${event.type} ${event.reason}: ${event.message}`)

async function failure(promise: Promise<unknown>): Promise<ImageError> {
  try {
    await promise
  } catch (error) {
    return error as ImageError
  }

  throw new Error('expected a failure')
}

beforeAll(async () => {
  fake = await new FakeImageService().start()
  client = new CriClient({runtimeEndpoint: fake.endpoint, callTimeoutMs: 5000})
})

afterEach(() => {
  fake.reset()
  events.length = 0
})

afterAll(async () => {
  client.close()
  await fake.stop()
})

describe('pull policy', () => {
  test('Always: no ImageStatus before the pull; the tag-defaulted name is sent as written (no docker.io)', async () => {
    fake.reset({pullImage: () => 'sha256:abc', imageStatus: () => fakeImage('sha256:abc', '4242')})
    const result = await manager().ensureImage({image: 'busybox', policy: 'Always'})
    expect(fake.methods()).toEqual(['pullImage', 'imageStatus'])
    expect(fake.pulls()[0].image?.image).toBe('busybox:latest')
    expect(fake.pulls()[0].auth).toBeUndefined()
    expect((fake.calls[1].request as {image?: {image: string}}).image?.image).toBe('sha256:abc')
    expect(result).toMatchObject({
      image: 'busybox:latest',
      imageRef: 'sha256:abc',
      pulled: true,
      sizeBytes: '4242',
      policy: 'Always',
      attempts: 1,
    })
    expect(result.pullMs).toBeGreaterThanOrEqual(0)
    expect(summary()[0]).toBe('Normal Pulling: Pulling image "busybox"')
    expect(summary()[1]).toMatch(
      new RegExp(
        String.raw`^Normal Pulled: Successfully pulled image "busybox" in \d+(\.\d+)?m?s \(\d+(\.\d+)?m?s including waiting\)\. ` +
          String.raw`Image size: 4242 bytes\.$`,
      ),
    )
    expect(result.message).toBe(events[1].message)
  })

  test('the default policy follows the tag: "busybox" → Always, "busybox:1.36" → IfNotPresent', async () => {
    fake.reset({imageStatus: () => fakeImage('sha256:present')})
    const m = manager()
    expect((await m.ensureImage({image: 'busybox:1.36'})).policy).toBe('IfNotPresent')
    expect(fake.methods()).toEqual(['imageStatus'])
    expect((await m.ensureImage({image: 'busybox'})).policy).toBe('Always')
  })

  test('IfNotPresent with the image present: one ImageStatus, no pull, "already present on machine"', async () => {
    fake.reset({imageStatus: () => fakeImage('sha256:present', '99')})
    const result = await manager().ensureImage({
      image: 'localhost:5000/podctl/busybox:1.36',
      policy: 'IfNotPresent',
      eventObject: 'container/app',
    })
    expect(fake.methods()).toEqual(['imageStatus'])
    expect(result).toMatchObject({imageRef: 'sha256:present', pulled: false, sizeBytes: '99', attempts: 0})
    expect(events).toMatchObject([
      {
        type: 'Normal',
        reason: 'Pulled',
        message: 'Container image "localhost:5000/podctl/busybox:1.36" already present on machine',
        object: 'container/app',
      },
    ])
  })

  test('IfNotPresent with the image absent: ImageStatus, then PullImage', async () => {
    fake.reset({
      imageStatus: (request) => (request.image?.image.startsWith('sha256:') ? fakeImage('sha256:new') : undefined),
      pullImage: () => 'sha256:new',
    })
    const result = await manager().ensureImage({image: 'app:v1', policy: 'IfNotPresent'})
    expect(fake.methods()).toEqual(['imageStatus', 'pullImage', 'imageStatus'])
    expect(result.pulled).toBe(true)
  })

  test('Never with the image absent: ErrImageNeverPull (exit 12), no pull', async () => {
    fake.reset({imageStatus: () => undefined})
    const error = await failure(manager().ensureImage({image: 'app:v1', policy: 'Never'}))
    expect(error.code).toBe('ErrImageNeverPull')
    expect(error.exitCode).toBe(ExitCode.IMAGE_NEVER_PULL)
    expect(error.message).toBe('Container image "app:v1" is not present with pull policy of Never')
    expect(summary()).toEqual(['Warning ErrImageNeverPull: Container image "app:v1" is not present with pull policy of Never'])
    expect(fake.methods()).toEqual(['imageStatus'])
  })

  test('Never with the image present succeeds without pulling', async () => {
    fake.reset({imageStatus: () => fakeImage('sha256:p')})
    expect(await manager().ensureImage({image: 'app:v1', policy: 'Never'})).toMatchObject({pulled: false, imageRef: 'sha256:p'})
    expect(fake.methods()).toEqual(['imageStatus'])
  })

  test('pod annotations and the runtime handler go into the ImageSpec; the sandbox config into PullImage', async () => {
    await manager().ensureImage({
      image: 'app:v1',
      policy: 'Always',
      runtimeHandler: 'runc',
      sandboxConfig: {metadata: {name: 'web', namespace: 'ns', uid: 'u1'}, annotations: {team: 'a'}},
    })
    const pull = fake.pulls()[0]
    expect(pull.image).toMatchObject({image: 'app:v1', annotations: {team: 'a'}, runtimeHandler: 'runc'})
    expect(pull.sandboxConfig?.metadata).toMatchObject({name: 'web', namespace: 'ns', uid: 'u1'})
  })
})

describe('invalid names', () => {
  test('InvalidImageName before any RPC, with the InspectFailed event; the client is never even built', async () => {
    let built = false
    const m = new ImageManager(
      async () => {
        built = true
        return client
      },
      (event) => events.push(event),
      {credentials: anonymous},
    )
    const error = await failure(m.ensureImage({image: 'Busybox'}))
    expect(error.code).toBe('InvalidImageName')
    expect(error.exitCode).toBe(ExitCode.INVALID_IMAGE_NAME)
    expect(summary()).toEqual([
      'Warning InspectFailed: Failed to apply default image tag "Busybox": couldn\'t parse image name "Busybox": ' +
        'invalid reference format: repository name (library/Busybox) must be lowercase',
    ])
    expect(built).toBe(false)
    expect(fake.calls).toEqual([])
  })
})

describe('pull failures and back-off', () => {
  test('no deadline → a single attempt: Failed event, ErrImagePull with the runtime text, no BackOff', async () => {
    fake.reset({pullImage: () => NOT_FOUND})
    const error = await failure(manager().ensureImage({image: 'localhost:5000/x:v1'}))
    expect(error.code).toBe('ErrImagePull')
    expect(error.exitCode).toBe(ExitCode.IMAGE_PULL)
    expect(error.message).toBe(PULL_ERROR_TEXT)
    expect(summary()).toEqual([
      'Normal Pulling: Pulling image "localhost:5000/x:v1"',
      `Warning Failed: Failed to pull image "localhost:5000/x:v1": ${PULL_ERROR_TEXT}`,
    ])
    expect(fake.pulls()).toHaveLength(1)
  })

  test('with a deadline: retries on the ladder with a BackOff event before each wait, then the last error', async () => {
    fake.reset({pullImage: () => NOT_FOUND})
    const deadline = Date.now() + 1000
    const error = await failure(
      manager({backOff: {initialMs: 100, maxMs: 3000}}).ensureImage({image: 'localhost:5000/x:v1', podUid: 'uid-1', deadline}),
    )
    const settledAt = Date.now()
    expect(error.code).toBe('ErrImagePull')
    expect(error.message).toBe(PULL_ERROR_TEXT)
    // Unloaded: waits of 100, 200, 400 ms fit in 1 s, the 800 ms one does not. A slow runtime allows fewer attempts,
    // so check the rule itself: every wait follows a failure and fits before the deadline, the final one would not.
    const pulls = fake.calls.filter((call) => call.method === 'pullImage')
    expect(pulls.length).toBeGreaterThanOrEqual(2)
    expect(pulls.length).toBeLessThanOrEqual(4)
    const pattern = pulls.flatMap((_, i) => (i < pulls.length - 1 ? ['Pulling', 'Failed', 'BackOff'] : ['Pulling', 'Failed']))
    expect(events.map((event) => event.reason)).toEqual(pattern)
    const failedAt = events.filter((event) => event.reason === 'Failed').map((event) => event.at.getTime())
    for (const [i, at] of failedAt.entries()) {
      const windowMs = 100 * 2 ** i
      if (i < failedAt.length - 1) {
        expect(at + windowMs).toBeLessThan(deadline)
        expect(pulls[i + 1].at - at).toBeGreaterThanOrEqual(windowMs - 5)
      } else {
        // Decided no earlier than this Failed event and no later than the failure settled: a loaded
        // machine may take more than a few ms between the two, so bound it by the settle time.
        expect(settledAt + windowMs).toBeGreaterThanOrEqual(deadline)
      }
    }

    const backOff = events.find((event) => event.reason === 'BackOff')
    expect(backOff).toMatchObject({
      type: 'Normal',
      message: `Back-off pulling image "localhost:5000/x:v1": ErrImagePull: ${PULL_ERROR_TEXT}`,
    })
  })

  test('a retry that succeeds returns the image and how many attempts it took', async () => {
    let n = 0
    fake.reset({pullImage: () => (++n < 3 ? NOT_FOUND : 'sha256:ok'), imageStatus: () => fakeImage('sha256:ok')})
    const result = await manager({backOff: {initialMs: 20, maxMs: 600}}).ensureImage({
      image: 'app:v1',
      policy: 'Always',
      deadline: Date.now() + 5000,
    })
    expect(result).toMatchObject({pulled: true, imageRef: 'sha256:ok', attempts: 3})
    expect(events.filter((event) => event.reason === 'BackOff')).toHaveLength(2)
  })

  test(`still inside an earlier failure window (same pod UID and image): ImagePullBackOff, no RPC; \
another pod is independent`, async () => {
    fake.reset({pullImage: () => NOT_FOUND})
    const m = manager({backOff: {initialMs: 60_000, maxMs: 600_000}})
    await failure(m.ensureImage({image: 'app:v1', policy: 'Always', podUid: 'pod-a'}))
    events.length = 0
    const error = await failure(m.ensureImage({image: 'app:v1', policy: 'Always', podUid: 'pod-a'}))
    expect(error.code).toBe('ImagePullBackOff')
    expect(error.exitCode).toBe(ExitCode.IMAGE_PULL)
    expect(error.message).toBe(`Back-off pulling image "app:v1": ErrImagePull: ${PULL_ERROR_TEXT}`)
    expect(summary()).toEqual([`Normal BackOff: ${error.message}`])
    expect(fake.pulls()).toHaveLength(1)
    await failure(m.ensureImage({image: 'app:v1', policy: 'Always', podUid: 'pod-b'}))
    expect(fake.pulls()).toHaveLength(2)
  })

  test('RegistryUnavailable from the runtime (gRPC Unknown) keeps the kubelet name and message', async () => {
    fake.reset({pullImage: () => ({grpcError: {code: GrpcStatus.UNKNOWN, details: 'RegistryUnavailable: dial tcp: connection refused'}})})
    const error = await failure(manager().ensureImage({image: 'example.com/app:v1'}))
    expect(error.code).toBe('RegistryUnavailable')
    expect(error.exitCode).toBe(ExitCode.IMAGE_PULL)
    expect(error.message).toBe('image pull failed for example.com/app:v1 because the registry is unavailable: dial tcp: connection refused')
  })

  test('abort during a back-off wait rejects at once with InterruptedError', async () => {
    fake.reset({pullImage: () => NOT_FOUND})
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const started = Date.now()
    const error = await failure(
      manager({backOff: {initialMs: 10_000, maxMs: 300_000}}).ensureImage({
        image: 'app:v1',
        deadline: Date.now() + 60_000,
        signal: controller.signal,
      }),
    )
    expect(error).toBeInstanceOf(InterruptedError)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  test('a runtime that cannot be reached is RuntimeUnreachable, not an image error', async () => {
    const nowhere = new CriClient({runtimeEndpoint: 'unix:///nonexistent/podctl.sock'})
    const error = await failure(new ImageManager(nowhere, undefined, {credentials: anonymous}).ensureImage({image: 'app:v1'}))
    expect(error).toBeInstanceOf(RuntimeUnreachableError)
  })
})

describe('refusedPullRetries: a registry that says no is not asked again and again', () => {
  const deadline = () => Date.now() + 60_000
  const fast = {backOff: {initialMs: 20, maxMs: 600}, refusedPullRetries: 0}
  // As CRI-O 1.34 words a missing tag (gRPC Unknown), and as containerd words a registry that wants credentials.
  const MANIFEST_UNKNOWN =
    'unable to try pulling possible OCI artifact: build image source: reading manifest nope in localhost:5000/x: manifest unknown'
  const DENIED =
    'failed to pull and unpack image "localhost:5001/x:v1": failed to resolve reference "localhost:5001/x:v1": 401 Unauthorized'

  test("0: a NotFound fails at the first answer (exit 10, the registry's words), long before the deadline, with no BackOff", async () => {
    fake.reset({pullImage: () => NOT_FOUND})
    const started = Date.now()
    const error = await failure(
      manager({...fast, backOff: {initialMs: 10_000, maxMs: 300_000}}).ensureImage({image: 'localhost:5000/x:v1', deadline: deadline()}),
    )
    expect(Date.now() - started).toBeLessThan(5000)
    expect(error).toMatchObject({code: 'ErrImagePull', exitCode: ExitCode.IMAGE_PULL, message: PULL_ERROR_TEXT})
    expect(fake.pulls()).toHaveLength(1)
    expect(events.map((event) => event.reason)).toEqual(['Pulling', 'Failed'])
  })

  test("0: CRI-O's manifest unknown and a 401 are refusals too; 401 keeps its own exit code", async () => {
    fake.reset({pullImage: () => ({grpcError: {code: GrpcStatus.UNKNOWN, details: MANIFEST_UNKNOWN}})})
    expect(await failure(manager(fast).ensureImage({image: 'localhost:5000/x:nope', deadline: deadline()}))).toMatchObject({
      code: 'ErrImagePull',
      message: MANIFEST_UNKNOWN,
    })
    expect(fake.pulls()).toHaveLength(1)
    fake.reset({pullImage: () => ({grpcError: {code: GrpcStatus.UNKNOWN, details: DENIED}})})
    const denied = await failure(manager(fast).ensureImage({image: 'localhost:5001/x:v1', deadline: deadline()}))
    expect(denied).toMatchObject({code: 'Unauthorized', exitCode: ExitCode.UNAUTHORIZED})
    expect(denied.message).toContain('401 Unauthorized')
    expect(fake.pulls()).toHaveLength(1)
  })

  test('0: a registry that cannot be reached keeps the back-off (it may come back)', async () => {
    let n = 0
    const refused = {
      grpcError: {code: GrpcStatus.UNKNOWN, details: 'failed to do request: dial tcp 127.0.0.1:5000: connect: connection refused'},
    }
    fake.reset({pullImage: () => (++n < 3 ? refused : 'sha256:ok'), imageStatus: () => fakeImage('sha256:ok')})
    const result = await manager(fast).ensureImage({image: 'app:v1', policy: 'Always', deadline: deadline()})
    expect(result).toMatchObject({pulled: true, attempts: 3})
  })

  test('N: a refusal is tried N more times on the ladder; undefined: until the deadline (the kubelet)', async () => {
    fake.reset({pullImage: () => NOT_FOUND})
    await failure(manager({...fast, refusedPullRetries: 2}).ensureImage({image: 'app:v1', policy: 'Always', deadline: deadline()}))
    expect(fake.pulls()).toHaveLength(3)
    expect(events.filter((event) => event.reason === 'BackOff')).toHaveLength(2)
    fake.reset({pullImage: () => NOT_FOUND})
    await failure(
      manager({backOff: {initialMs: 20, maxMs: 40}}).ensureImage({image: 'app:v1', policy: 'Always', deadline: Date.now() + 600}),
    )
    expect(fake.pulls().length).toBeGreaterThan(3)
  })
})

describe('credentials', () => {
  const UNAUTHORIZED = {
    grpcError: {
      code: GrpcStatus.UNKNOWN,
      details:
        'failed to pull and unpack image "localhost:5000/p:v1": failed to resolve reference: unexpected status code 401 Unauthorized',
    },
  }

  test(`explicit credentials are sent in PullImage; a refusal is Unauthorized (exit 13) naming their origin, \
never the secret`, async () => {
    fake.reset({pullImage: () => UNAUTHORIZED})
    const error = await failure(
      manager().ensureImage({image: 'localhost:5000/p:v1', auth: {username: 'alice', password: 'hunter2-secret'}, authSource: '--creds'}),
    )
    expect(fake.pulls()[0].auth).toMatchObject({username: 'alice', password: 'hunter2-secret'})
    expect(error.code).toBe('Unauthorized')
    expect(error.exitCode).toBe(ExitCode.UNAUTHORIZED)
    expect(error.message).toContain('401 Unauthorized')
    expect(error.message).toContain('(credentials from --creds were refused)')
    expect(JSON.stringify([error.toJSON(), error.message, events])).not.toContain('hunter2')
  })

  test('without any credentials the Unauthorized message says none were found for the registry', async () => {
    fake.reset({pullImage: () => UNAUTHORIZED})
    const error = await failure(manager().ensureImage({image: 'localhost:5000/p:v1'}))
    expect(error.message).toContain('no credentials found for localhost:5000')
  })

  test('keyring credentials are tried in order; the first accepted wins', async () => {
    const store: CredentialStore = {
      lookup: async () => [
        {auth: {username: 'old', password: 'x'}, source: 'a.json (localhost:5000)'},
        {auth: {username: 'new', password: 'y'}, source: 'b.json (localhost:5000)'},
      ],
    }
    fake.reset({pullImage: (request) => (request.auth?.username === 'new' ? 'sha256:ok' : UNAUTHORIZED)})
    const result = await manager({credentials: store}).ensureImage({image: 'localhost:5000/p:v1'})
    expect(fake.pulls().map((pull) => pull.auth?.username)).toEqual(['old', 'new'])
    expect(result.credentialSource).toBe('b.json (localhost:5000)')
  })

  test('when every credential fails, the errors are aggregated like utilerrors', async () => {
    const store: CredentialStore = {
      lookup: async () => [
        {auth: {username: 'a'}, source: 'one'},
        {auth: {username: 'b'}, source: 'two'},
      ],
    }
    fake.reset({pullImage: () => UNAUTHORIZED})
    const error = await failure(manager({credentials: store}).ensureImage({image: 'localhost:5000/p:v1'}))
    expect(error.code).toBe('Unauthorized')
    expect(error.message).toMatch(
      /^\[failed to pull .*401 Unauthorized, failed to pull .*401 Unauthorized\] \(credentials from one, two were refused\)$/,
    )
  })
})

describe('concurrency', () => {
  test('the same image requested twice at once is pulled once; both callers get the result', async () => {
    fake.reset({
      pullImage: () =>
        new Promise((resolve) => {
          setTimeout(() => resolve('sha256:one'), 80)
        }),
      imageStatus: () => fakeImage('sha256:one'),
    })
    const m = manager()
    const [a, b] = await Promise.all([
      m.ensureImage({image: 'app:v1', policy: 'Always', podUid: 'p1'}),
      m.ensureImage({image: 'app:v1', policy: 'Always', podUid: 'p2'}),
    ])
    expect(fake.pulls()).toHaveLength(1)
    expect([a.imageRef, b.imageRef]).toEqual(['sha256:one', 'sha256:one'])
    expect(events.filter((event) => event.reason === 'Pulled')).toHaveLength(2)
  })

  test('one of two callers sharing a pull gives up: the other still gets the image, the pull is not cancelled', async () => {
    fake.reset({
      pullImage: () =>
        new Promise((resolve) => {
          setTimeout(() => resolve('sha256:shared'), 150)
        }),
      imageStatus: () => fakeImage('sha256:shared'),
    })
    const m = manager()
    const quitter = new AbortController()
    const a = m.ensureImage({image: 'app:v1', policy: 'Always', signal: quitter.signal})
    const b = m.ensureImage({image: 'app:v1', policy: 'Always', signal: new AbortController().signal})
    setTimeout(() => quitter.abort(), 30)
    expect(await failure(a)).toBeInstanceOf(InterruptedError)
    expect((await b).imageRef).toBe('sha256:shared')
    expect(fake.pulls()).toHaveLength(1)
  })

  test('different images pull in parallel, at most `parallel` at once', async () => {
    let active = 0
    let peak = 0
    fake.reset({
      async pullImage(request) {
        active++
        peak = Math.max(peak, active)
        await new Promise((resolve) => {
          setTimeout(resolve, 60)
        })
        active--
        return `sha256:${request.image?.image.length}`
      },
    })
    const m = manager({parallel: 2})
    const started = Date.now()
    await Promise.all(['a:1', 'b:1', 'c:1', 'd:1', 'e:1'].map((image) => m.ensureImage({image, policy: 'Always'})))
    expect(fake.pulls()).toHaveLength(5)
    expect(peak).toBe(2)
    // Three waves of 60 ms: parallel, but bounded.
    expect(Date.now() - started).toBeGreaterThanOrEqual(170)
  })
})

describe('pull records (what image garbage collection may later remove)', () => {
  const root = mkdtempSync(join(tmpdir(), 'podctl-image-manager-pulls-'))
  afterAll(() => rmSync(root, {recursive: true, force: true}))

  test('a pull is recorded under the pod directory root, with the ID ImageStatus gives; an image already present is not', async () => {
    fake.reset({pullImage: () => 'localhost:5000/x@sha256:d1', imageStatus: () => fakeImage('sha256:abc', '10')})
    await manager({recordPullsIn: root}).ensureImage({image: 'localhost:5000/x:v1', policy: 'Always'})
    const records = await new PullRecords(pullRecordsDir(root, fake.endpoint)).read()
    expect(records).toEqual([
      {imageId: 'sha256:abc', imageRef: 'localhost:5000/x@sha256:d1', image: 'localhost:5000/x:v1', pulledMs: expect.any(Number)},
    ])

    fake.reset({imageStatus: () => fakeImage('sha256:present')})
    await manager({recordPullsIn: root}).ensureImage({image: 'localhost:5000/present:v1'})
    expect(await new PullRecords(pullRecordsDir(root, fake.endpoint)).read()).toHaveLength(1)
  })

  test('without a root (crictl pull, tests) nothing is recorded', async () => {
    const elsewhere = join(root, 'unused')
    fake.reset({pullImage: () => 'sha256:abc', imageStatus: () => fakeImage('sha256:abc', '10')})
    await manager().ensureImage({image: 'busybox', policy: 'Always'})
    expect(existsSync(elsewhere)).toBe(false)
    expect(readdirSync(root)).toEqual([expect.stringMatching(/^\.image-pulls-/)])
  })
})
