import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {PodctlAnnotation} from '../../src/lib/kube/labels.js'
import {writeRecordedStatus} from '../../src/lib/kubelet/config/desired-state.js'
import {cleanupNamespace, lab, labClient, labEnv, podAddressPattern, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {pullBusybox} from '../support/pods.js'

/**
 * Probes and lifecycle hooks against the lab: `run --wait ready` gated by httpGet, exec, tcpSocket and
 * grpc readiness probes run from the node against the pod IP; postStart/preStop httpGet and sleep hooks;
 * a failing postStart hook reported as PostStartHookError; `status --wait-for ready`. All traffic goes
 * to pods these tests made on the lab bridge.
 */
const client = labClient()
const namespace = uniqueNamespace('probes')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-probe-pods-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot})
const busybox = lab().busybox

/** An httpd serving /www (index.html says "hello") with a CGI that appends its query to /tmp/hooks.log. */
const HTTPD = [
  'mkdir -p /www/cgi-bin',
  'echo hello > /www/index.html',
  String.raw`printf '#!/bin/sh\necho "$QUERY_STRING" >> /tmp/hooks.log\nprintf "Content-Type: text/plain\\r\\n\\r\\nok\\n"\n'` +
    ' > /www/cgi-bin/hook',
  'chmod +x /www/cgi-bin/hook',
  'exec httpd -f -p 8080 -h /www',
].join(' && ')
const SERVE = 'trap "exit 0" TERM; while true; do sleep 1; done'

type Container = Record<string, unknown> & {name: string}

function pod(name: string, containers: Container[], extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, namespace},
    spec: {terminationGracePeriodSeconds: 2, ...extra, containers: containers.map((container) => ({image: busybox, ...container}))},
  }
}

function run(manifest: unknown, args: string[]) {
  return podctl(['run', '-f', '-', ...args], {env, input: JSON.stringify(manifest)})
}

function kill(name: string) {
  return podctl(['kill', name, '-n', namespace], {env})
}

/** Bytes as a printf format of octal escapes (busybox printf has no \x). */
function octal(bytes: number[]): string {
  return bytes.map((byte) => `\\${byte.toString(8).padStart(3, '0')}`).join('')
}

function frame(type: number, flags: number, stream: number, payload: number[]): number[] {
  const length = payload.length
  return [length >> 16, (length >> 8) & 0xff, length & 0xff, type, flags, 0, 0, 0, stream, ...payload]
}

const ascii = (text: string) => [...Buffer.from(text)]

/**
 * A stand-in gRPC health server from busybox alone: `nc -ll -e` answers each connection with a canned
 * HTTP/2 exchange (SETTINGS, then HEADERS :status 200 + content-type application/grpc, one DATA frame
 * holding HealthCheckResponse{status}, trailers grpc-status 0), after giving the client time to send
 * its request on stream 1.
 */
function grpcStandIn(status: number): string {
  const settings = frame(4, 0, 0, [])
  const ack = frame(4, 1, 0, [])
  const headers = frame(1, 4, 1, [0x88, 0x0f, 0x10, 16, ...ascii('application/grpc')])
  const data = frame(0, 0, 1, [0, 0, 0, 0, 2, 0x08, status])
  const trailers = frame(1, 5, 1, [0x00, 11, ...ascii('grpc-status'), 1, ...ascii('0')])
  const answer = octal([...ack, ...headers, ...data, ...trailers])
  const script = `#!/bin/sh\nprintf '${octal(settings)}'\nsleep 0.5\nprintf '${answer}'\nsleep 1\n`
  const quoted = `'${script.replaceAll("'", `'"'"'`)}'`
  return `printf '%s' ${quoted} > /h2.sh && chmod +x /h2.sh && exec nc -ll -p 9090 -e /h2.sh`
}

interface RunJson {
  pods: Array<{ip: string; phase: string; containers: Array<{name: string; id: string}>; rolledBack: boolean}>
}

let target: {ip: string}

beforeAll(async () => {
  await pullBusybox(client)
  // The hooks' target: an httpd pod whose CGI logs every request, ready once its port accepts.
  const result = await run(
    pod('target', [{name: 'web', command: ['sh', '-c', HTTPD], readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}}]),
    ['--wait', 'ready', '-o', 'json', '--timeout', '60s'],
  )
  expect(result.code, result.stderr).toBe(0)
  target = (JSON.parse(result.stdout) as RunJson).pods[0]
  expect(target.ip).toMatch(new RegExp(`^${podAddressPattern()}$`))
}, 90_000)

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  rmSync(podDirRoot, {recursive: true, force: true})
  client.close()
})

