/**
 * killPod and the pod's log directory, against the in-process fake runtime: a pod podctl made,
 * removed for good, loses <root>/<namespace>_<name>_<uid>; a recreation (keepPodDirectory), --keep
 * and a caller that names no root (a rollback) leave it, and so does the kill of a pod another tool
 * made (named by the user: its logs are not podctl's, as crictl rmp leaves them).
 */
import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {killPod} from '../../../../src/lib/kubelet/kuberuntime/kill.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'

let fake: FakePodRuntime
const root = mkdtempSync(join(tmpdir(), 'podctl-kill-logs-'))
const logDirectory = join(root, 'ns_web_u1')

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

beforeEach(() => {
  fake.reset()
  mkdirSync(join(logDirectory, 'app'), {recursive: true})
  writeFileSync(join(logDirectory, 'app', '0.log'), 'hello\n')
})

afterAll(async () => {
  await fake.close()
  rmSync(root, {recursive: true, force: true})
})

/** The pod's sandbox, with what podctl writes on its sandboxes unless crictl made it. */
async function sandboxes(maker: 'podctl' | 'crictl' = 'podctl') {
  const annotations: Record<string, string> =
    maker === 'podctl' ? {'io.podctl.restartPolicy': 'Always', 'io.podctl.podDirectory': `${root}/pods/u1`} : {}
  fake.addSandbox({name: 'web', namespace: 'ns', uid: 'u1', attempt: 0}, annotations)
  return (await fake.client.runtime('listPodSandbox', {})).items
}

describe("killPod and the pod's log directory", () => {
  it('removes it with the pod when given the logs root', async () => {
    await killPod(fake.client, await sandboxes(), {podLogsRoot: root, podDirRoot: join(root, 'pods')})
    expect(existsSync(logDirectory)).toBe(false)
  })

  it('keeps it for a recreation, with --keep, and without a root', async () => {
    await killPod(fake.client, await sandboxes(), {podLogsRoot: root, keepPodDirectory: true, podDirRoot: join(root, 'pods')})
    expect(existsSync(logDirectory)).toBe(true)
    fake.reset()
    await killPod(fake.client, await sandboxes(), {podLogsRoot: root, keep: true})
    expect(existsSync(logDirectory)).toBe(true)
    fake.reset()
    await killPod(fake.client, await sandboxes(), {podDirRoot: join(root, 'pods')})
    expect(existsSync(logDirectory)).toBe(true)
  })

  it("keeps it when the pod killed is another tool's", async () => {
    const killed = await killPod(fake.client, await sandboxes('crictl'), {podLogsRoot: root, podDirRoot: join(root, 'pods')})
    expect(killed.removed).toBe(true)
    expect(fake.sandboxes.size).toBe(0)
    expect(existsSync(join(logDirectory, 'app', '0.log'))).toBe(true)
  })
})
