/**
 * Issues 20 and 34 on the real runtime: podctl as crictl and the reference crictl v1.37.0, side by
 * side on the lab, print the same bytes for a pod and containers of this file's own namespace and
 * the busybox image (protojson's key spacing aside: it depends on the crictl binary). The reference
 * is PODCTL_REFERENCE_CRICTL, or the one the lab built (test/support/lab.ts referenceCrictl); without
 * one the file says it is skipped and why (test/commands/crictl-json.test.ts checks the same against
 * recorded outputs).
 */
import {execFile} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, rmdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {CriClient} from '../../src/lib/cri/client.js'
import {createContainer, ensureImage, waitExited} from '../support/inspect-fixtures.js'
import {
  cleanupNamespace,
  createSandbox,
  lab,
  labClient,
  referenceCrictl,
  sandboxConfig,
  sandboxesIn,
  uniqueNamespace,
} from '../support/lab.js'
import {oneSpaceAfterKeys} from '../support/crictl-fixtures.js'
import {podctl, ROOT} from '../support/podctl.js'

/** podctl as crictl: the one place that says how it is run. */
const PODCTL_AS_CRICTL = {entry: `${ROOT}bin/crictl`, env: {}}

const REFERENCE = referenceCrictl()
const SKIP_REASON =
  'skipped: no reference crictl v1.37.0 (set PODCTL_REFERENCE_CRICTL, or build it in the lab) to compare podctl as crictl with'

// Say why nothing ran, in the run's output and not only in a verbose report.
if (!REFERENCE) console.warn(`test/e2e/crictl-json.test.ts ${SKIP_REASON}`)

interface Output {
  code: number
  stdout: string
  stderr: string
}

