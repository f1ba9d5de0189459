import {existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {CriClient} from '../../src/lib/cri/client.js'
import {PodLabel} from '../../src/lib/kube/labels.js'
import {startAgent} from '../support/agent.js'
import {startFreshRuntime} from '../support/fresh-runtime.js'
import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {BIN, endpointEnv, podctl} from '../support/podctl.js'
import {until} from '../support/until.js'

/**
 * One desired state, pod workers as the only way in (issue 32), against the lab: a Deployment's
 * replicas keep their names however often the file is run, synced or re-read, and a changed template
 * replaces them; a watched file's removal while the runtime is frozen is carried out once it answers.
 */
const client = labClient()
const namespace = uniqueNamespace('desired')
const work = mkdtempSync(join(tmpdir(), 'podctl-desired-'))
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
})
const wait = {timeoutMs: 60_000, pollMs: 200}

useLabNamespace(client, namespace, work)

function deployment(greeting: string, comment = ''): string {
  return `${comment}apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${namespace}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: ${lab().busybox}
        command: [sh, -c, 'echo ${greeting}; exec sleep 3600']
`
}

/** The ready sandboxes of the namespace: pod name → sandbox ID. */
async function pods(): Promise<Map<string, string>> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.namespace]: namespace}}})
  const ready = items.filter((sandbox) => sandbox.state === 'SANDBOX_READY')
  return new Map(ready.map((sandbox) => [sandbox.metadata!.name, sandbox.id]))
}

describe('a Deployment is one desired state', () => {
  it('run twice and synced twice is the same 2 pods; a changed template replaces them; run of the old one is refused', async () => {
    const file = join(work, 'deploy.yaml')
    writeFileSync(file, deployment('one'))
    const first = await podctl(['run', '-f', file, '-q', '-o', 'json'], {env})
    expect(first.code, first.stderr).toBe(0)
    const started = await pods()
    expect(started.size).toBe(2)

    const again = await podctl(['run', '-f', file, '-q'], {env})
    expect(again.code, again.stderr).toBe(8)
    expect(again.stderr).toMatch(/already exists in namespace/)
    for (const round of [1, 2]) {
      const sync = await podctl(['sync', '-f', file, '-q', '-o', 'json'], {env})
      expect(sync.code, `sync ${round}: ${sync.stderr}`).toBe(0)
      expect(JSON.parse(sync.stdout).pods.map((pod: {did: string[]}) => pod.did)).toEqual([[], []])
    }

    expect(await pods()).toEqual(started)

    writeFileSync(file, deployment('two'))
    const rollout = await podctl(['sync', '-f', file, '-q', '-o', 'json'], {env})
    expect(rollout.code, rollout.stderr).toBe(0)
    const replaced = await pods()
    expect(replaced.size).toBe(2)
    expect([...replaced.keys()].filter((name) => started.has(name))).toEqual([])
    // Each new replica, then the pod it replaces: one by one.
    const order = JSON.parse(rollout.stdout).pods.map((pod: {pod: string; terminated?: boolean}) => (pod.terminated ? 'old' : 'new'))
    expect(order).toEqual(['new', 'old', 'new', 'old'])

    writeFileSync(file, deployment('one'))
    const old = await podctl(['run', '-f', file, '-q'], {env})
    expect(old.code).toBe(8)
    expect(old.stderr).toMatch(
      /^Error: Deployment web already runs pods of another template \(web-.+\); apply the change with: podctl sync -f/m,
    )
    expect(await pods()).toEqual(replaced)
    writeFileSync(file, deployment('two'))
    expect((await podctl(['kill', '-f', file], {env})).code).toBe(0)
  }, 180_000)

  it('in a watched directory a comment changes nothing and a changed template replaces the pods', async () => {
    const dir = join(work, 'watched')
    mkdirSync(dir, {mode: 0o755})
    writeFileSync(join(dir, 'web.yaml'), deployment('one'))
    const agent = startAgent(['node', BIN, 'sync', '--watch', '-f', dir], env)
    try {
      const started = await until('two replicas', async () => ((await pods()).size === 2 ? pods() : undefined), wait)
      writeFileSync(join(dir, 'web.yaml'), deployment('one', '# a comment a user added\n'))
      // Twice the watcher's stability window and a listing: had anything been applied, it would show.
      await new Promise((resolve) => {
        setTimeout(resolve, 3000)
      })
      expect(await pods()).toEqual(started)
      expect(agent.output()).not.toMatch(/Removed|Applied/)

      writeFileSync(join(dir, 'web.yaml'), deployment('two'))
      const replaced = await until(
        'the new template to replace both pods',
        async () => {
          const now = await pods()
          return now.size === 2 && [...now.keys()].every((name) => !started.has(name)) ? now : undefined
        },
        wait,
      )
      expect(replaced.size).toBe(2)
      rmSync(join(dir, 'web.yaml'))
      await until('the pods to go', async () => (await pods()).size === 0, wait)
    } finally {
      expect(await agent.stop(), agent.output()).toBe(0)
    }
  }, 180_000)
})

