/**
 * runp, create, start, stop, rm, update, stopp, rmp against the in-process fake runtime: argument
 * forms (crictl's and podctl's), names and ID prefixes, what reaches the runtime, one-line errors
 * with their exit codes, and that failures leave nothing behind.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import * as grpc from '@grpc/grpc-js'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {FakePodRuntime} from '../support/fake-pod-runtime.js'
import {endpointEnv, podctl} from '../support/podctl.js'

const fake = new FakePodRuntime()
const dir = mkdtempSync(join(tmpdir(), 'podctl-sandbox-commands-'))
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text)
  return join(dir, name)
}

const MANIFEST = file(
  'pod.yaml',
  `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  terminationGracePeriodSeconds: 7
  containers:
  - name: app
    image: busybox:1.36
    ports: [{containerPort: 80, hostPort: 18081}]
  - name: debug
    image: busybox:1.36
    command: [sleep, '3600']
    lifecycle:
      postStart: {exec: {command: [touch, /started]}}
      preStop: {exec: {command: [sh, -c, 'echo bye']}}
`,
)
const POD_CONFIG = file(
  'pod-config.json',
  JSON.stringify({
    metadata: {name: 'box', namespace: 'lab', uid: 'u-box', attempt: 1},
    linux: {namespaces: {options: {}}},
    port_mappings: [{container_port: 80, host_port: 18_082}],
  }),
)
const CONTAINER_CONFIG = file(
  'container-config.yaml',
  'metadata: {name: busybox}\nimage: {image: busybox:1.36}\ncommand: [top]\nlog_path: busybox.0.log\n',
)

let env: Record<string, string | undefined>
const run = (...args: string[]) => podctl(args, {env})

beforeAll(async () => {
  await fake.start()
  env = endpointEnv(fake.client.runtimeEndpoint, {
    PODCTL_POD_DIR_ROOT: join(dir, 'pods'),
    PODCTL_POD_LOGS_ROOT: join(dir, 'logs'),
  })
})

beforeEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
  rmSync(dir, {recursive: true, force: true})
})

const request = (method: string) => fake.calls.filter((call) => call.method === method).map((call) => call.request)

/** runp of the manifest (pod web in shop), then `create` of container `name` into it; the IDs. */
async function podWith(name?: string, ...flags: string[]): Promise<{sandboxId: string; containerId?: string}> {
  const runp = await run('runp', MANIFEST, '-q')
  expect(runp.code).toBe(0)
  const sandboxId = runp.stdout.trim()
  if (name === undefined) return {sandboxId}
  const create = await run('create', '-n', 'shop', 'web', '-f', MANIFEST, '--container', name, '-q', ...flags)
  expect(create.stderr).toBe('')
  expect(create.code).toBe(0)
  return {sandboxId, containerId: create.stdout.trim()}
}