async function hookLog(): Promise<string[]> {
  const result = await podctl(['exec', 'target/web', '-n', namespace, '--', 'sh', '-c', 'cat /tmp/hooks.log 2>/dev/null || true'], {env})
  expect(result.code, result.stderr).toBe(0)
  return result.stdout.split('\n').filter(Boolean)
}

describe('run --wait ready', () => {
  it('returns once an httpGet readiness probe (port by name) passes, and status --wait-for ready agrees', async () => {
    const manifest = pod('web', [
      {
        name: 'app',
        command: ['sh', '-c', `sleep 1 && ${HTTPD}`],
        ports: [{name: 'http', containerPort: 8080}],
        readinessProbe: {httpGet: {path: '/index.html', port: 'http'}, periodSeconds: 1},
      },
    ])
    const result = await run(manifest, ['--wait', 'ready', '-o', 'json', '--timeout', '60s'])
    expect(result.code, result.stderr).toBe(0)
    expect((JSON.parse(result.stdout) as RunJson).pods[0].phase).toBe('Running')
    // The probes are recorded on the container for later commands.
    const inspect = await podctl(['inspect', 'web/app', '-n', namespace, '-o', 'json'], {env})
    expect(inspect.code, inspect.stderr).toBe(0)
    expect(inspect.stdout).toContain(PodctlAnnotation.probes)

    const status = await podctl(['status', 'web', '-n', namespace, '--wait-for', 'ready', '--wait-timeout', '30s', '-o', 'json'], {env})
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({phase: 'Running', ready: true})
    expect((await kill('web')).code).toBe(0)
  }, 90_000)

  it('fails with the probe output when the path is 404, and rolls the pod back', async () => {
    const manifest = pod('missing', [
      {
        name: 'app',
        command: ['sh', '-c', HTTPD],
        readinessProbe: {httpGet: {path: '/missing', port: 8080}, periodSeconds: 1},
      },
    ])
    const result = await run(manifest, ['--wait', 'ready', '--timeout', '25s'])
    expect(result.code, result.stderr).toBe(4)
    expect(result.stdout).toMatch(/Warning\s+Unhealthy\s+.*Readiness probe failed: HTTP probe failed with statuscode: 404/)
    expect(result.stderr).toContain('ContainersNotReady: containers with unready status: [app]')
    expect(result.stderr).toContain('app: Readiness probe failed: "HTTP probe failed with statuscode: 404"')
    expect(result.stderr).toMatch(/rolled back/)
    const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})
    expect(items.filter((sandbox) => sandbox.metadata?.name === 'missing')).toEqual([])
  }, 90_000)

  it('runs exec readiness probes: waits for the file, and reports the last output and exit code', async () => {
    const ready = pod('exec-ok', [
      {
        name: 'app',
        command: ['sh', '-c', `sleep 2; touch /tmp/ready; ${SERVE}`],
        readinessProbe: {exec: {command: ['sh', '-c', 'test -f /tmp/ready']}, periodSeconds: 1},
      },
    ])
    const started = Date.now()
    const ok = await run(ready, ['--wait', 'ready', '--timeout', '60s'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000)
    expect((await kill('exec-ok')).code).toBe(0)

    const never = pod('exec-bad', [
      {
        name: 'app',
        command: ['sh', '-c', SERVE],
        readinessProbe: {exec: {command: ['sh', '-c', 'echo not yet; exit 3']}, periodSeconds: 1},
      },
    ])
    const bad = await run(never, ['--wait', 'ready', '--timeout', '25s'])
    expect(bad.code, bad.stderr).toBe(4)
    expect(bad.stdout).toMatch(/Warning\s+Unhealthy\s+.*Readiness probe failed: not yet/)
    expect(bad.stderr).toContain('app: Readiness probe failed (exit code 3): "not yet"')
  }, 120_000)

  it('runs a tcpSocket probe, and a grpc probe against a stand-in health server', async () => {
    const manifest = pod('sockets', [
      {name: 'tcp', command: ['sh', '-c', HTTPD], readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}},
      {name: 'grpc', command: ['sh', '-c', grpcStandIn(1)], readinessProbe: {grpc: {port: 9090}, periodSeconds: 2, timeoutSeconds: 3}},
    ])
    const result = await run(manifest, ['--wait', 'ready', '--timeout', '60s'])
    expect(result.code, result.stderr).toBe(0)
    expect((await kill('sockets')).code).toBe(0)

    const unhealthy = pod('grpc-bad', [
      {
        name: 'grpc',
        command: ['sh', '-c', grpcStandIn(2)],
        readinessProbe: {grpc: {port: 9090, service: 'db'}, periodSeconds: 2, timeoutSeconds: 3},
      },
    ])
    const bad = await run(unhealthy, ['--wait', 'ready', '--timeout', '25s'])
    expect(bad.code, bad.stderr).toBe(4)
    expect(bad.stdout).toContain('Readiness probe failed: service unhealthy (responded with "NOT_SERVING")')
    expect(bad.stderr).toContain(String.raw`grpc: Readiness probe failed: "service unhealthy (responded with \"NOT_SERVING\")"`)
  }, 150_000)
})

