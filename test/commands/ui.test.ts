/**
 * `podctl ui` driven the way a person uses it — keys into a pseudo-terminal of 80x24, the screen read
 * back through a terminal emulator — against the in-process fake runtime: the pods with CPU and
 * memory, `/` to filter, Enter and `l` for a container's log, K with its confirmation killing the pod
 * through the workers, a runtime that goes away said on the screen, and q or Ctrl-C leaving exit 0
 * with the terminal restored. Without a terminal it refuses in one line.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {FakePodRuntime} from '../support/fake-pod-runtime.js'
import {podctl} from '../support/podctl.js'
import {podctlOnPty, type PtySession} from '../support/pty-screen.js'

const runtime = new FakePodRuntime()
const work = mkdtempSync(join(tmpdir(), 'podctl-ui-'))
let env: Record<string, string | undefined>
let session: PtySession | undefined

async function addPod(name: string, namespace: string, logLine: string): Promise<void> {
  const uid = `uid-${name}`
  const sandbox = runtime.addSandbox({name, namespace, uid, attempt: 0}, {'io.podctl.restartPolicy': 'Always'})
  const {containerId} = await runtime.client.runtime('createContainer', {
    podSandboxId: sandbox.id,
    config: {
      metadata: {name: 'app', attempt: 0},
      image: {image: 'busybox:1.36'},
      labels: {'io.kubernetes.container.name': 'app', 'io.kubernetes.pod.uid': uid},
      annotations: {'io.podctl.containerType': 'app'},
      mounts: [],
    },
    sandboxConfig: {},
  })
  await runtime.client.runtime('startContainer', {containerId})
  const logPath = join(work, `${name}-0.log`)
  writeFileSync(logPath, `2026-12-07T05:00:00.000000000Z stdout F ${logLine}\n`)
  runtime.containers.get(containerId)!.logPath = logPath
}

beforeAll(async () => {
  await runtime.start()
  const endpoint = runtime.client.runtimeEndpoint
  env = {CONTAINER_RUNTIME_ENDPOINT: endpoint, IMAGE_SERVICE_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined, NO_COLOR: '1'}
  // A terminal in a CI job (a debug shell on a runner) has CI set: Ink must still draw as it goes.
  env.CI = 'true'
  env.PODCTL_POD_DIR_ROOT = join(work, 'pods')
  env.PODCTL_POD_LOGS_ROOT = join(work, 'logs')
})

beforeEach(async () => {
  runtime.reset()
  await addPod('web', 'shop', 'hello from web')
  await addPod('db', 'shop', 'hello from db')
})

afterEach(() => {
  session?.kill()
  session = undefined
})

afterAll(async () => {
  await runtime.close()
  rmSync(work, {recursive: true, force: true})
})

describe('podctl ui on a terminal', () => {
  it('lists the pods with CPU and memory, filters with /, shows a log with Enter then l, and q exits 0 restored', async () => {
    session = podctlOnPty(['ui'], env)
    await session.waitFor(/^fake 1\.0 · runtime ready · unix:/)
    // CPU needs two samples of the runtime's stats: it appears with the second refresh.
    expect(await session.waitFor(/^ {2}web +shop +1\/1 +Running +0 +\d+m +4Mi +\d+s$/)).toBeTruthy()
    expect(session.lines()[1]).toMatch(/^pods 2\/2 ready · containers 2\/2 running · images /)
    session.press('/web\r')
    await session.waitFor(/^Pods \/web \(1 of 2\)/)
    expect(session.lines().some((line) => / db /.test(line))).toBe(false)
    session.press('\r')
    await session.waitFor(/^Containers of web_shop$/)
    session.press('l')
    await session.waitFor(/^ {2}hello from web$/)
    await session.waitFor(/^Logs web_shop\/app/)
    session.press('q')
    expect(await session.ended()).toEqual({code: 0, echo: true, canonical: true, normalScreen: true})
  })

  it('K asks first; y kills the pod through the workers, and it leaves the list', async () => {
    session = podctlOnPty(['ui', '-n', 'shop'], env)
    await session.waitFor(/^> db +shop/)
    session.press('K')
    await session.waitFor(/^Kill pod db_shop\? .*\[y\/N\]$/)
    session.press('y')
    await session.waitFor(/^Killed pod db_shop$/)
    await session.waitFor(/^Pods \(1 of 1\)/)
    expect([...runtime.sandboxes.values()].map((sandbox) => sandbox.metadata.name)).toEqual(['web'])
    session.press('\u0003')
    expect(await session.ended()).toEqual({code: 0, echo: true, canonical: true, normalScreen: true})
  })

  it('says when the runtime stops answering and keeps the terminal usable', async () => {
    session = podctlOnPty(['ui'], env)
    await session.waitFor(/^> db +shop/)
    runtime.failNext('listPodSandbox', 13, 'the runtime is shutting down')
    await session.waitFor(/^Runtime lost, trying again every second: /)
    // It asks again every second: the next answer brings the pods back.
    await session.waitFor(/^Enter containers/)
    session.press('q')
    expect((await session.ended()).code).toBe(0)
  })

  it('refuses without a terminal, in one line', async () => {
    const result = await podctl(['ui'], {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe('Error: podctl ui needs a terminal on stdin and stdout; for a script use podctl pods or podctl status\n')
  })
})
