/**
 * `podctl debug POD` and `podctl debug node` (issue 35) on the lab's runtime: a debug container beside
 * the static app (one static binary, no shell, no ps) sees the app's processes; the node's pod sees the
 * host's files; exit codes pass through; and nothing stays behind, whether the session ends, is
 * interrupted, or its podctl is SIGKILLed (then `podctl gc` removes what it left).
 */
import {type ChildProcess} from 'node:child_process'
import {mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {pullBusybox} from '../support/containers.js'
import {cleanupNamespace, lab, labClient, labEnv, onCrio, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {until} from '../support/until.js'

const client = labClient()
const namespace = uniqueNamespace('debug')
const work = mkdtempSync(join(tmpdir(), 'podctl-debug-'))
const linksDir = join(work, 'containers')
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: join(work, 'pods'), PODCTL_CONTAINER_LOGS_DIR: linksDir})
const image = lab().busybox

/** The containers of the namespace, as the runtime has them: name and state. */
async function containersIn(): Promise<Array<{name: string; state: string; pod: string}>> {
  const {containers} = await client.runtime('listContainers', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})
  return containers
    .map((container) => ({
      name: container.metadata?.name ?? '',
      state: container.state,
      pod: container.labels['io.kubernetes.pod.name'] ?? '',
    }))
    .sort((a, b) => a.name.localeCompare(b.name))
}

async function podNamesIn(): Promise<string[]> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})
  return items.map((sandbox) => sandbox.metadata?.name ?? '').sort()
}

/** A `podctl debug` running until `kill()`, which SIGKILLs it once its debug container (the one `isIt` names) runs. */
function session(args: string[], what: string, isIt: (c: {name: string; pod: string}) => boolean): {kill: () => Promise<void>} {
  let child: ChildProcess | undefined
  const done = podctl(args, {env, timeoutMs: 100_000, onSpawn: (spawned) => (child = spawned)})
  const running = async () => (await containersIn()).some((c) => isIt(c) && c.state === 'CONTAINER_RUNNING')
  return {
    async kill() {
      await until(`a running ${what}`, running, {timeoutMs: 60_000, pollMs: 200})
      child!.kill('SIGKILL')
      expect((await done).code).toBeNull()
    },
  }
}

const inAppContainer = (c: {name: string; pod: string}) => c.pod === 'app' && c.name.startsWith('debugger-')

beforeAll(async () => {
  await pullBusybox(client)
  await client.image('pullImage', {image: {image: lab().staticApp}})
  const manifest = join(work, 'app.yaml')
  writeFileSync(
    manifest,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'app', namespace},
      spec: {terminationGracePeriodSeconds: 1, containers: [{name: 'main', image: lab().staticApp}]},
    }),
  )
  const run = await podctl(['run', '-f', manifest], {env})
  expect(run.code).toBe(0)
}, 120_000)

