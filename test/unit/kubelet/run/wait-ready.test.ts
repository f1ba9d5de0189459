import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {DeadlineExceededError} from '../../../../src/lib/errors.js'
import type {EnsureImageResult} from '../../../../src/lib/images/image-manager.js'
import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {type PodRunSettings, runPod} from '../../../../src/lib/kubelet/run/run-pod.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'

/** `run --wait ready` against the in-process fake runtime: exec readiness probes through ExecSync. */
const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
  - name: app
    image: "nginx:1.27"
    readinessProbe: {exec: {command: [cat, /tmp/ready]}, periodSeconds: 1, timeoutSeconds: 2}
  - {name: sidecar, image: "nginx:1.27"}
`

let fake: FakePodRuntime

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
})

async function run(timeoutMs: number) {
  const [document] = await parseDocuments(POD, 'pod.yaml')
  const pod = parsePod(document, 'pod.yaml', {newUid: () => 'uid-1'})
  const root = mkdtempSync(join(tmpdir(), 'podctl-wait-ready-'))
  const settings: PodRunSettings = {
    wait: 'ready',
    deadline: Date.now() + timeoutMs,
    replace: false,
    keepOnFailure: false,
    remove: false,
    logsRoot: join(root, 'logs'),
    podDirRoot: join(root, 'pods'),
    hostResolvConf: '',
    nodeMemoryBytes: 1024 ** 3,
    pollMs: 20,
  }
  const events: PodEvent[] = []
  const outcome = await runPod(pod, [], settings, {
    client: fake.client,
    images: {
      ensureImage: async (options): Promise<EnsureImageResult> => ({
        image: options.image,
        imageRef: `sha256:${options.image}`,
        pulled: false,
        message: '',
        policy: 'IfNotPresent',
        attempts: 0,
      }),
    },
    events: (event) => events.push(event),
    signal: new AbortController().signal,
  })
  return {outcome, events}
}

describe('runPod --wait ready', () => {
  it('returns once the readiness probe passes, probing through ExecSync with its timeout', async () => {
    let probes = 0
    fake.execSyncAnswer = () => {
      probes++
      return probes < 3
        ? {stdout: Buffer.alloc(0), stderr: Buffer.from('cat: /tmp/ready: No such file'), exitCode: 1}
        : {stdout: Buffer.from('yes'), stderr: Buffer.alloc(0), exitCode: 0}
    }

    const {outcome, events} = await run(30_000)
    expect(outcome.failure).toBeUndefined()
    expect(outcome.result?.phase).toBe('Running')
    const execs = fake.calls.filter((call) => call.method === 'execSync')
    expect(execs).toHaveLength(3)
    expect(execs[0].request).toMatchObject({cmd: ['cat', '/tmp/ready'], timeout: '2'})
    expect(events.filter((event) => event.reason === 'Unhealthy').map((event) => `${event.object}: ${event.message}`)).toEqual([
      'web_shop/app: Readiness probe failed: cat: /tmp/ready: No such file',
      'web_shop/app: Readiness probe failed: cat: /tmp/ready: No such file',
    ])
  }, 20_000)

  it('fails at --timeout with the probe output and exit code, and rolls back', async () => {
    fake.execSyncAnswer = () => ({stdout: Buffer.from('warming up\n'), stderr: Buffer.alloc(0), exitCode: 4})
    const {outcome} = await run(2500)
    expect(outcome.failure).toBeInstanceOf(DeadlineExceededError)
    expect(outcome.failure?.message).toMatch(
      new RegExp(
        String.raw`^pod web_shop is not ready after \S+ \(--timeout\): ContainersNotReady: containers with unready status: \[app\]; ` +
          String.raw`app: Readiness probe failed \(exit code 4\): "warming up"`,
      ),
    )
    expect(outcome.result?.rolledBack).toBe(true)
    expect(fake.sandboxes.size).toBe(0)
  }, 20_000)
})