describe('podctl runp', () => {
  it("runs crictl's pod config (linux.namespaces ignored as crictl does), prints the ID, with the kubelet's labels", async () => {
    const result = await run('runp', POD_CONFIG, '--runtime', 'fast')
    expect(result.code).toBe(0)
    const [sandbox] = fake.sandboxes.values()
    expect(result.stdout).toBe(`${sandbox.id}\n`)
    const [sent] = request('runPodSandbox')
    expect(sent.runtimeHandler).toBe('fast')
    expect(sent.config.metadata).toEqual({name: 'box', namespace: 'lab', uid: 'u-box', attempt: 1})
    expect(sent.config.labels).toMatchObject({
      'io.kubernetes.pod.name': 'box',
      'io.kubernetes.pod.namespace': 'lab',
      'io.kubernetes.pod.uid': 'u-box',
    })
    expect(sent.config.annotations['io.podctl.podDirectory']).toBe(join(dir, 'pods', 'u-box'))
    expect(sent.config.portMappings).toEqual([expect.objectContaining({containerPort: 80, hostPort: 18_082})])
    expect(request('createContainer')).toEqual([])
  })

  it('a Pod manifest: the sandbox only (its ports), JSON on -o json; a second runp is refused (exit 8)', async () => {
    const result = await run('runp', '-f', MANIFEST, '-o', 'json')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({pod: 'web_shop', name: 'web', namespace: 'shop', attempt: 0, ips: ['10.88.0.9']})
    expect(request('runPodSandbox')[0].config.portMappings).toEqual([expect.objectContaining({containerPort: 80, hostPort: 18_081})])
    expect(request('createContainer')).toEqual([])

    const again = await run('runp', MANIFEST)
    expect(again.code).toBe(ExitCode.ALREADY_EXISTS)
    expect(again.stderr).toMatch(
      /^Error: pod "web" already exists in namespace "shop" \(sandbox \w+\); remove it first with: podctl rmp -f web -n shop\n$/,
    )
  })

  it('refuses a missing or doubled argument and bad input before any call (exit 2)', async () => {
    const none = await run('runp')
    expect(none.code).toBe(ExitCode.USAGE)
    expect(none.stderr).toBe('Error: no pod config: podctl runp POD-CONFIG (a Pod manifest or crictl pod config; - for stdin)\n')
    const bad = await run('runp', file('bad.json', '{"metadata": {"name": "x"}, "linux": {"cgroupParent": "a"}}'))
    expect(bad.code).toBe(ExitCode.USAGE)
    expect(bad.stderr).toMatch(/bad\.json: linux\.cgroupParent is not a known field/)
    expect(fake.calls.filter((call) => call.method !== 'version')).toEqual([])
  })

  it('rolls the sandbox back when its status fails after RunPodSandbox', async () => {
    fake.failNext('podSandboxStatus', grpc.status.INTERNAL, 'status broke')
    const result = await run('runp', POD_CONFIG)
    expect(result.code).toBe(ExitCode.POD_FAILED)
    expect(result.stderr).toMatch(/status broke.*\(rolled back\)\n$/)
    expect(fake.sandboxes.size).toBe(0)
  })
})

describe('podctl create', () => {
  it("crictl's form (ID prefix, container config, pod config): the sandbox's identity, created, not started", async () => {
    const {sandboxId} = await podWith()
    const result = await run('create', sandboxId.slice(0, 6), CONTAINER_CONFIG, POD_CONFIG)
    expect(result.code).toBe(0)
    expect(result.stderr).toContain(`Warning: ${POD_CONFIG} names pod box_lab, not the sandbox's; the sandbox's own config is used\n`)
    const [container] = fake.containers.values()
    expect(result.stdout).toBe(`${container.id}\n`)
    const [sent] = request('createContainer')
    expect(sent.podSandboxId).toBe(sandboxId)
    expect(sent.config.labels).toMatchObject({
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'shop',
      'io.kubernetes.container.name': 'busybox',
    })
    expect(sent.config.annotations).toMatchObject({
      'io.kubernetes.container.restartCount': '0',
      'io.kubernetes.container.hash': expect.any(String),
    })
    expect(sent.config.logPath).toBe('busybox.0.log')
    expect(sent.sandboxConfig.logDirectory).toMatch(new RegExp(`^${join(dir, 'logs')}/shop_web_`))
    expect(container.state).toBe('CONTAINER_CREATED')
    expect(request('startContainer')).toEqual([])
  })

  it('a manifest container by pod name, --start: started, postStart run, grace period and preStop recorded', async () => {
    const {containerId} = await podWith('debug', '--start')
    const [sent] = request('createContainer')
    expect(sent.config.annotations).toMatchObject({
      'io.kubernetes.pod.terminationGracePeriod': '7',
      'io.kubernetes.container.preStopHandler': JSON.stringify({exec: {command: ['sh', '-c', 'echo bye']}}),
    })
    expect(request('startContainer')).toEqual([{containerId}])
    expect(request('execSync').map((r) => r.cmd)).toEqual([['touch', '/started']])
  })

  it('usage errors name the fix (exit 2); a missing pod is exit 5; a live container of that name exit 8', async () => {
    const several = await run('create', 'web', '-n', 'shop', '-f', MANIFEST)
    expect(several.code).toBe(ExitCode.USAGE)
    expect(several.stderr).toBe(`Error: ${MANIFEST}: pod "web" has 2 containers (app, debug); pick one with --container NAME\n`)
    const noPod = await run('create')
    expect(noPod.code).toBe(ExitCode.USAGE)
    const missing = await run('create', 'ghost', '-f', MANIFEST, '--container', 'app')
    expect(missing.code).toBe(ExitCode.NOT_FOUND)
    expect(missing.stderr).toBe('Error: pod "ghost" not found; list pods with: podctl pods\n')

    await podWith('app')
    const twice = await run('create', 'web_shop', '-f', MANIFEST, '--container', 'app')
    expect(twice.code).toBe(ExitCode.ALREADY_EXISTS)
    expect(twice.stderr).toMatch(/already has a container "app" \(\w+, created\); pick another name with --name/)
    const renamed = await run('create', 'web_shop', '-f', MANIFEST, '--container', 'app', '--name', 'app2', '-q')
    expect(renamed.code).toBe(0)
    expect(fake.containers.size).toBe(2)
  })

  it('leaves nothing when CreateContainer fails, and removes the container when its start fails', async () => {
    await podWith()
    fake.failNext('createContainer', grpc.status.INTERNAL, 'no space')
    const created = await run('create', 'web', '-n', 'shop', '-f', MANIFEST, '--container', 'app', '-q')
    expect(created.code).toBe(ExitCode.POD_FAILED)
    expect(created.stderr).toMatch(/no space/)
    expect(fake.containers.size).toBe(0)

    fake.failNext('startContainer', grpc.status.INTERNAL, 'exec format error')
    const started = await run('create', 'web', '-n', 'shop', '-f', MANIFEST, '--container', 'app', '--start', '-q')
    expect(started.code).toBe(ExitCode.POD_FAILED)
    expect(started.stderr).toMatch(/exec format error \(container \w+ removed\)\n$/)
    expect(fake.containers.size).toBe(0)
  })

  it('refuses a pod that is not ready (exit 9)', async () => {
    await podWith()
    expect((await run('stopp', 'web', '-n', 'shop')).code).toBe(0)
    const result = await run('create', 'web', '-n', 'shop', '-f', MANIFEST, '--container', 'app')
    expect(result.code).toBe(ExitCode.RUNTIME)
    expect(result.stderr).toMatch(/is not ready; containers can be added only to a running pod/)
  })
})

