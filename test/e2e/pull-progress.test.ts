/**
 * Pull progress from containerd's content service, on a private containerd (fresh-runtime.ts: the
 * image must not be there already, and each test removes it again) pulling a 40 MB image of random
 * layers through a registry proxy that paces downloads to 10 MB/s, so every pull lasts seconds.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, test} from 'vitest'

import {type BigImage, ensureBigImage} from '../support/big-image.js'
import {type FreshRuntime, startFreshRuntime} from '../support/fresh-runtime.js'
import {lab} from '../support/lab.js'
import {endpointEnv, podctl} from '../support/podctl.js'
import {type SlowRegistry, slowRegistry} from '../support/slow-registry.js'
import {finalScreen, podctlOnTerminal} from '../support/terminal.js'

const BYTES_PER_SECOND = 10 * 1000 * 1000

let runtime: FreshRuntime
let proxy: SlowRegistry
let big: BigImage
/** The big image, pulled through the proxy. */
let image: string

const env = () => endpointEnv(runtime.endpoint)
const short = (digest: string) => digest.slice('sha256:'.length, 'sha256:'.length + 12)

/** Each test starts without the image (and so has all of it to download). */
async function removeImage(): Promise<void> {
  const removed = await podctl(['rmi', image], {env: env()})
  expect([0, 5], removed.stderr).toContain(removed.code)
}

beforeAll(async () => {
  big = await ensureBigImage()
  proxy = await slowRegistry(lab().registry, BYTES_PER_SECOND)
  image = big.image.replace(lab().registry, proxy.host)
  runtime = await startFreshRuntime()
}, 120_000)

/** run's pod directories and logs, private to this file like the runtime. */
const runRoot = mkdtempSync(join(tmpdir(), 'podctl-pull-progress-'))

afterAll(async () => {
  await proxy?.close()
  await runtime?.stop()
  rmSync(runRoot, {recursive: true, force: true})
}, 60_000)

describe('pull --progress plain', () => {
  test('prints a line with byte counts as each layer starts and is done; stdout keeps its one line', async () => {
    await removeImage()
    const result = await podctl(['pull', '--progress', 'plain', image], {env: env()})
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stderr.split('\n')
    for (const layer of big.layers) {
      const id = short(layer.digest)
      const started = lines.find((line) => line.startsWith(`Downloading layer ${id}: `))
      expect(started, result.stderr).toMatch(new RegExp(`^Downloading layer ${id}: \\d+ of ${layer.size} bytes$`))
      expect(lines, result.stderr).toContain(`Downloaded layer ${id}: ${layer.size} bytes`)
      // Started before done, and each once.
      expect(lines.indexOf(started!)).toBeLessThan(lines.indexOf(`Downloaded layer ${id}: ${layer.size} bytes`))
      expect(lines.filter((line) => line.includes(id))).toHaveLength(2)
    }

    // stdout is the result line alone, as without progress.
    expect(result.stdout.split('\n')).toEqual([
      expect.stringMatching(/^Successfully pulled image ".+" in \S+\. Image size: \d+ bytes\. ID: \w{13}$/),
      '',
    ])
  }, 120_000)

  test('-o json is the same document with or without progress lines on stderr', async () => {
    await removeImage()
    const result = await podctl(['pull', '--progress', 'plain', '-o', 'json', image], {env: env()})
    expect(result.code, result.stderr).toBe(0)
    const document = JSON.parse(result.stdout) as {images: Array<{image: string; pulled: boolean}>}
    expect(document.images.map(({image: name, pulled}) => ({image: name, pulled}))).toEqual([{image, pulled: true}])
    expect(result.stdout).not.toContain('Downloading layer')
    expect(result.stderr).toContain(`Downloaded layer ${short(big.layers[0].digest)}: ${big.layers[0].size} bytes`)
  }, 120_000)

  test('auto without a terminal prints no progress', async () => {
    await removeImage()
    const result = await podctl(['pull', image], {env: env()})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).not.toMatch(/Download(ing|ed) layer/)
  }, 120_000)
})

describe('pull on a terminal', () => {
  test('draws a bar per layer under the spinner, then clears it', async () => {
    await removeImage()
    const result = await podctlOnTerminal(['pull', image], env())
    expect(result.code, result.raw).toBe(0)
    // Drawn while it ran: a bar with bytes done / total for each layer.
    for (const layer of big.layers) {
      expect(result.raw).toMatch(new RegExp(`${short(layer.digest)} \\[[#-]{20}\\]  [\\d.]+ [kM]?B / [\\d.]+ MB`))
    }

    // Gone at the end: the screen holds the events and the result line, no bar and no spinner text.
    const screen = finalScreen(result.raw)
    expect(screen.join('\n')).not.toMatch(/\[[#-]{20}\]|Pulling image: /)
    expect(screen.at(-1)).toMatch(/^Successfully pulled image ".+" in \S+\. Image size: \d+ bytes\. ID: \w{13}$/)
  }, 120_000)

  test('--progress tty without a terminal is refused, naming the fix', async () => {
    const result = await podctl(['pull', '--progress', 'tty', image], {env: env()})
    expect(result.code).toBe(2)
    expect(result.stderr).toBe('Error: --progress tty needs stderr on a terminal; use --progress plain for logs and CI\n')
  })
})

// Last: its pod keeps the image in use until the private runtime is stopped.
describe('run on a terminal', () => {
  test('the pull inside run draws its layer bars under the spinner, then clears them', async () => {
    await removeImage()
    const manifest = join(runRoot, 'pod.json')
    writeFileSync(
      manifest,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {name: 'progress', namespace: 'podctl-e2e-pull-progress'},
        spec: {terminationGracePeriodSeconds: 1, containers: [{name: 'app', image, command: ['/bin/busybox', 'sleep', '3600']}]},
      }),
    )
    const result = await podctlOnTerminal(['run', '-f', manifest], {
      ...env(),
      PODCTL_POD_DIR_ROOT: join(runRoot, 'pods'),
      PODCTL_POD_LOGS_ROOT: join(runRoot, 'logs'),
    })
    expect(result.code, result.raw).toBe(0)
    for (const layer of big.layers)
      expect(result.raw).toMatch(new RegExp(`${short(layer.digest)} \\[[#-]{20}\\]  [\\d.]+ [kM]?B / [\\d.]+ MB`))
    const screen = finalScreen(result.raw).join('\n')
    expect(screen).not.toMatch(/\[[#-]{20}\]/)
    expect(screen).toMatch(/Normal +Pulled .*Successfully pulled image/)
  }, 120_000)
})
