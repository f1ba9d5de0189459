/**
 * crictl's text under the crictl personality (PODCTL_PERSONALITY=crictl), against the in-process
 * fake runtime: the "nothing to remove" notes that must never be tried on the shared lab (rm -a,
 * rmp -a, rmi -a with nothing there), tables and -v blocks, Go-regexp filters, and the words and
 * streams of the mutating commands. test/e2e/crictl-text.test.ts compares the same on containerd.
 */
/* eslint-disable @stylistic/max-len -- the expected tables are as wide as crictl prints them */
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {type FakeContainer, FakePodRuntime} from '../support/fake-pod-runtime.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'
import {endpointEnv, podctl} from '../support/podctl.js'

const fake = new FakePodRuntime()
let env: Record<string, string | undefined>
// An empty crictl config: crictl warns on every command when /etc/crictl.yaml is missing.
const config = join(socketDir(), 'crictl.yaml')
writeFileSync(config, '')
const crictl = (...args: string[]) => podctl(args, {env: {...env, PODCTL_PERSONALITY: 'crictl', CRI_CONFIG_FILE: config}})
const own = (...args: string[]) => podctl(args, {env: {...env, PODCTL_PERSONALITY: 'podctl'}})
const logrus = (level: string, message: string) => `time="<RFC3339>" level=${level} msg="${message}"\n`
const withoutTime = (text: string) => text.replaceAll(/time="[^"]+"/g, 'time="<RFC3339>"')

beforeAll(async () => {
  await fake.start()
  env = endpointEnv(fake.client.runtimeEndpoint)
})

beforeEach(() => fake.reset())

afterAll(async () => {
  await fake.close()
})

/** Created three hours ago (minus `newer` ns, for order): "3 hours ago" whenever the test runs, so widths never move. */
const hoursAgo = (newer = 0) => `${(BigInt(Date.now()) - 3n * 3_600_000n) * 1_000_000n + BigInt(newer)}`

function pod(name: string, namespace: string, attempt = 0) {
  const sandbox = fake.addSandbox({name, namespace, uid: `u-${name}`, attempt})
  sandbox.createdAt = hoursAgo(fake.sandboxes.size)
  return sandbox
}

function addContainer(sandboxId: string, name: string, state: FakeContainer['state'], labels: Record<string, string> = {}): FakeContainer {
  const id = `c${name}`.padEnd(64, '0')
  const container: FakeContainer = {
    id,
    podSandboxId: sandboxId,
    metadata: {name, attempt: 0},
    image: {image: 'busybox:1.36'},
    imageRef: 'sha256:1',
    state,
    createdAt: hoursAgo(fake.containers.size),
    startedAt: '0',
    finishedAt: '0',
    exitCode: 0,
    reason: '',
    labels,
    annotations: {},
    mounts: [],
  }
  fake.containers.set(id, container)
  return container
}

describe('nothing to remove (crictl logs a note on stderr, exit 0)', () => {
  it('rm -a: "No containers to remove"; rmp -a: "No pods to remove"', async () => {
    const rm = await crictl('rm', '--all')
    expect([rm.code, rm.stdout, withoutTime(rm.stderr)]).toEqual([0, '', logrus('info', 'No containers to remove')])
    const rmp = await crictl('rmp', '--all')
    expect([rmp.code, rmp.stdout, withoutTime(rmp.stderr)]).toEqual([0, '', logrus('info', 'No pods to remove')])
  })

  it('podctl keeps its own words', async () => {
    const rm = await own('rm', '--all')
    expect([rm.code, rm.stdout, rm.stderr]).toEqual([0, '', 'no containers; nothing to remove\n'])
  })
})

