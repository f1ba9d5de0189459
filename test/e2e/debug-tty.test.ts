/**
 * `podctl debug … -it -- sh` as a person uses it (issue 35): on an 80x24 pseudo-terminal, a shell in a
 * debug container beside the static app sees the app's processes and has a terminal of the user's size;
 * `exit 3` ends podctl with 3 and the terminal back in its normal mode; Ctrl-C goes to the shell, not to
 * podctl; and whether the session ends or its terminal is closed, no debug container or pod stays.
 * debug.test.ts covers the same commands without a terminal.
 */
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, beforeAll, describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, onCrio, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl} from '../support/podctl.js'
import {podctlOnPty, type PtySession} from '../support/pty-screen.js'
import {until} from '../support/until.js'

const client = labClient()
const namespace = uniqueNamespace('debug-tty')
const work = mkdtempSync(join(tmpdir(), 'podctl-debug-tty-'))
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: lab().logRoot,
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'containers'),
  NO_COLOR: '1',
})
const image = lab().busybox
let session: PtySession | undefined

useLabNamespace(client, namespace, work)

/** The namespace's containers as the runtime has them: pod/name and state, sorted. */
async function containersIn(): Promise<string[]> {
  const {containers} = await client.runtime('listContainers', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})
  return containers.map((c) => `${c.labels['io.kubernetes.pod.name']}/${c.metadata?.name} ${c.state}`).sort()
}

async function podNamesIn(): Promise<string[]> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})
  return items.map((sandbox) => sandbox.metadata?.name ?? '').sort()
}

const ONLY_THE_APP = ['web/app CONTAINER_RUNNING']

/**
 * busybox sh's prompt. The shell starts before podctl attaches (as with attach -it), so the prompt it
 * printed first is not on the screen: Enter asks for a new one, again until one shows.
 */
async function promptOf(pty: PtySession, prompt: RegExp): Promise<void> {
  await until(
    'the shell prompt',
    async () => {
      pty.press('\r')
      return pty.waitFor(prompt, 1000).catch(() => undefined)
    },
    {timeoutMs: 60_000},
  )
}

/** Types a command line whose last output is `marker`, and waits for it (the typed line shows `$((…))`, not the value). */
async function typeAndWait(pty: PtySession, command: string, marker: string): Promise<void> {
  const [left, right] = marker.split('-')
  pty.press(`${command}; echo ${left}-$((${right}+0))\r`)
  await pty.waitFor(new RegExp(`^${marker}$`), 30_000)
}

beforeAll(async () => {
  await client.image('pullImage', {image: {image: lab().staticApp}})
  const manifest = join(work, 'web.yaml')
  writeFileSync(
    manifest,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'web', namespace},
      spec: {terminationGracePeriodSeconds: 1, containers: [{name: 'app', image: lab().staticApp}]},
    }),
  )
  expect((await podctl(['run', '-f', manifest], {env})).code).toBe(0)
}, 120_000)

afterEach(() => {
  session?.kill()
  session = undefined
})

describe('debug POD -it', () => {
  it("gives a shell on a terminal in the target's PID namespace; exit 3 ends podctl with 3 and removes the container", async () => {
    session = podctlOnPty(['debug', '-n', namespace, 'web', '--target', 'app', '--image', image, '-it', '--', 'sh'], env)
    await promptOf(session, /^\/ #/)
    await typeAndWait(session, 'ps -o pid,args; tty; stty size', 'done-42')
    const screen = session.lines()
    // The app is pid 1 of the namespace the shell joined; the terminal is a pty of the user's 80x24.
    expect(screen).toContainEqual(expect.stringMatching(/^\s*1\s+\/app$/))
    expect(screen).toContainEqual(expect.stringMatching(/^\/dev\/pts\/\d+$/))
    expect(screen).toContain('24 80')
    session.press('exit 3\r')
    expect(await session.ended(60_000)).toEqual({code: 3, echo: true, canonical: true, normalScreen: true})
    expect(await containersIn()).toEqual(ONLY_THE_APP)
  }, 120_000)

  it('sends Ctrl-C to the shell, not to podctl: the session goes on', async () => {
    session = podctlOnPty(['debug', '-n', namespace, 'web', '--image', image, '-it', '--', 'sh'], env)
    await promptOf(session, /^\/ #/)
    session.press(`echo sleeping-$((1+1)); sleep 600\r`)
    await session.waitFor(/^sleeping-2$/)
    session.press('\u0003')
    // The shell lost its sleep and reads the next line.
    await typeAndWait(session, 'true', 'alive-5')
    session.press('exit\r')
    expect(await session.ended(60_000)).toEqual({code: 0, echo: true, canonical: true, normalScreen: true})
    expect(await containersIn()).toEqual(ONLY_THE_APP)
  }, 120_000)

  it('removes the debug container when the terminal is closed (a lost SSH session)', async () => {
    const args = ['debug', '-n', namespace, 'web', '--image', image, '--container', 'hangup', '-it', '--', 'sh']
    session = podctlOnPty(args, env)
    await promptOf(session, /^\/ #/)
    expect(await containersIn()).toEqual([...ONLY_THE_APP, 'web/hangup CONTAINER_RUNNING'])
    // podctl gets SIGHUP, and every write to the terminal fails from then on (EIO).
    session.kill()
    await until('the debug container to be removed', async () => (await containersIn()).length === 1, {timeoutMs: 60_000, pollMs: 200})
    expect(await containersIn()).toEqual(ONLY_THE_APP)
  }, 120_000)
})

/** As in debug.test.ts: CRI-O refuses the host's / when / is a private mount. */
const nodeRootRefused = onCrio() && !/^\S+ \S+ \S+ \S+ \/ [^-]*(shared|master):/m.test(readFileSync('/proc/self/mountinfo', 'utf8'))

describe.skipIf(nodeRootRefused)('debug node -it', () => {
  it("gives a shell on a terminal with the host's / at /host; exit 4 ends podctl with 4 and removes the pod", async () => {
    session = podctlOnPty(['debug', '-n', namespace, 'node', '--image', image, '-it', '--', 'sh'], env)
    await promptOf(session, /^\/ #/)
    await typeAndWait(session, 'cat /host/etc/hostname; tty', 'done-42')
    const screen = session.lines()
    expect(screen).toContain(hostname())
    expect(screen).toContainEqual(expect.stringMatching(/^\/dev\/pts\/\d+$/))
    session.press('exit 4\r')
    expect(await session.ended(60_000)).toEqual({code: 4, echo: true, canonical: true, normalScreen: true})
    expect(await podNamesIn()).toEqual(['web'])
  }, 120_000)
})
