import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync} from 'node:fs'
import {createServer as createHttpServer, type IncomingHttpHeaders, type Server} from 'node:http'
import {createServer as createHttpsServer} from 'node:https'
import {type AddressInfo, createServer as createTcpServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import * as grpc from '@grpc/grpc-js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {CriClient} from '../../../src/lib/cri/client.js'
import {DeadlineExceededError, RuntimeError} from '../../../src/lib/errors.js'
import {execProbe} from '../../../src/lib/prober/exec.js'
import {Limiter} from '../../../src/lib/util/concurrency.js'
import {
  decodeHealthCheckRequest,
  decodeHealthCheckResponse,
  encodeHealthCheckRequest,
  encodeHealthCheckResponse,
  grpcProbe,
  HEALTH_CHECK_PATH,
} from '../../../src/lib/prober/grpc.js'
import {runNodeHandler} from '../../../src/lib/prober/handlers.js'
import {httpProbe, probeUrl} from '../../../src/lib/prober/http.js'
import {tcpProbe} from '../../../src/lib/prober/tcp.js'

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
  })
}

/** A port nothing listens on: bound, read, closed. */
async function closedPort(): Promise<number> {
  const server = createTcpServer()
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve)
  })
  const {port} = server.address() as AddressInfo
  await new Promise((resolve) => {
    server.close(resolve)
  })
  return port
}

const seen: Array<{url: string; headers: IncomingHttpHeaders}> = []
let server: Server
let port: number

beforeAll(async () => {
  server = createHttpServer((request, response) => {
    seen.push({url: request.url ?? '', headers: request.headers})
    const url = new URL(request.url ?? '/', 'http://x')
    switch (url.pathname) {
      case '/ok':
        response.end('all good')
        break
      case '/big':
        response.end('x'.repeat(64 * 1024))
        break
      case '/missing':
        response.writeHead(404).end('secret body')
        break
      case '/hop':
        response.writeHead(302, {location: '/ok'}).end()
        break
      case '/away':
        response.writeHead(301, {location: 'http://localhost:1/elsewhere'}).end('moved')
        break
      case '/loop':
        response.writeHead(302, {location: '/loop'}).end()
        break
      case '/slow':
        setTimeout(() => response.end('late'), 3000)
        break
      default:
        response.writeHead(500).end()
    }
  })
  port = await listen(server)
})

afterAll(() => {
  server.closeAllConnections()
  server.close()
})

const request = (path: string, extra: Partial<Parameters<typeof httpProbe>[0]> = {}) =>
  httpProbe({scheme: 'http', host: '127.0.0.1', port, path, headers: [], userAgent: 'kube-probe/1.36', timeoutMs: 1000, ...extra})