describe('rmi (an image service with no images)', () => {
  let stop: () => Promise<void>
  let images: Record<string, string | undefined>
  beforeAll(async () => {
    const path = join(socketDir(), 'images.sock')
    stop = await startFakeRuntime(
      path,
      {version: versionHandler, listContainers: (_call, callback) => callback(null, {containers: []})},
      {
        listImages: (_call, callback) => callback(null, {images: []}),
        imageStatus: (_call, callback) => callback(null, {}),
        imageFsInfo: (_call, callback) => callback(null, {imageFilesystems: [], containerFilesystems: []}),
      },
    )
    images = {...env, CONTAINER_RUNTIME_ENDPOINT: `unix://${path}`, PODCTL_PERSONALITY: 'crictl', CRI_CONFIG_FILE: config}
  })
  afterAll(async () => stop())

  it('rmi -a: "No images to remove"; rmi of unknown images: every "no such image" in one error (errors.Join)', async () => {
    const all = await podctl(['rmi', '--all'], {env: images})
    expect([all.code, all.stdout, withoutTime(all.stderr)]).toEqual([0, '', logrus('info', 'No images to remove')])
    const missing = await podctl(['rmi', 'nonexist', 'other'], {env: images})
    expect(missing.stdout).toBe('')
    expect(withoutTime(missing.stderr)).toBe(`time="<RFC3339>" level=error msg="no such image nonexist\\nno such image other"\n`)
    expect(missing.code).toBe(1)
  })
})

describe('pods and ps as crictl prints them', () => {
  it('pods: the table in tabwriter columns, names as unanchored regexps, -q and -v', async () => {
    const web = pod('web', 'shop')
    const web2 = pod('web2', 'shop', 1)
    const db = pod('db', 'data')
    const table = await crictl('pods', '--name', 'web')
    expect([table.code, table.stderr]).toEqual([0, ''])
    expect(table.stdout).toBe(
      'POD ID              CREATED             STATE               NAME                NAMESPACE           ATTEMPT             RUNTIME\n' +
        `${web2.id.slice(0, 13)}       3 hours ago         Ready               web2                shop                1                   (default)\n` +
        `${web.id.slice(0, 13)}       3 hours ago         Ready               web                 shop                0                   (default)\n`,
    )
    const quiet = await crictl('pods', '--name', '^web$', '--quiet')
    expect(quiet.stdout).toBe(`${web.id}\n`)
    const verbose = await crictl('pods', '--namespace', 'da.a', '--verbose')
    expect(verbose.stdout.replace(db.id, 'DB')).toMatch(
      /^ID: DB\nName: db\nUID: u-db\nNamespace: data\nStatus: Ready\nCreated: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC\nLabels:\n\tio\.kubernetes\.pod\.name -> db\n\tio\.kubernetes\.pod\.namespace -> data\n\tio\.kubernetes\.pod\.uid -> u-db\nRuntime: \(default\)\n\n$/,
    )
  })

  it('podctl keeps exact names; -v prints the same blocks there', async () => {
    const web = pod('web', 'default')
    const web2 = pod('web2', 'default')
    const exact = await own('pods', '--name', 'web', '-q')
    expect(exact.stdout).toBe(`${web.id}\n`)
    const verbose = await own('pods', '--name', 'web2', '-v')
    expect(verbose.stdout.replace(web2.id, 'WEB2')).toMatch(
      /^ID: WEB2\nName: web2\nUID: u-web2\nNamespace: default\nStatus: Ready\nCreated: .+\nLabels:\n(\t.+\n){3}Runtime: \(default\)\n$/,
    )
  })

  it('ps: running only, --pod as a sandbox ID, --name a regexp, --latest, -v', async () => {
    const web = pod('web', 'shop')
    addContainer(web.id, 'app', 'CONTAINER_RUNNING', {'io.kubernetes.pod.name': 'web'})
    addContainer(web.id, 'sidecar', 'CONTAINER_EXITED')
    // The sandbox ID goes to the runtime as ListContainers' filter (the runtime resolves a prefix).
    const table = await crictl('ps', '--pod', web.id.slice(0, 6))
    expect(table.stdout).toBe(
      'CONTAINER           IMAGE               CREATED             STATE               NAME                ATTEMPT             POD ID              POD                 NAMESPACE\n' +
        `capp000000000       busybox:1.36        3 hours ago         Running             app                 0                   ${web.id.slice(0, 13)}       web                 unknown\n`,
    )
    const all = await crictl('ps', '--all', '--name', 'side|app', '-q')
    expect(all.stdout).toBe(`${'csidecar'.padEnd(64, '0')}\n${'capp'.padEnd(64, '0')}\n`)
    const latest = await crictl('ps', '--latest', '-q')
    expect(latest.stdout).toBe(`${'csidecar'.padEnd(64, '0')}\n`)
    const exited = await crictl('ps', '--state', 'EXITED', '-v')
    expect(exited.stdout).toBe(
      `ID: ${'csidecar'.padEnd(64, '0')}\nPodID: ${web.id}\nNamespace: unknown\nName: sidecar\nAttempt: 0\nState: Exited\nImage: busybox:1.36\nCreated: 3 hours ago\n\n`,
    )
    const label = await crictl('ps', '--label', 'a=b=c')
    expect([label.code, withoutTime(label.stderr)]).toEqual([1, logrus('error', 'incorrectly specified label: a=b=c')])
  })

  it('refuses what crictl does not print: -o wide', async () => {
    const wide = await crictl('ps', '-o', 'wide')
    expect(withoutTime(wide.stderr)).toBe(logrus('error', String.raw`listing containers: unsupported output format \"wide\"`))
  })
})