describe('lifecycle hooks from the node', () => {
  it('runs postStart and preStop httpGet hooks against the pod IP (here: another pod by host)', async () => {
    const manifest = pod('hooked', [
      {
        name: 'app',
        command: ['sh', '-c', SERVE],
        lifecycle: {
          postStart: {httpGet: {host: target.ip, port: 8080, path: '/cgi-bin/hook?poststart'}},
          preStop: {httpGet: {host: target.ip, port: 8080, path: '/cgi-bin/hook?prestop'}},
        },
      },
    ])
    const result = await run(manifest, ['--timeout', '60s'])
    expect(result.code, result.stderr).toBe(0)
    expect(await hookLog()).toContain('poststart')
    expect((await kill('hooked')).code).toBe(0)
    expect(await hookLog()).toContain('prestop')
  }, 90_000)

  it('a preStop sleep counts against the grace period', async () => {
    const manifest = pod('sleepy', [{name: 'app', command: ['sh', '-c', SERVE], lifecycle: {preStop: {sleep: {seconds: 2}}}}], {
      terminationGracePeriodSeconds: 5,
    })
    expect((await run(manifest, ['--timeout', '60s'])).code).toBe(0)
    const started = Date.now()
    const killed = await kill('sleepy')
    expect(killed.code, killed.stderr).toBe(0)
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000)
  }, 60_000)

  it('a failing postStart httpGet hook kills the container: PostStartHookError, FailedPostStartHook, rolled back', async () => {
    const manifest = pod('broken-hook', [
      {name: 'app', command: ['sh', '-c', SERVE], lifecycle: {postStart: {httpGet: {host: target.ip, port: 9999, path: '/warm'}}}},
    ])
    const result = await run(manifest, ['--timeout', '60s'])
    expect(result.code, result.stderr).toBe(14)
    expect(result.stdout).toMatch(/Warning\s+FailedPostStartHook\s+.*PostStartHook failed/)
    expect(result.stderr).toContain('PostStartHookError')
    expect(result.stderr).toContain(`HTTP lifecycle hook (/warm) for Container "app" in Pod "broken-hook_${namespace}(`)
    expect(result.stderr).toContain(`Get "http://${target.ip}:9999/warm": dial tcp ${target.ip}:9999: connect: connection refused`)
  }, 60_000)
})

describe('status --wait-for ready and a supervisor', () => {
  it("takes the supervisor's recorded readiness while one runs, and probes itself when none does", async () => {
    const manifest = pod('watched', [
      {name: 'app', command: ['sh', '-c', SERVE], readinessProbe: {exec: {command: ['test', '-f', '/tmp/ready']}, periodSeconds: 1}},
    ])
    expect((await run(manifest, ['--wait', 'running', '--settle', '0'])).code).toBe(0)
    const listed = await podctl(['pods', '--name', 'watched', '-n', namespace, '-o', 'json'], {env})
    const uid = (JSON.parse(listed.stdout) as {items: Array<{metadata: {uid: string}}>}).items[0].metadata.uid
    // What a live `sync --watch` records (this test process stands in for its pid): app is ready.
    const since = new Date().toISOString()
    await writeRecordedStatus(podDirRoot, uid, {
      supervisor: {pid: process.pid, since},
      updatedAt: since,
      containers: {app: {ready: true, started: true}},
    })
    const supervised = await podctl(['status', 'watched', '-n', namespace, '--wait-for', 'ready', '--wait-timeout', '20s'], {env})
    expect(supervised.code, supervised.stderr).toBe(0)

    // No supervisor: podctl runs the probe itself, which fails (no /tmp/ready), and says so.
    await writeRecordedStatus(podDirRoot, uid, {updatedAt: since, containers: {}})
    const alone = await podctl(['status', 'watched', '-n', namespace, '--wait-for', 'ready', '--wait-timeout', '4s'], {env})
    expect(alone.code).toBe(4)
    expect(alone.stderr).toContain('not ready: app (last probe output, exit code 1')
    expect((await kill('watched')).code).toBe(0)
  }, 90_000)
})
