import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {PodLabel} from '../../src/lib/kube/labels.js'
import {startAgent} from '../support/agent.js'
import {BIN, podctl} from '../support/podctl.js'
import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {splitExecStart, unitValue} from '../support/systemd-exec.js'
import {until} from '../support/until.js'

/**
 * podctl as a node agent, against the lab: `sync --watch -f DIR` runs what is dropped into the
 * directory, applies an edit by the container hash, leaves a broken file's pod running and says so
 * once, kills the pod of a removed file; `podctl unit -f DIR` gives a unit systemd accepts whose
 * ExecStart is that agent; a pod whose sandbox is removed behind podctl's back comes back with
 * attempt + 1 and the data of its disk emptyDir, under the supervisor and under a one-shot sync.
 */
const client = labClient()
const namespace = uniqueNamespace('watch')
const work = mkdtempSync(join(tmpdir(), 'podctl-watch-'))
const podDirRoot = join(work, 'pods')
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: podDirRoot,
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
  PODCTL_CLAIMS_ROOT: join(work, 'claims'),
})
const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0

useLabNamespace(client, namespace, work)

/** The agent under test, as its unit or a user starts it. */
const start = (argv: string[], agentEnv: Record<string, string | undefined> = env) => startAgent(argv, agentEnv)

interface Listed {
  id: string
  state: string
  podSandboxId: string
  metadata: {name: string; attempt: number}
}

async function containers(pod: string): Promise<Listed[]> {
  const ps = await podctl(['ps', '-a', '-n', namespace, '--pod', pod, '-o', 'json'], {env})
  // Not there yet (exit 5, not found) is no container.
  if (ps.code === 5) return []
  expect(ps.code, ps.stderr).toBe(0)
  return JSON.parse(ps.stdout).containers
}

async function running(pod: string): Promise<Listed | undefined> {
  return (await containers(pod)).find((container) => container.state === 'CONTAINER_RUNNING')
}

async function sandboxesOf(pod: string) {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.namespace]: namespace}}})
  return items.filter((sandbox) => sandbox.metadata?.name === pod)
}

async function exec(pod: string, script: string): Promise<string> {
  const result = await podctl(['exec', '-n', namespace, `${pod}/app`, '--', 'sh', '-c', script], {env})
  expect(result.code, result.stderr).toBe(0)
  return result.stdout
}