describe('mutating commands in crictl words', () => {
  it('stop and rm print each container as it was typed; rm of a running one is refused per container', async () => {
    const web = pod('web', 'shop')
    addContainer(web.id, 'app', 'CONTAINER_RUNNING')
    const refused = await crictl('rm', 'capp')
    expect(refused.stdout).toBe('')
    expect([refused.code, withoutTime(refused.stderr)]).toEqual([
      1,
      logrus('error', String.raw`container \"capp\" is running, please stop it first`),
    ])
    const stop = await crictl('stop', 'capp')
    expect([stop.code, stop.stdout, stop.stderr]).toEqual([0, 'capp\n', ''])
    const rm = await crictl('rm', 'capp')
    expect([rm.code, rm.stdout, rm.stderr]).toEqual([0, 'capp\n', ''])
  })

  it('rm -f of a running container prints it twice (crictl stops it, then removes it)', async () => {
    const web = pod('web', 'shop')
    addContainer(web.id, 'app', 'CONTAINER_RUNNING')
    const rm = await crictl('rm', '--force', 'capp00')
    expect([rm.code, rm.stdout]).toEqual([0, 'capp00\ncapp00\n'])
  })

  it('stopp and rmp: "Stopped sandbox ID", "Removed sandbox ID"; rmp of a running pod is refused, rmp -f stops it first', async () => {
    const a = fake.addSandbox({name: 'a', namespace: 'shop', uid: 'ua', attempt: 0})
    const b = fake.addSandbox({name: 'b', namespace: 'shop', uid: 'ub', attempt: 0})
    const refused = await crictl('rmp', a.id.slice(0, 8))
    expect([refused.stdout, withoutTime(refused.stderr)]).toEqual([
      '',
      logrus('error', String.raw`pod sandbox \"${a.id.slice(0, 8)}\" is running, please stop it first`),
    ])
    expect(refused.code).not.toBe(0)
    const stopp = await crictl('stopp', a.id.slice(0, 8))
    expect([stopp.code, stopp.stdout, stopp.stderr]).toEqual([0, `Stopped sandbox ${a.id.slice(0, 8)}\n`, ''])
    const rmp = await crictl('rmp', a.id.slice(0, 8))
    expect([rmp.code, rmp.stdout]).toEqual([0, `Removed sandbox ${a.id.slice(0, 8)}\n`])
    const forced = await crictl('rmp', '--force', b.id)
    expect([forced.code, forced.stdout]).toEqual([0, `Stopped sandbox ${b.id}\nRemoved sandbox ${b.id}\n`])
  })

  it("stop of an unknown container: one error with crictl's prefix", async () => {
    const stop = await crictl('stop', 'nonexist')
    expect(stop.stdout).toBe('')
    expect(withoutTime(stop.stderr)).toMatch(
      /^time="<RFC3339>" level=error msg="stopping the container \\"nonexist\\": rpc error: code = \w+ desc = .*not found.*"\n$/,
    )
  })
})
