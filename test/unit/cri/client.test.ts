import {join} from 'node:path'

import * as grpc from '@grpc/grpc-js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {CriClient} from '../../../src/lib/cri/client.js'
import {probeEndpoints} from '../../../src/lib/cri/connect.js'
import {PodctlAnnotation} from '../../../src/lib/kube/labels.js'
import {
  DeadlineExceededError,
  ExitCode,
  fromGrpcError,
  NotFoundError,
  RuntimeUnreachableError,
  UnimplementedError,
} from '../../../src/lib/errors.js'
import {podctl} from '../../support/podctl.js'
import {
  failWith,
  makeStaleSocket,
  neverAnswer,
  socketDir,
  startFakeRuntime,
  startSilentSocket,
  versionHandler,
} from '../../support/fake-runtime.js'

const dir = socketDir()
const paths = {
  ok: join(dir, 'ok.sock'),
  hung: join(dir, 'hung.sock'),
  silent: join(dir, 'silent.sock'),
  stale: join(dir, 'stale.sock'),
  unavailable: join(dir, 'unavailable.sock'),
  frozenStop: join(dir, 'frozen-stop.sock'),
  missing: join(dir, 'missing.sock'),
}
const stops: Array<() => Promise<void>> = []

beforeAll(async () => {
  stops.push(
    await startFakeRuntime(paths.ok, {
      version: versionHandler,
      listPodSandbox: (_call, cb) => cb(null, {items: []}),
      listContainers: (_call, cb) => cb(null, {containers: []}),
      containerStatus: failWith(grpc.status.NOT_FOUND, 'container "abc" not found'),
    }),
    await startFakeRuntime(paths.hung, {version: versionHandler, listPodSandbox: neverAnswer, listContainers: neverAnswer}),
    await startFakeRuntime(paths.unavailable, {
      listPodSandbox: failWith(grpc.status.UNAVAILABLE, 'runtime is shutting down'),
      listContainers: failWith(grpc.status.UNAVAILABLE, 'runtime is shutting down'),
    }),
    await startSilentSocket(paths.silent),
    await startFakeRuntime(paths.frozenStop, {
      version: versionHandler,
      listPodSandbox: (_call, cb) =>
        cb(null, {
          items: [
            // podctl's own pod (its annotations), since kill --all takes only those
            {
              id: 'sb1',
              metadata: {name: 'web', namespace: 'default', uid: 'u1', attempt: 0},
              state: 'SANDBOX_READY',
              createdAt: '1',
              annotations: {[PodctlAnnotation.restartPolicy]: 'Always', [PodctlAnnotation.podDirectory]: '/var/lib/podctl/pods/u1'},
            },
          ],
        }),
      listContainers: (_call, cb) => cb(null, {containers: []}),
      stopPodSandbox: neverAnswer,
    }),
  )
  makeStaleSocket(paths.stale)
})

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()))
})

const client = (path: string, extra: Partial<ConstructorParameters<typeof CriClient>[0]> = {}) =>
  new CriClient({runtimeEndpoint: `unix://${path}`, connectTimeoutMs: 500, callTimeoutMs: 500, ...extra})