describe('Ctrl-C', () => {
  it('runp interrupted while RunPodSandbox runs: the sandbox is rolled back, exit 130', async () => {
    const held = fake.holdNext('runPodSandbox')
    const pending = podctl(['runp', POD_CONFIG], {
      env,
      onSpawn(child) {
        void held.arrived.then(() => {
          child.kill('SIGINT')
          setTimeout(held.release, 300)
        })
      },
    })
    const result = await pending
    expect(result.code).toBe(ExitCode.INTERRUPTED)
    expect(result.stderr).toMatch(/was interrupted \(rolled back\)\n$/)
    expect(fake.sandboxes.size).toBe(0)
  })

  it('create --start interrupted during CreateContainer: the container is removed, exit 130', async () => {
    await podWith()
    const held = fake.holdNext('createContainer')
    const result = await podctl(['create', 'web', '-n', 'shop', '-f', MANIFEST, '--container', 'app', '--start'], {
      env,
      onSpawn(child) {
        void held.arrived.then(() => {
          child.kill('SIGINT')
          setTimeout(held.release, 300)
        })
      },
    })
    expect(result.code).toBe(ExitCode.INTERRUPTED)
    expect(result.stderr).toMatch(/\(container \w+ removed\)\n$/)
    expect(fake.containers.size).toBe(0)
    expect(request('startContainer')).toEqual([])
  })
})