describe('httpGet probe', () => {
  it('succeeds on 2xx with the body as output, sending the kubelet headers', async () => {
    expect(await request('/ok')).toEqual({status: 'success', output: 'all good'})
    const last = seen.at(-1)!
    expect(last.headers['user-agent']).toBe('kube-probe/1.36')
    expect(last.headers.accept).toBe('*/*')
    expect(last.headers.connection).toBe('close')
    expect(last.headers['accept-encoding']).toBeUndefined()
  })

  it('sends custom headers (Host and User-Agent override the defaults) and the query', async () => {
    await request('/ok?x=1', {
      headers: [
        {name: 'x-custom', value: 'a'},
        {name: 'X-Custom', value: 'b'},
        {name: 'Host', value: 'example.test'},
        {name: 'User-Agent', value: 'mine'},
      ],
    })
    const last = seen.at(-1)!
    expect(last.url).toBe('/ok?x=1')
    expect(last.headers['x-custom']).toBe('a, b')
    expect(last.headers.host).toBe('example.test')
    expect(last.headers['user-agent']).toBe('mine')
  })

  it('fails on 4xx without putting the body in the output', async () => {
    expect(await request('/missing')).toEqual({status: 'failure', output: 'HTTP probe failed with statuscode: 404'})
  })

  it('reads at most 10 KiB of the body', async () => {
    const outcome = await request('/big')
    expect(outcome.status).toBe('success')
    expect(outcome.output).toHaveLength(10 * 1024)
  })

  it('follows a redirect on the same host, and stops with a warning at another host', async () => {
    expect(await request('/hop')).toEqual({status: 'success', output: 'all good'})
    expect(await request('/away')).toEqual({status: 'warning', output: 'Probe terminated redirects, Response body: moved'})
    expect(await request('/loop')).toEqual({
      status: 'failure',
      output: `Get "http://127.0.0.1:${port}/loop": stopped after 10 redirects`,
    })
  })

  it('words a refused connection and a timeout as Go does', async () => {
    const closed = await closedPort()
    expect(await request('/ok', {port: closed})).toEqual({
      status: 'failure',
      output: `Get "http://127.0.0.1:${closed}/ok": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    })
    const started = Date.now()
    expect(await request('/slow', {timeoutMs: 300})).toEqual({
      status: 'failure',
      output: `Get "http://127.0.0.1:${port}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    })
    expect(Date.now() - started).toBeLessThan(2500)
  })

  it('builds the URL as formatURL does', () => {
    expect(probeUrl({scheme: 'http', host: 'fd00::1', port: 80, path: 'healthz'}).href).toBe('http://[fd00::1]/healthz')
    expect(probeUrl({scheme: 'https', host: '10.0.0.1', port: 8443, path: '/a?b=c'}).href).toBe('https://10.0.0.1:8443/a?b=c')
  })

  it('speaks HTTPS without verifying the certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probe-tls-'))
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=probe-test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      {stdio: 'ignore'},
    )
    const tls = createHttpsServer(
      {key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem'))},
      (_request, response) => response.end('secure'),
    )
    const tlsPort = await listen(tls)
    try {
      expect(await request('/', {scheme: 'https', port: tlsPort})).toEqual({status: 'success', output: 'secure'})
    } finally {
      tls.close()
    }
  })
})

