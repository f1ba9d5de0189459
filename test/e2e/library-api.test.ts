import {mkdtempSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {
  connect,
  DeadlineExceededError,
  ErrImagePullError,
  type LogLine,
  PodctlError,
  type Runtime,
  RuntimeError,
} from '../../src/lib/api/index.js'
import {pullBusybox} from '../support/containers.js'
import {cleanupNamespace, lab, labClient, sandboxesIn, uniqueNamespace} from '../support/lab.js'

/** The library API in-process against the lab: what docs/library.md promises beyond the consumer test's path. */
const client = labClient()
const namespace = uniqueNamespace('lib-api')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-library-api-'))
let runtime: Runtime

function pod(name: string, container: Record<string, unknown>, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, namespace},
    spec: {terminationGracePeriodSeconds: 1, ...spec, containers: [{name: 'app', image: lab().busybox, ...container}]},
  }
}

beforeAll(async () => {
  await pullBusybox(client)
  runtime = await connect({runtimeEndpoint: lab().endpoint, podLogsRoot: lab().logRoot, podDirRoot, env: {}})
})

afterAll(async () => {
  await runtime?.[Symbol.asyncDispose]()
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(podDirRoot, {recursive: true, force: true})
})

describe('the library API against the lab', () => {
  it('serves a ConfigMap beside the pod through portForward once the readiness probe passes', async () => {
    const page = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {name: 'page', namespace},
      data: {'index.html': 'hello from a ConfigMap\n'},
    }
    const web = pod(
      'web',
      {
        command: ['httpd', '-f', '-p', '8080', '-h', '/www'],
        volumeMounts: [{name: 'page', mountPath: '/www'}],
        readinessProbe: {httpGet: {path: '/', port: 8080}, periodSeconds: 1},
      },
      {volumes: [{name: 'page', configMap: {name: 'page'}}]},
    )
    await using server = await runtime.runPod([web, page], {wait: 'ready'})
    expect((await server.status()).ready).toBe(true)
    await using forward = await server.portForward(8080)
    expect(forward).toMatchObject({address: '127.0.0.1', remotePort: 8080})
    const response = await fetch(`http://127.0.0.1:${forward.localPort}/index.html`)
    expect({status: response.status, body: await response.text()}).toEqual({status: 200, body: 'hello from a ConfigMap\n'})
  })

  it('follows a log as an async iterator that ends when the container exits', async () => {
    const script = 'for i in 1 2 3; do echo line $i; sleep 0.5; done; echo done >&2'
    await using counter = await runtime.runPod(pod('counter', {command: ['sh', '-c', script]}, {restartPolicy: 'Never'}), {wait: 'none'})
    const lines: Array<Pick<LogLine, 'stream' | 'text'>> = []
    for await (const {stream, text} of counter.container().followLogs()) lines.push({stream, text})
    expect(lines).toEqual([
      {stream: 'stdout', text: 'line 1'},
      {stream: 'stdout', text: 'line 2'},
      {stream: 'stdout', text: 'line 3'},
      {stream: 'stderr', text: 'done'},
    ])
    expect((await counter.container().status()).exitCode).toBe(0)
  })

  it('exec of a command the container lacks resolves with 127 as a shell would, and 126 for one it cannot run', async () => {
    await using box = await runtime.runPod(pod('box', {command: ['sleep', '3600']}))
    const missing = await box.container().exec(['no-such-binary', '--version'])
    expect(missing).toMatchObject({exitCode: 127, stdout: ''})
    expect(missing.stderr).toContain('"no-such-binary"')
    expect((await box.container().exec(['/etc/hosts'])).exitCode).toBe(126)
    const slow = await box
      .container()
      .exec(['sleep', '9'], {timeoutMs: 1000})
      .catch((error: unknown) => error)
    expect(slow).toBeInstanceOf(DeadlineExceededError)
    expect((slow as Error).message).toMatch(/\(timeoutMs\) and was stopped; raise timeoutMs to give it longer$/)
  })

  it('exec with user, env and workdir enters from the host as podctl exec --user/-e/-w, its output collected', async () => {
    await using box = await runtime.runPod(pod('entered', {command: ['sleep', '3600'], env: [{name: 'KEEP', value: 'kept'}]}))
    const script = 'id -u; id -g; echo "$FOO $KEEP"; pwd; echo oops >&2; exit 3'
    const result = await box.container().exec(['sh', '-c', script], {user: '1234:5678', env: {FOO: 'bar'}, workdir: '/etc'})
    expect(result).toEqual({exitCode: 3, stdout: '1234\n5678\nbar kept\n/etc\n', stderr: 'oops\n'})
    const nowhere = await box
      .container()
      .exec(['true'], {workdir: '/no/such/dir'})
      .catch((error: unknown) => error)
    expect(nowhere).toBeInstanceOf(PodctlError)
    expect((nowhere as PodctlError).exitCode).toBe(2)
    const slow = await box
      .container()
      .exec(['sleep', '9'], {user: '0', timeoutMs: 1000})
      .catch((error: unknown) => error)
    expect(slow).toBeInstanceOf(DeadlineExceededError)
    expect((slow as Error).message).toContain('(timeoutMs) and was stopped')
  })

  it('waits for a log line, and says when none comes in time or the container exits without it', async () => {
    const script = 'sleep 1; echo warming up; echo "listening on :8080"; sleep 2; echo bye >&2'
    await using server = await runtime.runPod(pod('server', {command: ['sh', '-c', script]}, {restartPolicy: 'Never'}), {wait: 'none'})
    const line = await server.container().waitForLog(/listening on :\d+/, {timeoutMs: 30_000})
    expect({stream: line.stream, text: line.text}).toEqual({stream: 'stdout', text: 'listening on :8080'})
    const late = await server
      .container()
      .waitForLog('never printed', {timeoutMs: 500})
      .catch((error: unknown) => error)
    expect(late).toBeInstanceOf(DeadlineExceededError)
    const never = await server
      .container()
      .waitForLog('never printed', {timeoutMs: 30_000})
      .catch((error: unknown) => error)
    expect(never).toBeInstanceOf(RuntimeError)
    expect((never as Error).message).toMatch(/exited without writing a log line matching never printed/)
  })

  it("with wait: 'completed', gives the container's exit code", async () => {
    await using job = await runtime.runPod(pod('job', {command: ['sh', '-c', 'exit 4']}, {restartPolicy: 'Never'}), {wait: 'completed'})
    expect(job.exitCode).toBe(4)
    expect((await job.status()).phase).toBe('Failed')
  })

  it("rejects with the CLI's error class and exit code, and rolls the pod back", async () => {
    const missing = pod('missing', {image: `${lab().registry}/podctl/no-such-image:1`, imagePullPolicy: 'Never', command: ['true']})
    const failure = await runtime.runPod(missing).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(PodctlError)
    expect((failure as PodctlError).toJSON()).toMatchObject({code: 'ErrImageNeverPull', exitCode: 12})
    expect((failure as PodctlError).message).toMatch(/^pod missing_lib-api-\w+: ErrImageNeverPull: /)
    expect(await sandboxesIn(client, namespace)).toEqual([])
    expect(readdirSync(lab().logRoot).filter((name) => name.startsWith(`${namespace}_missing_`))).toEqual([])
  })

  it('kills a pod whose manifest sets no grace period within seconds (the library gives it 2 s)', async () => {
    const stubborn = {
      ...pod('stubborn', {command: ['sleep', '3600']}),
      spec: {containers: [{name: 'app', image: lab().busybox, command: ['sleep', '3600']}]},
    }
    const started = await runtime.runPod(stubborn)
    const killed = await started.kill()
    // sleep as PID 1 ignores SIGTERM: the kill lasts the grace period, 30 s by the kubelet's default.
    expect(killed?.durationMs).toBeLessThan(10_000)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })

  it('rejects at the first answer of the registry for an image that does not exist, in seconds', async () => {
    const started = Date.now()
    const failure = await runtime
      .runPod(pod('absent', {image: `${lab().registry}/podctl/no-such-image:1`}))
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ErrImagePullError)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })

  it('says its own options where the CLI says flags: timeoutMs, replace: true, no podctl command', async () => {
    const unready = pod('unready', {command: ['sleep', '3600'], readinessProbe: {exec: {command: ['false']}, periodSeconds: 1}})
    const late = await runtime.runPod(unready, {wait: 'ready', timeoutMs: 3000}).catch((error: unknown) => error)
    expect(late).toBeInstanceOf(DeadlineExceededError)
    expect((late as Error).message).toContain('timeoutMs')
    expect((late as Error).message).not.toMatch(/--|podctl /)

    await using first = await runtime.runPod(pod('twice', {command: ['sleep', '3600']}))
    const again = await runtime.runPod(pod('twice', {command: ['sleep', '3600']})).catch((error: unknown) => error)
    expect((again as PodctlError).code).toBe('AlreadyExists')
    expect((again as Error).message).toMatch(/; pass replace: true to kill it and start a new one$/)
    expect(first.name).toBe('twice')
  }, 60_000)

  it('kills the pods a Runtime ran when it is disposed of', async () => {
    const own = await connect({runtimeEndpoint: lab().endpoint, podLogsRoot: lab().logRoot, podDirRoot, env: {}})
    await own.runPod(pod('leftover', {command: ['sleep', '3600']}))
    expect(await sandboxesIn(client, namespace)).toHaveLength(1)
    await own[Symbol.asyncDispose]()
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})