describe('CriClient against fake runtimes', () => {
  it('clamps a deadline beyond what timers accept instead of expiring it at once', async () => {
    const c = client(paths.ok)
    // 999999999999 s of grace as a deadline: grpc-js would arm an overflowing timer that fires at once.
    expect(await c.runtime('listPodSandbox', {}, {timeoutMs: 999_999_999_999_000})).toEqual({items: []})
    c.close()
  })

  it('bounds every call by the command deadline, floors and overrides included', async () => {
    const c = client(paths.hung, {commandDeadline: Date.now() + 300})
    const started = Date.now()
    await expect(c.runtime('listPodSandbox', {}, {timeoutMs: 120_000})).rejects.toBeInstanceOf(DeadlineExceededError)
    expect(Date.now() - started).toBeLessThan(5000)
    // Past the command deadline nothing more is sent.
    await new Promise((resolve) => {
      setTimeout(resolve, 350)
    })
    await expect(c.runtime('listContainers', {})).rejects.toThrow(/--timeout ran out before RuntimeService\/ListContainers/)
    c.close()
  })

  it('lets cleanup calls outlive the command deadline', async () => {
    const c = client(paths.ok, {commandDeadline: Date.now() - 1})
    await expect(c.runtime('listPodSandbox', {})).rejects.toBeInstanceOf(DeadlineExceededError)
    expect(await c.runtime('listPodSandbox', {}, {cleanup: true})).toEqual({items: []})
    c.close()
  })

  it('answers typed responses', async () => {
    const c = client(paths.ok)
    expect(await c.runtime('version', {version: '0.1.0'})).toEqual({
      version: '0.1.0',
      runtimeName: 'fake',
      runtimeVersion: '1.0',
      runtimeApiVersion: 'v1',
    })
    c.close()
  })

  it('maps UNIMPLEMENTED to UnimplementedError, and runtimeOptional degrades to undefined', async () => {
    const c = client(paths.ok)
    await expect(c.runtime('status', {})).rejects.toBeInstanceOf(UnimplementedError)
    expect(await c.runtimeOptional('status', {})).toBeUndefined()
    c.close()
  })

  it('maps NOT_FOUND with the runtime message', async () => {
    const c = client(paths.ok)
    await expect(c.runtime('containerStatus', {containerId: 'abc'})).rejects.toThrow(NotFoundError)
    await expect(c.runtime('containerStatus', {containerId: 'abc'})).rejects.toThrow('ContainerStatus: container "abc" not found')
    c.close()
  })

  it('fails a call that never answers by its deadline, naming the endpoint', async () => {
    const c = client(paths.hung)
    const started = Date.now()
    const error = await c.runtime('listPodSandbox', {}).catch((error_) => error_)
    expect(error).toBeInstanceOf(DeadlineExceededError)
    expect(error.message).toContain(`unix://${paths.hung}`)
    expect(Date.now() - started).toBeLessThan(1500)
    c.close()
  })

  it('reports why the connection failed, not the call, when calls are made before it is up', async () => {
    // Calls go out while the channel connects; one whose deadline ends first still names the connect failure.
    const silent = client(paths.silent, {connectTimeoutMs: 600, callTimeoutMs: 200})
    const [first, second] = await Promise.all(
      [silent.runtime('listPodSandbox', {}), silent.runtime('listContainers', {})].map((p) => p.catch((error) => error)),
    )
    for (const error of [first, second]) {
      expect(error).toBeInstanceOf(RuntimeUnreachableError)
      expect(error.message).toContain('did not accept a connection within 600ms')
    }

    const stale = client(paths.stale)
    const refused = await stale.runtime('version', {version: '0.1.0'}).catch((error) => error)
    expect(refused).toBeInstanceOf(RuntimeUnreachableError)
    expect(refused.message).toContain('refused the connection')
    await expect(stale.connect()).rejects.toThrow(/refused the connection/)
    silent.close()
    stale.close()
  })

  it('gives slow calls a longer floor than the ordinary deadline', () => {
    const c = client(paths.ok)
    expect(c.deadlineFor('listPodSandbox')).toBe(500)
    expect(c.deadlineFor('runPodSandbox')).toBe(240_000)
    expect(c.deadlineFor('runPodSandbox', 1000)).toBe(1000)
  })

  it.each([
    ['missing', /no socket at/],
    ['stale', /refused the connection/],
    ['silent', /did not accept a connection within 500ms/],
  ] as const)('a %s socket is RuntimeUnreachable within the connect timeout', async (kind, message) => {
    const c = client(paths[kind])
    const started = Date.now()
    const error = await c.runtime('version', {}).catch((error_) => error_)
    expect(error).toBeInstanceOf(RuntimeUnreachableError)
    expect(error.message).toMatch(message)
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('reports UNAVAILABLE as unreachable', async () => {
    const c = client(paths.unavailable)
    const error = await c.runtime('listPodSandbox', {}).catch((error_) => error_)
    expect(error).toBeInstanceOf(RuntimeUnreachableError)
    expect(error.message).toContain('runtime is shutting down')
    c.close()
  })

  it('debug lines carry method, duration and status only', async () => {
    const lines: string[] = []
    const c = client(paths.ok, {debug: (line) => lines.push(line)})
    await c.runtime('listPodSandbox', {})
    await c.runtime('status', {}).catch(() => {})
    c.close()
    expect(lines[0]).toMatch(/^connect unix:\/\/.*ok.sock [\d.]+ms OK$/)
    expect(lines[1]).toMatch(/^RuntimeService\/ListPodSandbox [\d.]+ms OK$/)
    expect(lines[2]).toMatch(/^RuntimeService\/Status [\d.]+ms UNIMPLEMENTED$/)
  })
})

describe('probing default endpoints', () => {
  it('picks the socket that answers Version, quietly skipping missing, stale and wedged ones', async () => {
    const started = Date.now()
    const winner = await probeEndpoints(
      [paths.missing, paths.stale, paths.silent, paths.ok].map((p) => `unix://${p}`),
      {connectTimeoutMs: 800},
    )
    expect(winner.runtimeEndpoint).toBe(`unix://${paths.ok}`)
    expect(Date.now() - started).toBeLessThan(700)
    winner.close()
  })

  it('lists every candidate and why when none answers', async () => {
    const error = await probeEndpoints(
      [paths.missing, paths.silent].map((p) => `unix://${p}`),
      {connectTimeoutMs: 300},
    ).catch((error_) => error_)
    expect(error).toBeInstanceOf(RuntimeUnreachableError)
    expect(error.message).toContain(`unix://${paths.missing} (no socket)`)
    expect(error.message).toContain(`unix://${paths.silent} (connect timeout)`)
  })
})

describe('error mapping', () => {
  it.each([
    [grpc.status.UNAVAILABLE, 'RuntimeUnreachable', ExitCode.UNREACHABLE],
    [grpc.status.DEADLINE_EXCEEDED, 'DeadlineExceeded', ExitCode.DEADLINE_EXCEEDED],
    [grpc.status.NOT_FOUND, 'NotFound', ExitCode.NOT_FOUND],
    [grpc.status.UNIMPLEMENTED, 'Unimplemented', ExitCode.UNIMPLEMENTED],
    [grpc.status.ALREADY_EXISTS, 'AlreadyExists', ExitCode.ALREADY_EXISTS],
    [grpc.status.UNKNOWN, 'RuntimeError', ExitCode.RUNTIME],
    [grpc.status.INVALID_ARGUMENT, 'RuntimeError', ExitCode.RUNTIME],
  ])('gRPC code %d → %s (exit %d)', (code, name, exit) => {
    const error = fromGrpcError({code, details: 'x'}, {method: 'RuntimeService/Version', endpoint: 'unix:///s', timeoutMs: 2000})
    expect([error.code, error.exitCode]).toEqual([name, exit])
    expect(error.message.split('\n')).toHaveLength(1)
  })
})

describe('the podctl binary against broken runtimes', () => {
  const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
  // What a run costs when it fails at once (start-up, loading grpc-js): timing checks are relative
  // to it so a busy machine does not fail them, while a missing timeout still would.
  let baselineMs = 0
  beforeAll(async () => {
    baselineMs = (await podctl(['pods', '-r', paths.missing], {env})).ms
  })

  it('exits 3 with one line naming the socket when it is missing', async () => {
    const result = await podctl(['pods', '-r', paths.missing], {env})
    expect(result.code).toBe(ExitCode.UNREACHABLE)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain(`no socket at ${paths.missing}`)
  })

  it('exits 3 within the connect timeout when the socket never speaks', async () => {
    const result = await podctl(['pods', '-r', `unix://${paths.silent}`, '--connect-timeout', '1s', '--debug'], {env})
    expect(result.code).toBe(ExitCode.UNREACHABLE)
    expect(result.stderr).toContain('did not accept a connection within 1s')
    // podctl's own measurement (--debug), so a busy machine's slow process start does not count
    const waited = Number(/connect unix:\S+ ([\d.]+)ms TIMEOUT/.exec(result.stderr)?.[1])
    expect(waited).toBeGreaterThanOrEqual(990)
    expect(waited).toBeLessThan(2500)
    expect(result.ms).toBeLessThan(baselineMs * 3 + 1000)
  })

  it('exits 4 by the deadline when the runtime accepts but never answers', async () => {
    const result = await podctl(['pods', '-r', `unix://${paths.hung}`, '--timeout', '1s', '--debug'], {env})
    expect(result.code).toBe(ExitCode.DEADLINE_EXCEEDED)
    expect(result.stderr).toMatch(/ListPodSandbox|ListContainers/)
    expect(result.stderr).toContain('within 1s')
    // --timeout bounds the whole command: the call gets what is left of the 1 s after start-up.
    const waited = Number(/RuntimeService\/List\w+ ([\d.]+)ms DEADLINE_EXCEEDED/.exec(result.stderr)?.[1])
    expect(waited).toBeGreaterThanOrEqual(300)
    expect(waited).toBeLessThan(1100)
    expect(result.ms).toBeLessThan(baselineMs * 3 + 1000)
  })

  it('bounds a slow call (StopPodSandbox, a 2-minute floor) by --timeout: kill against a frozen runtime', async () => {
    const result = await podctl(['kill', '--all', '-r', `unix://${paths.frozenStop}`, '--timeout', '1s', '--force'], {env})
    expect(result.code).toBe(ExitCode.DEADLINE_EXCEEDED)
    expect(result.stderr).toContain('within 1s')
    expect(result.ms).toBeLessThan(baselineMs * 3 + 3000)
  })

  it('prints the JSON error object with --json and still exits with the class code', async () => {
    const result = await podctl(['pods', '--json', '-r', paths.missing], {env})
    expect(result.code).toBe(ExitCode.UNREACHABLE)
    expect(JSON.parse(result.stdout)).toMatchObject({error: {code: 'RuntimeUnreachable', exitCode: 3}})
  })

  it('turns a bad flag value into a one-line usage error (exit 2)', async () => {
    const result = await podctl(['pods', '--timeout', 'soon', '-r', paths.ok], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('--timeout "soon" is not a duration')
  })

  it('names the config file when it cannot be read', async () => {
    const result = await podctl(['pods', '--config', join(dir, 'nope.yaml')], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toContain(`cannot read config file ${join(dir, 'nope.yaml')}`)
  })

  it('lists an empty runtime as a header line (table) and an empty items list (json)', async () => {
    const table = await podctl(['pods', '-r', paths.ok], {env})
    expect(table.code).toBe(0)
    expect(table.stdout).toBe('POD ID   NAME   NAMESPACE   STATE   CONTAINERS   ATTEMPT   CREATED\n')
    const json = await podctl(['pods', '-r', paths.ok, '-o', 'json'], {env})
    expect(JSON.parse(json.stdout)).toEqual({items: []})
  })
})