describe('tcpSocket probe', () => {
  it('succeeds when the port accepts, fails with Go wording when it refuses', async () => {
    expect(await tcpProbe('127.0.0.1', port, 1000)).toEqual({status: 'success', output: ''})
    const closed = await closedPort()
    expect(await tcpProbe('127.0.0.1', closed, 1000)).toEqual({
      status: 'failure',
      output: `dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    })
  })
})

describe('grpc probe', () => {
  it('encodes and decodes the two health messages', () => {
    expect([...encodeHealthCheckRequest('')]).toEqual([])
    expect([...encodeHealthCheckRequest('db')]).toEqual([0x0a, 2, 0x64, 0x62])
    expect(decodeHealthCheckRequest(encodeHealthCheckRequest('x'.repeat(200)))).toBe('x'.repeat(200))
    expect([...encodeHealthCheckResponse(1)]).toEqual([0x08, 1])
    // Unknown fields are skipped.
    expect(decodeHealthCheckResponse(Buffer.from([0x12, 1, 0x41, 0x08, 2, 0x1d, 0, 0, 0, 0]))).toBe(2)
    expect(decodeHealthCheckResponse(Buffer.alloc(0))).toBe(0)
  })

  it('asks grpc.health.v1.Health/Check for the service and judges the status', async () => {
    const statuses: Record<string, number> = {'': 1, db: 2}
    const asked: Array<{service: string; agent: string}> = []
    const grpcServer = new grpc.Server()
    grpcServer.addService(
      {
        Check: {
          path: HEALTH_CHECK_PATH,
          requestStream: false,
          responseStream: false,
          requestSerialize: (value: {service: string}) => encodeHealthCheckRequest(value.service),
          // An object: grpc-js takes a falsy request ('') for no request at all.
          requestDeserialize: (buffer: Buffer) => ({service: decodeHealthCheckRequest(buffer)}),
          responseSerialize: (value: number) => encodeHealthCheckResponse(value),
          responseDeserialize: (buffer: Buffer) => decodeHealthCheckResponse(buffer),
        },
      },
      {
        Check(call: grpc.ServerUnaryCall<{service: string}, number>, callback: grpc.sendUnaryData<number>) {
          const {service} = call.request
          asked.push({service, agent: String(call.metadata.get('user-agent')[0])})
          if (service in statuses) callback(null, statuses[service])
          else callback({code: grpc.status.NOT_FOUND, details: 'unknown service'})
        },
      },
    )
    const grpcPort = await new Promise<number>((resolve, reject) => {
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      )
    })
    try {
      expect(await grpcProbe('127.0.0.1', grpcPort, '', 1)).toEqual({status: 'success', output: 'service healthy'})
      expect(await grpcProbe('127.0.0.1', grpcPort, 'db', 1)).toEqual({
        status: 'failure',
        output: 'service unhealthy (responded with "NOT_SERVING")',
      })
      expect(await grpcProbe('127.0.0.1', grpcPort, 'other', 1)).toEqual({
        status: 'failure',
        output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service',
      })
      expect(asked.map((call) => call.service)).toEqual(['', 'db', 'other'])
      expect(asked[0].agent).toMatch(/^kube-probe\/1\.36/)
    } finally {
      grpcServer.forceShutdown()
    }
  })

  it('reports a server without the health service, and one it cannot reach', async () => {
    const grpcServer = new grpc.Server()
    const grpcPort = await new Promise<number>((resolve, reject) => {
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      )
    })
    try {
      const outcome = await grpcProbe('127.0.0.1', grpcPort, '', 1)
      expect(outcome.status).toBe('failure')
      expect(outcome.output).toMatch(/^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): /)
    } finally {
      grpcServer.forceShutdown()
    }

    const closed = await closedPort()
    expect(await grpcProbe('127.0.0.1', closed, '', 1)).toEqual({
      status: 'failure',
      output: `timeout: failed to connect service "127.0.0.1:${closed}" within 1s: context deadline exceeded`,
    })
  })
})

describe('exec probe', () => {
  const client = (answer: () => unknown) =>
    ({
      deadlineFor: () => 10_000,
      async runtime(_method: string, request: unknown, options: unknown) {
        calls.push({request, options})
        return answer()
      },
    }) as unknown as CriClient
  const calls: Array<{request: unknown; options: unknown}> = []

  it('passes the timeout to ExecSync and judges the exit code; output is stdout then stderr', async () => {
    const ok = client(() => ({exitCode: 0, stdout: Buffer.from('out '), stderr: Buffer.from('err')}))
    expect(await execProbe(ok, 'c1', ['check'], {timeoutSeconds: 3})).toEqual({status: 'success', output: 'out err', exitCode: 0})
    expect(calls.at(-1)).toMatchObject({request: {containerId: 'c1', cmd: ['check'], timeout: '3'}, options: {timeoutMs: 13_000}})
    const bad = client(() => ({exitCode: 2, stdout: Buffer.from('no'), stderr: Buffer.from('')}))
    expect(await execProbe(bad, 'c1', ['check'], {timeoutSeconds: 1})).toEqual({status: 'failure', output: 'no', exitCode: 2})
  })

  it('a timeout is a failure; any other error leaves the result unknown', async () => {
    const slow = client(async () => {
      await new Promise((resolve) => {
        setTimeout(resolve, 1000)
      })
      throw new DeadlineExceededError('ExecSync got no answer')
    })
    expect(await execProbe(slow, 'c1', ['sh', '-c', 'sleep 5'], {timeoutSeconds: 1})).toEqual({
      status: 'failure',
      output: 'command "sh -c sleep 5" timed out',
    })
    // Cut short before the probe's own timeout (podctl's --timeout ran out): no verdict.
    const cut = client(() => {
      throw new DeadlineExceededError('--timeout ran out')
    })
    expect(await execProbe(cut, 'c1', ['check'], {timeoutSeconds: 5})).toMatchObject({status: 'unknown'})
    const broken = client(() => {
      throw new RuntimeError('container not running')
    })
    expect(await execProbe(broken, 'c1', ['check'], {timeoutSeconds: 1})).toMatchObject({status: 'unknown'})
  })

  it('with shared slots, runs at most that many ExecSync calls at once; a probe stopped while queued never calls', async () => {
    let inFlight = 0
    let most = 0
    const runtime = client(async () => {
      most = Math.max(most, ++inFlight)
      await new Promise((resolve) => {
        setTimeout(resolve, 20)
      })
      inFlight--
      return {exitCode: 0, stdout: Buffer.from(''), stderr: Buffer.from('')}
    })
    const slots = new Limiter(2)
    const before = calls.length
    const outcomes = await Promise.all(Array.from({length: 7}, () => execProbe(runtime, 'c1', ['check'], {timeoutSeconds: 1, slots})))
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array.from({length: 7}, () => 'success'))
    expect(most).toBe(2)
    expect(calls.length - before).toBe(7)

    const stopped = new AbortController()
    const busy = execProbe(runtime, 'c1', ['check'], {timeoutSeconds: 1, slots})
    const busy2 = execProbe(runtime, 'c1', ['check'], {timeoutSeconds: 1, slots})
    const queued = execProbe(runtime, 'c1', ['check'], {timeoutSeconds: 1, slots, signal: stopped.signal})
    stopped.abort()
    expect(await queued).toMatchObject({status: 'unknown'})
    await Promise.all([busy, busy2])
    expect(calls.length - before).toBe(9)
  })
})

describe('lifecycle handlers from the node', () => {
  const context = {containerName: 'app', pod: 'web_default(u1)', ports: [{name: 'http', containerPort: port}], timeoutMs: 1000}

  it('an httpGet hook succeeds on any answer, and fails only on a transport error', async () => {
    const ports = [{name: 'http', containerPort: port}]
    const podIP = async () => '127.0.0.1'
    const hook = (path: string, hookPort: number | string = 'http') => ({
      httpGet: {path, port: hookPort, scheme: 'HTTP' as const, httpHeaders: []},
    })
    expect(await runNodeHandler(hook('/missing'), {...context, ports, podIP})).toBeUndefined()
    expect(seen.at(-1)!.headers['user-agent']).toBe('kube-lifecycle/1.36')
    const closed = await closedPort()
    expect(await runNodeHandler(hook('/quit', closed), {...context, ports, podIP})).toBe(
      `HTTP lifecycle hook (/quit) for Container "app" in Pod "web_default(u1)" failed - error: ` +
        `Get "http://127.0.0.1:${closed}/quit": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    )
    expect(await runNodeHandler(hook('/x'), {...context, ports, podIP: async () => undefined})).toMatch(
      /failed - error: failed to find networking container/,
    )
  })

  it('sleeps (cut short by an abort), and refuses tcpSocket as the kubelet does', async () => {
    const podIP = async () => '127.0.0.1'
    const started = Date.now()
    expect(await runNodeHandler({sleep: {seconds: 1}}, {...context, podIP})).toBeUndefined()
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    const abort = new AbortController()
    setTimeout(() => abort.abort(), 50)
    expect(await runNodeHandler({sleep: {seconds: 30}}, {...context, podIP, timeoutMs: 30_000, signal: abort.signal})).toBe(
      'Sleep lifecycle hook (30) for Container "app" in Pod "web_default(u1)" failed - ' +
        'error: container terminated before sleep hook finished',
    )
    expect(await runNodeHandler({tcpSocket: {port: 80}}, {...context, podIP})).toMatch(/^Cannot run handler: invalid handler: tcpSocket/)
  })
})