describe('a kill is never lost', () => {
  /**
   * A watched file's pod runs on a containerd of its own; `freezeAt` says when to freeze it, then the file is
   * removed and, once the supervisor has said what it met (`failed`), containerd thawed: the pod and its
   * directory (record, termination, volumes) must be gone soon after.
   */
  async function removedWhileFrozen(freezeAt: RegExp, failed: RegExp): Promise<string> {
    const runtime = await startFreshRuntime()
    const fresh = new CriClient({runtimeEndpoint: runtime.endpoint, callTimeoutMs: 60_000})
    const dir = mkdtempSync(join(tmpdir(), 'podctl-frozen-'))
    const freshEnv = endpointEnv(runtime.endpoint, {
      PODCTL_GC_PERIOD: '0',
      PODCTL_POD_DIR_ROOT: join(dir, 'pods'),
      PODCTL_POD_LOGS_ROOT: join(dir, 'logs'),
      PODCTL_CONTAINER_LOGS_DIR: join(dir, 'links'),
    })
    const manifests = join(dir, 'manifests')
    mkdirSync(manifests, {mode: 0o755})
    writeFileSync(
      join(manifests, 'frozen.yaml'),
      `apiVersion: v1
kind: Pod
metadata: {name: frozen, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: ${lab().busybox}, command: [sleep, '3600']}
`,
    )
    const agent = startAgent(['node', BIN, 'sync', '--watch', '-f', manifests], freshEnv)
    const withOutput = (error: Error) => {
      throw new Error(`${error.message}:\n${agent.output()}`)
    }

    try {
      await until('the supervisor to reach the moment to freeze at', () => freezeAt.test(agent.output()), {...wait, pollMs: 5}).catch(
        withOutput,
      )
      runtime.freeze(true)
      rmSync(join(manifests, 'frozen.yaml'))
      // Longer than a call's deadline (10 s) and a rollback's budget (30 s): what runs meets a runtime that does not answer.
      await until('the supervisor to fail at it', () => failed.test(agent.output()), {timeoutMs: 60_000, pollMs: 200}).catch(withOutput)
      runtime.freeze(false)
      const thawed = Date.now()
      const gone = async () =>
        (await fresh.runtime('listPodSandbox', {})).items.length === 0 &&
        readdirSync(join(dir, 'pods')).filter((name) => !name.startsWith('.')).length === 0
      await until('the pod and its directory to be gone', gone, wait).catch(withOutput)
      expect(Date.now() - thawed, agent.output()).toBeLessThan(20_000)
      return agent.output()
    } finally {
      runtime.freeze(false)
      expect(await agent.stop(), agent.output()).toBe(0)
      fresh.close()
      await runtime.stop()
      rmSync(dir, {recursive: true, force: true})
      expect(existsSync(dir)).toBe(false)
    }
  }

  it('a watched file removed while containerd is frozen has its pod gone soon after containerd answers', async () => {
    // Frozen once the pod's run is over (Added): the removal itself meets the frozen runtime.
    const output = await removedWhileFrozen(/Normal +Added /, /FailedKill/)
    expect(output).toMatch(/its termination is recorded/)
  }, 180_000)

  it('frozen while the supervisor still starts the pod, the pod of the removed file is gone soon after containerd answers', async () => {
    // The run's last look meets the frozen runtime (it then rolls back) or, a moment later, the removal does.
    const output = await removedWhileFrozen(/Started container app/, /FailedSync|FailedKill/)
    // A rollback that cannot finish records the pod's termination: the supervisor finishes it, nobody has to.
    expect(output).not.toMatch(/left behind pod [^;]*; remove it with/)
  }, 180_000)
})