function podYaml(name: string, command: string, extra = ''): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sh, -c, '${command}']
${extra}`
}

const LOOP = 'trap "exit 0" TERM; while true; do sleep 1; done'
const wait = {timeoutMs: 60_000, pollMs: 200}

describe('a watched manifest directory', () => {
  it.skipIf(!hasAnalyze)(
    'unit -f DIR verifies; its ExecStart runs, applies, keeps a broken file once and kills a removed file’s pod',
    async () => {
      const manifests = join(work, 'manifests')
      mkdirSync(manifests, {mode: 0o755})
      const printed = await podctl(['unit', '-f', manifests], {env})
      expect(printed.code, printed.stderr).toBe(0)
      const unitFile = join(work, 'podctl.service')
      writeFileSync(unitFile, printed.stdout)
      const verify = spawnSync('systemd-analyze', ['verify', unitFile], {encoding: 'utf8'})
      expect({status: verify.status, stdout: verify.stdout, stderr: verify.stderr}).toEqual({status: 0, stdout: '', stderr: ''})
      const argv = splitExecStart(unitValue(printed.stdout, 'ExecStart')!)
      expect(argv.slice(2, 6)).toEqual(['sync', '--watch', '-f', manifests])

      // As systemd starts it: the unit's command line, no pod roots from the environment but the lab's test ones.
      const agent = start(argv, {
        PATH: process.env.PATH,
        PODCTL_CONTAINER_LOGS_DIR: env.PODCTL_CONTAINER_LOGS_DIR,
        PODCTL_CLAIMS_ROOT: env.PODCTL_CLAIMS_ROOT,
        // No node-wide collection beside the other test files (support/lab.ts labEnv).
        PODCTL_GC_PERIOD: env.PODCTL_GC_PERIOD,
      })
      try {
        // Dropped in with a ConfigMap of its own file beside it.
        const config = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting, namespace: ${namespace}}\ndata: {text: hello}\n`
        writeFileSync(join(manifests, 'greeting.yaml'), config, {mode: 0o644})
        const env = `    env: [{name: GREETING, valueFrom: {configMapKeyRef: {name: greeting, key: text}}}]\n`
        writeFileSync(join(manifests, 'web.yaml'), podYaml('web', LOOP) + env, {mode: 0o644})
        const first = await until('the dropped manifest to run', () => running('web'), wait)
        const [{metadata}] = await sandboxesOf('web')
        expect(await exec('web', 'echo $GREETING')).toBe('hello\n')

        // An edit recreates the changed container in the same sandbox.
        writeFileSync(join(manifests, 'web.yaml'), podYaml('web', `echo edited; ${LOOP}`) + env, {mode: 0o644})
        const edited = await until(
          'the edited container to run',
          async () => {
            const now = await running('web')
            return now && now.id !== first.id ? now : undefined
          },
          wait,
        )
        expect(edited).toMatchObject({metadata: {name: 'app', attempt: 1}, podSandboxId: first.podSandboxId})

        // Broken: said once, the pod left running; a later file still runs (the directory is still watched).
        writeFileSync(join(manifests, 'web.yaml'), 'kind: Pod\nspec: [\n', {mode: 0o644})
        await until('the broken file to be reported', () => agent.output().includes('ManifestInvalid'), wait)
        writeFileSync(join(manifests, 'later.yaml'), podYaml('later', LOOP), {mode: 0o644})
        await until('the later manifest to run', () => running('later'), wait)
        expect(agent.output().split('ManifestInvalid').length - 1, agent.output()).toBe(1)
        expect((await running('web'))?.id).toBe(edited.id)

        // Removed: the pod is killed and its directory goes.
        rmSync(join(manifests, 'web.yaml'))
        await until('the removed file’s pod to go', async () => ((await sandboxesOf('web')).length === 0 ? true : undefined), wait)
        // The kill removes the sandbox first, then the pod's directories: waited for, not raced (seen in CI).
        const podDir = join(podDirRoot, metadata!.uid)
        const logDir = join(work, 'logs', `${namespace}_web_${metadata!.uid}`)
        await until('its directories to go', () => !existsSync(podDir) && !existsSync(logDir), wait)
        expect((await running('later'))?.state).toBe('CONTAINER_RUNNING')
      } finally {
        expect(await agent.stop(), agent.output()).toBe(0)
      }

      expect(agent.output()).toContain('Stopped watching; the pods keep running')
      expect((await podctl(['kill', 'later', '-n', namespace], {env})).code).toBe(0)
    },
    180_000,
  )

  it('kills, at its next start, the pod of a file removed while it was not running', async () => {
    const manifests = join(work, 'offline')
    mkdirSync(manifests, {mode: 0o755})
    writeFileSync(join(manifests, 'gone.yaml'), podYaml('gone', LOOP), {mode: 0o644})
    writeFileSync(join(manifests, 'stays.yaml'), podYaml('stays', LOOP), {mode: 0o644})
    const argv = ['node', BIN, 'sync', '--watch', '-f', manifests]
    const first = start(argv)
    let stays: Listed | undefined
    try {
      await until('both pods to run', async () => (await running('gone')) && (stays = await running('stays')), wait)
    } finally {
      expect(await first.stop(), first.output()).toBe(0)
    }

    rmSync(join(manifests, 'gone.yaml'))
    const second = start(argv)
    try {
      await until('the pod of the removed file to go', async () => ((await sandboxesOf('gone')).length === 0 ? true : undefined), wait)
      expect(second.output()).toContain('no longer has the pod: killing it')
      // The other pod was left as it ran: the same container, not restarted.
      expect((await running('stays'))?.id).toBe(stays!.id)
    } finally {
      expect(await second.stop(), second.output()).toBe(0)
    }

    expect((await podctl(['kill', 'stays', '-n', namespace], {env})).code).toBe(0)
  }, 120_000)

  it('a directory made others-writable or moved away, an emptied, a 40 MB or an .env file: pods left running, said once', async () => {
    const manifests = join(work, 'untrusted')
    mkdirSync(manifests, {mode: 0o755})
    const names = ['one', 'two', 'three']
    for (const name of names) writeFileSync(join(manifests, `${name}.yaml`), podYaml(name, LOOP), {mode: 0o644})
    const agent = start(['node', BIN, 'sync', '--watch', '-f', manifests])
    const said = (text: string) => agent.output().split(text).length - 1
    try {
      const before = await until(
        'the three pods to run',
        async () => {
          const found = await Promise.all(names.map((name) => running(name)))
          return found.every(Boolean) ? found.map((container) => container!.id) : undefined
        },
        wait,
      )

      spawnSync('chmod', ['0777', manifests])
      await until('the open directory to be said', () => said('is writable by users other than its owner') > 0, wait)
      spawnSync('chmod', ['0755', manifests])
      renameSync(manifests, `${manifests}.away`)
      await until('the move to be said', () => said('moved away or removed') > 0, wait)
      renameSync(`${manifests}.away`, manifests)
      // An editor's truncate, left so; a 40 MB ConfigMap value; an .env saved as YAML.
      truncateSync(join(manifests, 'one.yaml'), 0)
      writeFileSync(
        join(manifests, 'big.yaml'),
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {v: "${'x'.repeat(40 * 1024 * 1024)}"}\n`,
      )
      writeFileSync(join(manifests, 'secrets.yaml'), 'DB_PASSWORD=hunter2-s3cr3t\n', {mode: 0o600})
      await until(
        'the three files to be said',
        () => said('is empty') + said('larger than 3 MiB') + said('is not a Kubernetes manifest') >= 3,
        wait,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; the supervisor said:\n${agent.output()}`)
      })
      // Still responsive: a new file's pod runs within seconds.
      const dropped = Date.now()
      writeFileSync(join(manifests, 'later.yaml'), podYaml('later', LOOP), {mode: 0o644})
      await until('the new file’s pod to run', () => running('later'), wait)
      const seconds = (Date.now() - dropped) / 1000
      expect(seconds, agent.output()).toBeLessThan(10)
      const peakKb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${agent.pid}/status`, 'utf8'))![1])
      expect(peakKb, 'peak memory of the supervisor').toBeLessThan(400 * 1024)

      expect(await Promise.all(names.map(async (name) => (await running(name))?.id))).toEqual(before)
      for (const text of ['is writable by users other than its owner', 'moved away or removed', 'is empty', 'larger than 3 MiB']) {
        expect(said(text), text).toBe(1)
      }

      expect(agent.output()).not.toContain('hunter2')
      expect(agent.output()).not.toMatch(/no longer has the pod|Killing/)
    } finally {
      expect(await agent.stop(), agent.output()).toBe(0)
    }

    expect((await podctl(['kill', ...names, 'later', '-n', namespace], {env})).code).toBe(0)
  }, 180_000)

  it('refuses a directory others may write, naming it and the fix', async () => {
    const open = join(work, 'open')
    mkdirSync(open)
    spawnSync('chmod', ['0777', open])
    const result = await podctl(['sync', '--watch', '-f', open], {env})
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`-f ${open} is writable by users other than its owner (mode 0777); fix: chmod go-w ${open}`)
  })
})

describe('a pod the runtime lost', () => {
  const manifest = (name: string) =>
    podYaml(
      name,
      `test -f /data/f || echo kept > /data/f; ${LOOP}`,
      `    volumeMounts: [{name: data, mountPath: /data}]\n  volumes: [{name: data, emptyDir: {}}]\n`,
    )

  async function runPod(name: string): Promise<string> {
    const file = join(work, `${name}.yaml`)
    writeFileSync(file, manifest(name))
    const run = await podctl(['run', '-f', file, '-q', '-o', 'json'], {env})
    expect(run.code, run.stderr).toBe(0)
    await until('the pod to write its file', async () => (await exec(name, 'cat /data/f 2>/dev/null || true')) === 'kept\n', wait)
    return JSON.parse(run.stdout).pods[0].uid
  }

  async function removeBehindPodctl(name: string): Promise<void> {
    for (const sandbox of await sandboxesOf(name)) {
      await client.runtime('stopPodSandbox', {podSandboxId: sandbox.id})
      await client.runtime('removePodSandbox', {podSandboxId: sandbox.id})
    }
  }

  it('comes back under sync --watch --all with attempt + 1 and its disk emptyDir', async () => {
    const uid = await runPod('lost')
    const agent = start(['node', BIN, 'sync', '--watch', '--all', '-n', namespace])
    try {
      await until('the supervisor to start', () => agent.output().includes('Supervising'), wait)
      // Lost at once, as far as the supervisor can tell: removing a sandbox behind podctl takes two calls,
      // and a supervisor that lists between them sees a stopped sandbox (SandboxChanged, the kubelet's
      // recreation), not a lost pod. It is paused while they run, so what it lists next has no sandbox.
      process.kill(agent.pid, 'SIGSTOP')
      try {
        await removeBehindPodctl('lost')
      } finally {
        process.kill(agent.pid, 'SIGCONT')
      }

      const back = await until(
        'the lost pod to come back',
        async () => {
          const [sandbox] = await sandboxesOf('lost')
          return sandbox?.state === 'SANDBOX_READY' && (await running('lost')) ? sandbox : undefined
        },
        wait,
      )
      expect(back.metadata).toMatchObject({uid, attempt: 1})
      expect(await exec('lost', 'cat /data/f')).toBe('kept\n')
      expect(agent.output()).toContain('SandboxMissing')
      expect(agent.output()).not.toContain('SandboxChanged')
    } finally {
      expect(await agent.stop(), agent.output()).toBe(0)
    }
  }, 120_000)

  it('comes back under a one-shot sync too; only kill removes it for good', async () => {
    const uid = await runPod('once')
    await removeBehindPodctl('once')
    const sync = await podctl(['sync', 'once', '-n', namespace, '-q', '-o', 'json'], {env})
    expect(sync.code, sync.stderr).toBe(0)
    expect(JSON.parse(sync.stdout).pods[0]).toMatchObject({
      pod: 'once',
      uid,
      did: expect.arrayContaining(['recreated the pod sandbox (attempt 1)']),
    })
    expect(await exec('once', 'cat /data/f')).toBe('kept\n')
    expect((await podctl(['kill', 'once', '-n', namespace], {env})).code).toBe(0)
    expect(existsSync(join(podDirRoot, uid))).toBe(false)
    const again = await podctl(['sync', '--all', '-n', namespace, '-q', '-o', 'json'], {env})
    expect(JSON.parse(again.stdout).pods.map((pod: {pod: string}) => pod.pod)).not.toContain('once')
  }, 120_000)
})