afterAll(async () => {
  await podctl(['kill', '-n', namespace, '--all', '--force'], {env})
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('debug POD', () => {
  it("lists the target's processes from a debug container in its PID namespace, and removes the container", async () => {
    const result = await podctl(['debug', '-n', namespace, 'app', '--target', 'main', '--image', image, '--', 'ps', '-o', 'pid,args'], {
      env,
    })
    expect(result).toMatchObject({code: 0, stderr: ''})
    const lines = result.stdout.trim().split('\n')
    // The app is the namespace's first process; ps is the debug container's own.
    expect(lines[0]).toMatch(/^PID\s+COMMAND$/)
    expect(lines).toContainEqual(expect.stringMatching(/^\s*1\s+\/app$/))
    expect(lines.at(-1)).toMatch(/^\s*\d+\s+ps -o pid,args$/)
    expect(await containersIn()).toEqual([{name: 'main', state: 'CONTAINER_RUNNING', pod: 'app'}])
    expect(readdirSync(linksDir).filter((link) => link.includes('debugger'))).toEqual([])
  }, 120_000)

  it("passes the command's exit code through, with its stderr, and keeps the container with --keep", async () => {
    const args = ['debug', '-n', namespace, 'app', '--image', image, '--container', 'kept', '--keep']
    const result = await podctl([...args, '--', 'sh', '-c', 'echo out; echo err >&2; exit 7'], {env})
    expect(result.code).toBe(7)
    expect(result.stdout).toBe('out\n')
    expect(result.stderr).toMatch(
      /^err\nDebug container [\da-f]{13} of pod app_debug-[\da-f]+ kept; remove it with: podctl rm -f [\da-f]{13}\n$/,
    )
    expect(await containersIn()).toEqual([
      {name: 'kept', state: 'CONTAINER_EXITED', pod: 'app'},
      {name: 'main', state: 'CONTAINER_RUNNING', pod: 'app'},
    ])
    const id = /rm -f ([\da-f]+)/.exec(result.stderr)![1]
    expect(await podctl(['rm', '-f', id], {env})).toMatchObject({code: 0})
  }, 120_000)

  it('refuses an unknown pod (exit 5) and an unknown target (exit 5) before creating anything', async () => {
    const pod = await podctl(['debug', '-n', namespace, 'nothere', '--image', image, '--', 'true'], {env})
    expect(pod.code).toBe(5)
    expect(pod.stderr).toMatch(/nothere/)
    const target = await podctl(['debug', '-n', namespace, 'app', '--target', 'ghost', '--image', image, '--', 'true'], {env})
    expect(target).toMatchObject({code: 5, stderr: `Error: --target ghost: pod app_${namespace} has no container "ghost"; it has main\n`})
    expect(await containersIn()).toEqual([{name: 'main', state: 'CONTAINER_RUNNING', pod: 'app'}])
  }, 60_000)
})

/**
 * CRI-O refuses to bind the host's / into a container unless / is a shared or slave mount (systemd makes
 * it shared; some VMs, like this lab's, leave it private): there `debug node` fails with CRI-O's reason.
 */
const nodeRootRefused = onCrio() && !/^\S+ \S+ \S+ \S+ \/ [^-]*(shared|master):/m.test(readFileSync('/proc/self/mountinfo', 'utf8'))

describe.skipIf(nodeRootRefused)('debug node', () => {
  it("reads the host's files at /host, and removes its pod", async () => {
    const result = await podctl(['debug', '-n', namespace, 'node', '--image', image, '--', 'cat', '/host/etc/hostname'], {env})
    expect(result).toMatchObject({code: 0, stdout: readFileSync('/etc/hostname', 'utf8'), stderr: ''})
    expect(result.stdout.trim()).toBe(hostname())
    expect(await podNamesIn()).toEqual(['app'])
  }, 120_000)

  it("runs in the host's PID namespace and passes the exit code through", async () => {
    const script = 'cat /proc/1/cmdline; exit 4'
    const result = await podctl(['debug', '-n', namespace, 'node', '--image', image, '--', 'sh', '-c', script], {env})
    // Its pid 1 is the host's init, not a container's.
    expect(result).toMatchObject({code: 4, stdout: readFileSync('/proc/1/cmdline', 'utf8'), stderr: ''})
    expect(await podNamesIn()).toEqual(['app'])
  }, 120_000)
})

describe('nothing left behind', () => {
  it.skipIf(nodeRootRefused)(
    'removes the debug container and the debug pod of SIGKILLed sessions at podctl gc, and nothing else',
    async () => {
      const inPod = session(
        ['debug', '-n', namespace, 'app', '--target', 'main', '--image', image, '--', 'sleep', '3600'],
        'debug container',
        inAppContainer,
      )
      const onNode = session(['debug', '-n', namespace, 'node', '--image', image, '--', 'sleep', '3600'], 'debug pod', (c) =>
        c.pod.startsWith('node-debugger-'),
      )
      await Promise.all([inPod.kill(), onNode.kill()])
      // Killed sessions leave their container and pod running.
      expect((await containersIn()).filter((c) => c.state === 'CONTAINER_RUNNING').length).toBe(3)
      expect((await podNamesIn()).length).toBe(2)

      const gc = await podctl(['gc', '-n', namespace, '--image-gc-high-threshold', '100'], {env})
      expect(gc.code).toBe(0)
      const whose = String.raw`its session, pid \d+ \(podctl debug app --target main\)`
      const container = String.raw`debugger-\w{5} \([\da-f]{13}\) of pod app_${namespace}: ${whose}`
      expect(gc.stdout).toMatch(new RegExp(`^removed debug container ${container}, is gone$`, 'm'))
      const pod = String.raw`node-debugger-[\w-]+_${namespace}: its session, pid \d+ \(podctl debug node\)`
      expect(gc.stdout).toMatch(new RegExp(`^removed debug pod ${pod}, is gone$`, 'm'))
      expect(await containersIn()).toEqual([{name: 'main', state: 'CONTAINER_RUNNING', pod: 'app'}])
      expect(await podNamesIn()).toEqual(['app'])
      expect(readdirSync(lab().logRoot).filter((dir) => dir.startsWith(`${namespace}_node-debugger-`))).toEqual([])
      expect(readdirSync(linksDir).filter((link) => link.includes('debugger'))).toEqual([])
    },
    240_000,
  )

  it("removes a SIGKILLed session's debug container at the next podctl debug, and leaves a live session's", async () => {
    const killed = session(
      ['debug', '-n', namespace, 'app', '--image', image, '--container', 'killed', '--', 'sleep', '3600'],
      'killed',
      (c) => c.name === 'killed',
    )
    await killed.kill()
    const live = session(
      ['debug', '-n', namespace, 'app', '--image', image, '--container', 'live', '--', 'sleep', '3600'],
      'live',
      (c) => c.name === 'live',
    )
    await until('the live session to remove the killed one', async () => !(await containersIn()).some((c) => c.name === 'killed'), {
      timeoutMs: 60_000,
      pollMs: 200,
    })
    const next = await podctl(['debug', '-n', namespace, 'app', '--image', image, '--', 'true'], {env})
    expect(next).toMatchObject({code: 0, stdout: '', stderr: ''})
    expect((await containersIn()).map((c) => c.name)).toEqual(['live', 'main'])
    await live.kill()
    expect(await podctl(['gc', '-n', namespace, '--image-gc-high-threshold', '100'], {env})).toMatchObject({code: 0})
    expect(await containersIn()).toEqual([{name: 'main', state: 'CONTAINER_RUNNING', pod: 'app'}])
  }, 240_000)

  it('removes the debug container when its reader closes the pipe (| head -1), and exits 0 quietly', async () => {
    const writer = ['sh', '-c', 'while :; do echo line; sleep 0.1; done']
    const args = ['debug', '-n', namespace, 'app', '--image', image, '--container', 'piped', '--', ...writer]
    // The reader takes the first chunk and closes its end, as head -1 does.
    const result = await podctl(args, {
      env,
      timeoutMs: 60_000,
      onSpawn: (child) => child.stdout!.once('data', () => child.stdout!.destroy()),
    })
    expect(result).toMatchObject({code: 0, stderr: ''})
    expect(await containersIn()).toEqual([{name: 'main', state: 'CONTAINER_RUNNING', pod: 'app'}])
  }, 120_000)

  it('removes the debug container on SIGINT (Ctrl-C) with exit 130', async () => {
    let child: ChildProcess | undefined
    const args = ['debug', '-n', namespace, 'app', '--image', image, '--container', 'interrupted', '--', 'sleep', '3600']
    const done = podctl(args, {env, onSpawn: (spawned) => (child = spawned)})
    await until(
      'the debug container to run',
      async () => (await containersIn()).some((c) => c.name === 'interrupted' && c.state === 'CONTAINER_RUNNING'),
      {
        timeoutMs: 60_000,
        pollMs: 200,
      },
    )
    child!.kill('SIGINT')
    const result = await done
    expect(result.code).toBe(130)
    expect(await containersIn()).toEqual([{name: 'main', state: 'CONTAINER_RUNNING', pod: 'app'}])
  }, 120_000)
})