describe('podctl start, stop, rm, update', () => {
  it('start runs the recorded postStart hook; a running container is refused (exit 9)', async () => {
    const {containerId} = await podWith('debug')
    const result = await run('start', '-n', 'shop', 'web/debug')
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(`${containerId}\n`)
    expect(request('execSync').map((r) => r.cmd)).toEqual([['touch', '/started']])
    const again = await run('start', containerId!.slice(0, 8))
    expect(again.code).toBe(ExitCode.RUNTIME)
    expect(again.stderr).toMatch(/^Error: container debug \(\w+\) is running; only a created container can be started/)
  })

  it('stop: the preStop hook and the recorded grace period; -t 0 kills at once; --all -n', async () => {
    const {containerId} = await podWith('debug', '--start')
    fake.calls.length = 0
    const result = await run('stop', containerId!)
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(`${containerId}\n`)
    expect(request('execSync').map((r) => r.cmd)).toEqual([['sh', '-c', 'echo bye']])
    expect(request('stopContainer')).toEqual([{containerId, timeout: '7'}])

    await run('create', 'web', '-n', 'shop', '-f', MANIFEST, '--container', 'app', '--start')
    fake.calls.length = 0
    const all = await run('stop', '--all', '-n', 'shop', '-t', '0', '-o', 'json')
    expect(all.code).toBe(0)
    expect(JSON.parse(all.stdout)).toMatchObject({items: [{name: 'app', stopped: true, gracePeriodSeconds: 0}], failures: []})
    expect(request('execSync')).toEqual([])
    expect(request('stopContainer')).toEqual([expect.objectContaining({timeout: '0'})])
  })

  it('rm refuses a running container without -f (exit 9), removes with -f; every failure reported, exit of the first', async () => {
    const {containerId} = await podWith('app', '--start')
    const refused = await run('rm', containerId!.slice(0, 7))
    expect(refused.code).toBe(ExitCode.RUNTIME)
    const short = containerId!.slice(0, 13)
    expect(refused.stderr).toBe(`Error: container app (${short}) is running; stop it first (podctl stop ${short}) or pass --force\n`)
    const removed = await run('rm', '-f', 'ghost', 'web_shop/app')
    expect(removed.code).toBe(ExitCode.NOT_FOUND)
    expect(removed.stdout).toBe(`${containerId}\n`)
    expect(removed.stderr).toBe('Error: container "ghost" not found; list containers with: podctl ps -a\n')
    expect(fake.containers.size).toBe(0)
  })

  it('update: quantities and crictl units reach UpdateContainerResources; nothing asked is exit 2', async () => {
    const {containerId} = await podWith('app', '--start')
    const result = await run('update', '-n', 'shop', 'web/app', '--cpus', '0.5', '--memory', '256Mi', '--cpu-share', '512')
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(`${containerId}\n`)
    expect(request('updateContainerResources')[0].linux).toMatchObject({
      cpuPeriod: '100000',
      cpuQuota: '50000',
      cpuShares: '512',
      memoryLimitInBytes: '268435456',
    })
    const bytes = await run('update', containerId!, '--memory', '268435456', '--cpu-quota', '20000')
    expect(bytes.code).toBe(0)
    expect(request('updateContainerResources')[1].linux).toMatchObject({memoryLimitInBytes: '268435456', cpuQuota: '20000'})
    const nothing = await run('update', containerId!)
    expect(nothing.code).toBe(ExitCode.USAGE)
    expect(nothing.stderr).toMatch(/^Error: nothing to update; give --cpus, --memory/)
    const bad = await run('update', containerId!, '--memory', 'lots')
    expect(bad.stderr).toBe('Error: --memory "lots" is not a size; give bytes (268435456) or a quantity (256Mi, 1Gi)\n')
  })
})

describe('podctl stopp and rmp', () => {
  it('stopp keeps the stopped sandbox; rmp refuses a running pod without -f and removes a stopped one', async () => {
    await podWith('app', '--start')
    const refused = await run('rmp', 'web', '-n', 'shop')
    expect(refused.code).toBe(ExitCode.RUNTIME)
    expect(refused.stderr).toBe('Error: pod web_shop is running; stop it first (podctl stopp web_shop) or pass --force\n')
    expect(fake.sandboxes.size).toBe(1)

    const stopped = await run('stopp', 'web', '-n', 'shop', '-o', 'json')
    expect(stopped.code).toBe(0)
    expect(JSON.parse(stopped.stdout).items[0]).toMatchObject({pod: 'web_shop', containersStopped: 1, removed: false})
    expect([...fake.sandboxes.values()][0].state).toBe('SANDBOX_NOTREADY')
    expect(fake.containers.size).toBe(1)

    const removed = await run('rmp', 'web_shop')
    expect(removed.code).toBe(0)
    expect(fake.sandboxes.size).toBe(0)
    expect(fake.containers.size).toBe(0)
  })

  it('rmp -af -n removes running pods at once (no preStop hook)', async () => {
    await podWith('debug', '--start')
    fake.calls.length = 0
    const result = await run('rmp', '-af', '-n', 'shop')
    expect(result.code).toBe(0)
    expect(request('execSync')).toEqual([])
    expect(request('stopContainer')).toEqual([expect.objectContaining({timeout: '0'})])
    expect(fake.sandboxes.size).toBe(0)
  })
})