describe.skipIf(!REFERENCE)('podctl as crictl prints the reference crictl v1.37.0 bytes on the lab', () => {
  let client: CriClient
  const ns = uniqueNamespace('e2e-crictl-json')
  const dir = mkdtempSync(join(tmpdir(), 'crictl-json-'))
  const config = join(dir, 'crictl.yaml')
  let podId = ''
  let appId = ''
  let jobId = ''
  let imageId = ''
  /** A pod with a cgroup parent: containerd 1.6 fails ListPodSandboxStats for a sandbox without one. */
  let statsPodId = ''
  const cgroupParent = `/podctl-e2e-${ns}`
  // Both read the same empty config and the lab's endpoint; times in inspect are local, so one zone.
  const env = {TZ: 'UTC', CONTAINER_RUNTIME_ENDPOINT: undefined, IMAGE_SERVICE_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
  const globals = () => ['--config', config, '-r', lab().endpoint, '-i', lab().endpoint, '-t', '30s']

  const reference = (args: string[]) =>
    new Promise<Output>((resolve) => {
      execFile(REFERENCE!, [...globals(), ...args], {env: {PATH: process.env.PATH, HOME: dir, TZ: 'UTC'}}, (error, stdout, stderr) =>
        resolve({code: error ? Number(error.code ?? 1) : 0, stdout, stderr}),
      )
    })
  const ours = async (args: string[]): Promise<Output> => {
    const result = await podctl([...globals(), ...args], {entry: PODCTL_AS_CRICTL.entry, env: {...env, ...PODCTL_AS_CRICTL.env}})
    return {code: result.code ?? -1, stdout: result.stdout, stderr: result.stderr}
  }

  /**
   * crictl, podctl, crictl again: when both crictl runs agree the runtime's answer held still, and
   * podctl's bytes must be theirs. Other helpers share the lab, so an answer that moved (image
   * filesystem usage after a pull) is asked again rather than compared.
   */
  async function expectSameBytes(args: string[], masked = (text: string) => text): Promise<void> {
    const mask = (text: string) => masked(oneSpaceAfterKeys(text))
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = await reference(args)
      const mine = await ours(args)
      const after = await reference(args)
      expect(before.code, before.stderr).toBe(0)
      if (mask(before.stdout) !== mask(after.stdout)) continue
      expect(mine.stderr).toBe('')
      expect(mine.code).toBe(0)
      expect(mask(mine.stdout)).toBe(mask(before.stdout))
      return
    }

    throw new Error(`crictl ${args.join(' ')}: the runtime's answer changed between every pair of runs; nothing compared`)
  }

  beforeAll(async () => {
    writeFileSync(config, '')
    client = labClient()
    imageId = await ensureImage(client, lab().busybox)
    podId = await createSandbox(client, {name: 'web', namespace: ns, labels: {app: 'demo'}})
    appId = await createContainer(client, {podId, name: 'app'})
    jobId = await createContainer(client, {podId, name: 'job', command: ['sh', '-c', 'exit 3']})
    await waitExited(client, jobId)
    const statsConfig = {...sandboxConfig({name: 'stats', namespace: ns}), linux: {cgroupParent}}
    statsPodId = (await client.runtime('runPodSandbox', {config: statsConfig, runtimeHandler: ''}, {timeoutMs: 120_000})).podSandboxId
  })

  afterAll(async () => {
    await cleanupNamespace(client, ns)
    expect(await sandboxesIn(client, ns)).toEqual([])
    client.close()
    // The runtime leaves the (empty) parent cgroup behind: remove it from every controller.
    for (const controller of existsSync('/sys/fs/cgroup') ? readdirSync('/sys/fs/cgroup') : []) {
      const path = join('/sys/fs/cgroup', controller, cgroupParent)
      if (existsSync(path)) rmdirSync(path)
    }

    rmSync(dir, {recursive: true, force: true})
  })

  it('pods -o json|yaml (this namespace)', async () => {
    await expectSameBytes(['pods', '--namespace', ns, '-o', 'json'])
    await expectSameBytes(['pods', '--namespace', ns, '-o', 'yaml'])
    await expectSameBytes(['pods', '--id', podId, '-o', 'json'])
  })

  it('ps -o json|yaml (this pod, running and all)', async () => {
    await expectSameBytes(['ps', '-p', podId, '-o', 'json'])
    await expectSameBytes(['ps', '-a', '-p', podId, '-o', 'json'])
    await expectSameBytes(['ps', '-a', '-p', podId, '-o', 'yaml'])
  })

  it('images -o json|yaml (the busybox image)', async () => {
    await expectSameBytes(['images', '-o', 'json', lab().busybox])
    await expectSameBytes(['images', '-o', 'yaml', lab().busybox])
  })

  it('inspect: a running and an exited container, -q, -o yaml', async () => {
    await expectSameBytes(['inspect', appId])
    await expectSameBytes(['inspect', jobId])
    await expectSameBytes(['inspect', '-q', appId])
    await expectSameBytes(['inspect', '-o', 'yaml', jobId])
  })

  it('inspectp and inspecti', async () => {
    await expectSameBytes(['inspectp', podId])
    await expectSameBytes(['inspectp', '-o', 'yaml', podId])
    await expectSameBytes(['inspecti', imageId])
  })

  it('info, info -q, imagefsinfo, version', async () => {
    await expectSameBytes(['version'])
    await expectSameBytes(['info'])
    await expectSameBytes(['info', '-q'])
    await expectSameBytes(['imagefsinfo'])
  })

  it('stats and statsp -o json: the same document, its numbers aside (they move on every call)', async () => {
    const numbers = (text: string) => text.replaceAll(/"\d+"/g, '"N"')
    await expectSameBytes(['stats', '-o', 'json', appId], numbers)
    await expectSameBytes(['statsp', '--id', statsPodId, '-o', 'json'], numbers)
  })
})

describe.skipIf(Boolean(REFERENCE))('podctl as crictl beside the reference crictl', () => {
  it.skip(SKIP_REASON, () => {})
})
