import type {ChildProcess} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {describe, expect, it} from 'vitest'

import {PodSandboxState} from '../../src/generated/runtime/v1/api.js'
import {PodLabel} from '../../src/lib/kube/labels.js'
import {startKubeletStandIn} from '../support/kubelet-stand-in.js'
import {lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl, type RunResult} from '../support/podctl.js'
import {until} from '../support/until.js'

/**
 * A node with a kubelet on podctl's runtime: the kubelet kills every pod it did not start within ~2 s,
 * so podctl refuses to start one beside it (exit 17), says which kubelet and why, and creates nothing;
 * --force goes on; a supervisor stops changing pods while a kubelet owns the runtime. The kubelet is a
 * stand-in process named `kubelet` that shows each signal podctl reads (test/support/kubelet-stand-in.mjs).
 */
const client = labClient()
const namespace = uniqueNamespace('kubelet')
const work = mkdtempSync(join(tmpdir(), 'podctl-kubelet-guard-'))
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
  PODCTL_BACKOFF_BASE_MS: '1000',
  PODCTL_KUBELET_ROOT_DIR: join(work, 'no-kubelet'),
})
const socket = lab().endpoint.replace(/^unix:\/\//, '')

function manifest(name: string): string {
  const path = join(work, `${name}.yaml`)
  writeFileSync(
    path,
    `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: ${lab().busybox}
    command: [sleep, "3600"]
`,
  )
  return path
}

async function readySandboxes(name: string): Promise<string[]> {
  const {items} = await client.runtime('listPodSandbox', {
    filter: {labelSelector: {[PodLabel.namespace]: namespace, [PodLabel.name]: name}, state: {state: PodSandboxState.SANDBOX_READY}},
  })
  return items.map((sandbox) => sandbox.id)
}

/** A podctl that runs until told to stop (sync --watch), with its stdout as it comes. */
function background(args: string[]): {output: () => string; stop: () => Promise<RunResult>} {
  let child: ChildProcess | undefined
  let stdout = ''
  const done = podctl(args, {
    env,
    timeoutMs: 100_000,
    onSpawn(spawned) {
      child = spawned
      spawned.stdout?.on('data', (chunk) => (stdout += chunk))
    },
  })
  return {
    output: () => stdout,
    async stop() {
      child?.kill('SIGINT')
      return done
    },
  }
}

useLabNamespace(client, namespace, work)

describe('beside a kubelet that uses the runtime', () => {
  it('run refuses with exit 17, names the kubelet connected to the socket, and creates nothing; pods works as before', async () => {
    const kubelet = await startKubeletStandIn(() => ['--connect', socket, '--container-runtime-endpoint', 'unix:///run/elsewhere.sock'])
    try {
      const run = await podctl(['run', '-f', manifest('refused')], {env})
      expect(run.code, run.stderr).toBe(17)
      expect(run.stderr.trim()).toBe(
        `Error: kubelet pid ${kubelet.pid} uses the runtime at ${lab().endpoint} (it holds a connection to the runtime socket): ` +
          'it kills every pod it did not start within about 2 s, so nothing was created; ' +
          'hand the pod to the kubelet with --static, or run anyway with --force',
      )
      expect(await sandboxesIn(client, namespace)).toEqual([])
      const pods = await podctl(['pods', '-n', namespace, '-o', 'json'], {env})
      expect(pods.code).toBe(0)
      expect(pods.stderr).toBe('')
      expect(JSON.parse(pods.stdout)).toEqual({items: []})
    } finally {
      await kubelet.stop()
    }
  })

  it('refuses beside a kubelet its --config points at the runtime (run, runp, start, sync --watch); --force runs', async () => {
    const kubelet = await startKubeletStandIn((dir) => {
      const config = join(dir, 'kubelet.yaml')
      writeFileSync(
        config,
        `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: ${lab().endpoint}\n`,
      )
      return ['--config', config, '--root-dir', join(dir, 'root')]
    })
    try {
      const because =
        `kubelet pid ${kubelet.pid} uses the runtime at ${lab().endpoint} ` +
        `(containerRuntimeEndpoint in its --config ${kubelet.dir}/kubelet.yaml)`
      for (const args of [
        ['run', '-f', manifest('refused')],
        ['runp', manifest('refused')],
        ['start', 'nothing/c', '-n', namespace],
        ['sync', '--watch', '--all', '-n', namespace],
      ]) {
        const refused = await podctl(args, {env})
        expect(refused.code, `${args.join(' ')}: ${refused.stderr}`).toBe(17)
        expect(refused.stderr).toContain(because)
      }

      expect(await sandboxesIn(client, namespace)).toEqual([])
      const forced = await podctl(['run', '-f', manifest('forced'), '--force', '-q'], {env})
      expect(forced.code, forced.stderr).toBe(0)
      expect(forced.stderr).toContain(`Warning: --force: kubelet pid ${kubelet.pid} uses this runtime and will kill the pods podctl starts`)
      expect(await readySandboxes('forced')).toHaveLength(1)
    } finally {
      await kubelet.stop()
    }

    const after = await podctl(['run', '-f', manifest('after'), '-q'], {env})
    expect(after.code, after.stderr).toBe(0)
    expect(after.stderr).toBe('')
    const kill = await podctl(['kill', 'forced', 'after', '-n', namespace, '--force'], {env})
    expect(kill.code, kill.stderr).toBe(0)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})

describe('sync --watch and a kubelet that comes later', () => {
  it('stops recreating pods while the kubelet owns the runtime, says so once, and syncs again once it is gone', async () => {
    expect((await podctl(['run', '-f', manifest('kept'), '-q'], {env})).code).toBe(0)
    const [first] = await readySandboxes('kept')
    const watch = background(['sync', '--watch', '--all', '-n', namespace])
    try {
      await until('the watch to start', () => watch.output().includes('Watching pods'), {timeoutMs: 20_000})
      const kubelet = await startKubeletStandIn(() => ['--container-runtime-endpoint', socket])
      try {
        await until('the watch to see the kubelet', () => watch.output().includes('KubeletOwnsRuntime'), {timeoutMs: 20_000})
        // What the kubelet does to a pod it did not start: stop it.
        await client.runtime('stopPodSandbox', {podSandboxId: first})
        // The watch lists every second: three listings and no new sandbox.
        await sleep(3500)
        expect(await readySandboxes('kept')).toEqual([])
      } finally {
        await kubelet.stop()
      }

      await until('the watch to see the kubelet gone', () => watch.output().includes('KubeletGone'), {timeoutMs: 20_000})
      const second = await until('the pod recreated', async () => (await readySandboxes('kept'))[0], {timeoutMs: 30_000})
      expect(second).not.toBe(first)
    } finally {
      const stopped = await watch.stop()
      expect(stopped.code, stopped.stderr).toBe(0)
      const said = stopped.stdout.split('\n').filter((line) => line.includes('KubeletOwnsRuntime'))
      expect(said, stopped.stdout).toHaveLength(1)
      expect(said[0]).toContain('podctl stops starting, restarting and recreating pods and keeps watching')
    }

    expect((await podctl(['kill', 'kept', '-n', namespace, '--force'], {env})).code).toBe(0)
  })

  it('gives up on a pod whose sandbox is stopped from outside again and again (a kubelet it cannot see)', async () => {
    expect((await podctl(['run', '-f', manifest('fought'), '-q'], {env})).code).toBe(0)
    const watch = background(['sync', '--watch', '--all', '-n', namespace])
    try {
      await until('the watch to start', () => watch.output().includes('Watching pods'), {timeoutMs: 20_000})
      // What the watch said, when it did not do what was waited for.
      const withOutput = (error: Error) => {
        throw new Error(`${error.message}:\n${watch.output()}`)
      }

      for (let round = 0; round < 3; round++) {
        const ready = await until(`sandbox ${round + 1}`, async () => (await readySandboxes('fought'))[0], {timeoutMs: 30_000})
        await client.runtime('stopPodSandbox', {podSandboxId: ready})
        if (round < 2)
          await until(`recreation ${round + 1}`, async () => (await readySandboxes('fought')).some((id) => id !== ready), {
            timeoutMs: 30_000,
          }).catch(withOutput)
      }

      await until('the watch to give up', () => watch.output().includes('StoppedOutside'), {timeoutMs: 30_000}).catch(withOutput)
      // Given up at the third: no fourth sandbox, however many listings pass.
      await sleep(3000)
      expect(await readySandboxes('fought')).toEqual([])
    } finally {
      const stopped = await watch.stop()
      expect(stopped.code, stopped.stderr).toBe(0)
    }

    expect((await podctl(['kill', 'fought', '-n', namespace, '--force'], {env})).code).toBe(0)
  })
})
