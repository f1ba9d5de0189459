/**
 * A watched directory (the real ManifestSource on a temporary directory) feeding ManifestSync
 * against the in-process fake runtime: a source that cannot be read or trusted changes nothing and
 * says so once, naming the file and the reason, never its content; only a file really removed
 * from a directory that can be read takes its pod away.
 */
import {execFileSync} from 'node:child_process'
import {chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {ManifestSource} from '../../../../src/lib/kubelet/config/manifest-source.js'
import {ManifestSync} from '../../../../src/lib/kubelet/supervisor/manifest-sync.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'
import {presentImages} from '../../../support/present-images.js'
import {until} from '../../../support/until.js'

const SECRET = 'hunter2-s3cr3t'
const pod = (name: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: shop}\nspec:\n  containers:\n  - {name: app, image: "busybox:1.36"}\n`

let fake: FakePodRuntime
const stops: Array<() => Promise<void>> = []

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
  fake.reset()
})

afterAll(async () => {
  await fake.close()
})

/** A source on `dir` feeding a ManifestSync, as `sync --watch -f DIR` wires them, until the test ends. */
function watch(dir: string) {
  const root = mkdtempSync(join(tmpdir(), 'podctl-manifest-sync-'))
  const events: PodEvent[] = []
  const controller = new AbortController()
  const settings = {
    logsRoot: join(root, 'logs'),
    podDirRoot: join(root, 'pods'),
    hostResolvConf: 'nameserver 10.0.0.2\n',
    nodeMemoryBytes: 1024 ** 3,
    skipAdmission: true,
    pollMs: 20,
  }
  const deps = {
    client: fake.client,
    images: presentImages,
    events: (event: PodEvent) => events.push(event),
    signal: controller.signal,
    parallel: 2,
  }
  const sync = new ManifestSync([dir], settings, deps)
  let queue = Promise.resolve()
  const source = new ManifestSource([dir], {
    claimsRoot: join(root, 'claims'),
    settleMs: 50,
    rescanMs: 100,
    onUpdate(update) {
      queue = queue.then(() => sync.update(update))
      return queue
    },
  })
  const running = source.run(controller.signal)
  stops.push(async () => {
    controller.abort()
    await running
    await queue
  })
  return events
}

const sandboxNames = () => [...fake.sandboxes.values()].map((sandbox) => sandbox.metadata.name).sort()
const kills = () => fake.calls.filter((call) => call.method === 'stopPodSandbox' || call.method === 'removePodSandbox')
const said = (events: PodEvent[], text: string) => events.filter((event) => event.message.includes(text))

function directory(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'podctl-watched-')), 'manifests')
  mkdirSync(dir, {mode: 0o755})
  for (const name of ['a', 'b', 'c']) writeFileSync(join(dir, `${name}.yaml`), pod(name), {mode: 0o644})
  return dir
}

/** Drops a new pod's file and waits for it to run: every update before it has been acted on by then. */
async function dropAndRun(dir: string, name: string): Promise<void> {
  writeFileSync(join(dir, `${name}.yaml`), pod(name), {mode: 0o644})
  await until(`pod ${name} to run`, () => sandboxNames().includes(name), {timeoutMs: 10_000})
}

describe('a watched directory that cannot be read or trusted changes nothing', () => {
  it('moved away, removed, or made others-writable: every pod it defines keeps running, said once', async () => {
    const dir = directory()
    const events = watch(dir)
    await until('the three pods to run', () => sandboxNames().length === 3, {timeoutMs: 10_000})

    renameSync(dir, `${dir}.away`)
    await until('the move to be said', () => said(events, 'moved away or removed').length > 0)
    renameSync(`${dir}.away`, dir)
    await dropAndRun(dir, 'd')
    expect(said(events, `${dir} can be read again`)).toHaveLength(1)

    chmodSync(dir, 0o777)
    await until('the open directory to be said', () => said(events, 'is writable by users other than its owner').length > 0)
    chmodSync(dir, 0o755)
    await dropAndRun(dir, 'e')

    // Moved away again: said again, once.
    renameSync(dir, `${dir}.away`)
    await until('the second move to be said', () => said(events, 'moved away or removed').length > 1)
    renameSync(`${dir}.away`, dir)
    await dropAndRun(dir, 'f')

    rmSync(dir, {recursive: true})
    await until('the removal to be said', () => said(events, 'moved away or removed').length > 2)
    mkdirSync(dir, {mode: 0o755})
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) writeFileSync(join(dir, `${name}.yaml`), pod(name), {mode: 0o644})
    await dropAndRun(dir, 'g')

    expect(kills()).toEqual([])
    expect(sandboxNames()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g'])
    expect(said(events, 'is writable by users other than its owner')).toHaveLength(1)
    const gone = `${dir}: no such file or directory (moved away or removed?); its pods are left as they are`
    expect(said(events, 'moved away or removed').map((event) => event.message)).toEqual([gone, gone, gone])

    // A file really removed from a directory that can be read takes its pod away: the test can see a kill.
    rmSync(join(dir, 'b.yaml'))
    await until('b to be killed', () => !sandboxNames().includes('b'))
  }, 60_000)

  it('an emptied, oversized, non-manifest, dangling, looping or FIFO file: pods left, each said once, no content', async () => {
    const dir = directory()
    const events = watch(dir)
    await until('the three pods to run', () => sandboxNames().length === 3, {timeoutMs: 10_000})

    // An editor's truncate, left so: changes nothing.
    truncateSync(join(dir, 'a.yaml'), 0)
    // A 40 MB ConfigMap value: refused by its size, never read.
    writeFileSync(
      join(dir, 'big.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {v: "${'x'.repeat(40 * 1024 * 1024)}"}\n`,
    )
    writeFileSync(join(dir, 'secrets.yaml'), `DB_PASSWORD=${SECRET}\n`, {mode: 0o600})
    symlinkSync(join(dir, 'nowhere.yaml'), join(dir, 'dangling.yaml'))
    symlinkSync(join(dir, 'loop.yaml'), join(dir, 'loop.yaml'))
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')])
    mkdirSync(join(dir, 'sub.yaml'))
    // Backups and hidden files are not manifests: never read, never said.
    writeFileSync(join(dir, 'c.yaml~'), `not: [yaml`)
    writeFileSync(join(dir, 'c.yaml.bak'), pod('c-backup'))
    writeFileSync(join(dir, '#c.yaml#'), pod('c-autosave'))
    writeFileSync(join(dir, '.c.yaml.swp'), `\u0000\u0001swap`)
    await dropAndRun(dir, 'd')
    await until('every problem to be said', () => events.filter((event) => event.reason === 'ManifestInvalid').length >= 7)
    await dropAndRun(dir, 'e')

    expect(kills()).toEqual([])
    expect(sandboxNames()).toEqual(['a', 'b', 'c', 'd', 'e'])
    const invalid = events.filter((event) => event.reason === 'ManifestInvalid').map((event) => event.message)
    const untilFixed = 'its pods are left as they are until it is fixed'
    const tooLarge = 'the manifest is larger than 3 MiB; podctl reads Pods up to that size (as the API server does): not read'
    expect(invalid.sort()).toEqual(
      [
        `${dir}/a.yaml is empty (no YAML or JSON document in it); remove the file to remove its pods; ${untilFixed}`,
        `${dir}/big.yaml: ${tooLarge}; its pods are left as they are`,
        `${dir}/dangling.yaml is a symbolic link to nothing (its target does not exist); its pods are left as they are`,
        `${dir}/loop.yaml is a symbolic link that loops (too many levels of links); its pods are left as they are`,
        `${dir}/pipe.yaml is a FIFO, not a regular file: not read; its pods are left as they are`,
        `${dir}/secrets.yaml: is not a Kubernetes manifest: the document is text, not an object with apiVersion and kind; ${untilFixed}`,
        `${dir}/sub.yaml is a directory: sub-directories are not read; its pods are left as they are`,
      ].sort(),
    )
    expect(JSON.stringify(events)).not.toContain(SECRET.slice(0, 7))
    expect(sandboxNames()).not.toContain('c-backup')

    // Written again: read as before, the pod left as it runs (the same manifest), and said fixed.
    writeFileSync(join(dir, 'a.yaml'), pod('a'))
    await until('a.yaml to be fixed', () => said(events, `${dir}/a.yaml can be read again`).length > 0)
    expect(kills()).toEqual([])
  }, 60_000)
})
