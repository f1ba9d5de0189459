/**
 * crictl's text under the crictl personality on the lab: the tables, -q/-v, Go-regexp filters and
 * the mutating commands' words, checked literally, then side by side with the reference crictl
 * v1.37.0 on the same objects: PODCTL_REFERENCE_CRICTL, or the one the lab builds (test/support/lab.ts
 * referenceCrictl), so CI compares on every lab runtime; without one that block says it is skipped.
 * Only this file's own namespace is touched: no -a removal ever runs here (the fake runtime covers
 * those paths).
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {spawnSync} from 'node:child_process'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {createPod, pullBusybox, removePodLogs, runContainer, type TestPod, waitForExit} from '../support/containers.js'
import {
  cleanupNamespace,
  lab,
  labClient,
  labEnv,
  onCrio,
  pulledRefPattern,
  referenceCrictl,
  runtimeNamePattern,
  sandboxesIn,
  uniqueNamespace,
} from '../support/lab.js'
import {podctl, ROOT} from '../support/podctl.js'

/** The program under test: podctl as crictl. */
const CRICTL_BIN = `${ROOT}bin/crictl`
const REFERENCE = referenceCrictl()
// Say why the side-by-side block did not run, in the run's output and not only in a verbose report.
if (!REFERENCE)
  console.warn(
    'test/e2e/crictl-text.test.ts: side by side skipped: no reference crictl v1.37.0 (set PODCTL_REFERENCE_CRICTL, or build it in the lab)',
  )

const client = labClient()
const namespace = uniqueNamespace('crictl-text')
// An empty crictl config, so crictl's warning about a missing /etc/crictl.yaml stays out of stderr.
const config = join(mkdtempSync(join(tmpdir(), 'crictl-text-')), 'crictl.yaml')
writeFileSync(config, '')
const env = labEnv({IMAGE_SERVICE_ENDPOINT: lab().endpoint, CRI_CONFIG_FILE: config})
const crictl = (...args: string[]) => podctl(args, {env, entry: CRICTL_BIN})
let pod: TestPod
let sleeper: string
let finished: string

/** Ages move between two runs: each becomes AGE, and the padding around it one marker. */
const withoutAges = (text: string) =>
  text
    .replaceAll(/(Less than a second|About a minute|About an hour|\d+ (seconds?|minutes|hours|days|weeks|months|years)) ago/g, 'AGE')
    .replaceAll(/ {3,}/g, ' | ')

beforeAll(async () => {
  await pullBusybox(client)
  pod = await createPod(client, {name: 'text-web', namespace, labels: {tier: 'web'}})
  sleeper = await runContainer(client, pod, {name: 'sleeper', script: 'sleep 3600'})
  finished = await runContainer(client, pod, {name: 'finished', script: 'true'})
  await waitForExit(client, finished)
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  removePodLogs(pod)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
})

describe(`crictl text on ${lab().runtime}`, () => {
  it('version: four lines, two spaces after each colon', async () => {
    const version = await crictl('version')
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(
      new RegExp(
        String.raw`^Version: {2}0\.1\.0\nRuntimeName: {2}${runtimeNamePattern()}\nRuntimeVersion: {2}\S+\nRuntimeApiVersion: {2}v1\n$`,
      ),
    )
  })

  it('pods: namespace as an unanchored regexp, the table, -q, -v', async () => {
    const table = await crictl('pods', '--namespace', namespace.slice(0, -2))
    expect(withoutAges(table.stdout)).toBe(
      'POD ID | CREATED | STATE | NAME | NAMESPACE | ATTEMPT | RUNTIME\n' +
        `${pod.id.slice(0, 13)} | AGE | Ready | text-web | ${namespace} | 0 | (default)\n`,
    )
    expect((await crictl('pods', '--namespace', `^${namespace}$`, '--name', 'web$', '-q')).stdout).toBe(`${pod.id}\n`)
    expect((await crictl('pods', '--namespace', `^${namespace}$`, '--name', '^web')).stdout).toMatch(/^POD ID[^\n]+\n$/)
    const verbose = await crictl('pods', '--id', pod.id.slice(0, 10), '-v')
    // The pod's four labels; CRI-O adds a fifth to every sandbox (io.kubernetes.container.name -> POD).
    const labels = onCrio() ? 5 : 4
    expect(verbose.stdout).toMatch(
      new RegExp(
        `^ID: ${pod.id}\\nName: text-web\\nUID: ${pod.spec.uid}\\nNamespace: ${namespace}\\nStatus: Ready\\n` +
          String.raw`Created: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC\n` +
          String.raw`Labels:\n(\t.+ -> .+\n){${labels}}Runtime: \(default\)\n\n$`,
      ),
    )
  })

  it('ps: running only by default, -a, --pod ID prefix, --name regexp, --image by image ID, -q', async () => {
    const running = await crictl('ps', '--pod', pod.id.slice(0, 12))
    expect(withoutAges(running.stdout)).toBe(
      'CONTAINER | IMAGE | CREATED | STATE | NAME | ATTEMPT | POD ID | POD | NAMESPACE\n' +
        `${sleeper.slice(0, 13)} | ${lab().busybox} | AGE | Running | sleeper | 0 | ${pod.id.slice(0, 13)} | text-web | ${namespace}\n`,
    )
    expect((await crictl('ps', '-a', '--pod', pod.id, '--name', 'fin|sle', '-q')).stdout).toBe(`${finished}\n${sleeper}\n`)
    expect((await crictl('ps', '-a', '--pod', pod.id, '--state', 'EXITED', '-q')).stdout).toBe(`${finished}\n`)
    expect((await crictl('ps', '-a', '--pod', pod.id, '--image', lab().busybox, '--last', '1', '-q')).stdout).toBe(`${finished}\n`)
    expect((await crictl('ps', '-a', '--pod', pod.id, '--image', 'localhost:5000/podctl/nothing:1', '-q')).stdout).toBe('')
  })

  it('inspect of two IDs: one array (crictl v1.37); the template runs over that array', async () => {
    const two = await crictl('inspect', '-q', sleeper, finished)
    expect(two.code).toBe(0)
    expect((JSON.parse(two.stdout) as Array<{status: {id: string}}>).map((document) => document.status.id)).toEqual([sleeper, finished])
    const ids = await crictl('inspect', '-o', 'go-template', '--template', '{{range .}}{{.status.id}} {{end}}', sleeper, finished)
    expect(ids.stdout).toBe(`${sleeper} ${finished} \n`)
  })

  it('imagefsinfo -o table: container filesystems, then image filesystems, one indexed line per value', async () => {
    const table = await crictl('imagefsinfo', '-o', 'table')
    const filesystem = String.raw`TimeStamp\[0]: \d+\nDisk\[0]: [\d.]+[kMG]?B\nInodes\[0]: \d+\nMountpoint\[0]: \/\S+\n`
    // containerd reports no container filesystem; CRI-O reports one (its storage, as for images).
    const containers = onCrio() ? filesystem : ''
    expect(table.stdout).toMatch(new RegExp(`^Container Filesystem \\n${containers}Image Filesystem \\n${filesystem}$`))
  })

  it('pull: one line on stdout, nothing on stderr', async () => {
    const pull = await crictl('pull', lab().busybox)
    expect([pull.code, pull.stderr]).toEqual([0, ''])
    expect(pull.stdout).toMatch(new RegExp(`^Image is up to date for ${pulledRefPattern(lab().busybox)}\n$`))
  })

  it("stop and rm: the ID as typed; rm of a running container is refused in crictl's words", async () => {
    const doomed = await runContainer(client, pod, {name: 'doomed', script: 'sleep 3600'})
    const ref = doomed.slice(0, 12)
    const refused = await crictl('rm', ref)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(
      new RegExp(`^time="[^"]+" level=error msg="container \\\\"${ref}\\\\" is running, please stop it first"\\n`),
    )
    expect(await crictl('stop', '--timeout', '0', ref)).toMatchObject({code: 0, stdout: `${ref}\n`})
    expect(await crictl('rm', ref)).toMatchObject({code: 0, stdout: `${ref}\n`})
  })
})

describe.skipIf(!REFERENCE)('side by side with the reference crictl v1.37.0', () => {
  const reference = (...args: string[]) =>
    spawnSync(REFERENCE!, args, {env: {...process.env, ...env} as NodeJS.ProcessEnv, encoding: 'utf8'})

  // Other helpers pull and remove images on the shared lab meanwhile: only the header and the busybox rows are compared.
  const busyboxOnly = (text: string) =>
    text
      .split(/(?<=\n)\n/)
      .flatMap((block) => (block.startsWith('ID: ') ? (block.includes(`RepoTags: ${lab().busybox}\n`) ? [block] : []) : block.split('\n')))
      .filter(
        (line) => line.startsWith('IMAGE ') || line.startsWith('ID: ') || line.includes('/podctl/busybox') || line.startsWith('Version:'),
      )
      // An image pulled meanwhile may widen a column: padding is compared as one marker.
      .map((line) => line.replaceAll(/ {3,}/g, ' | '))

  it.each(
    [['version'], ['images'], ['images', '-v'], ['images', '--digests', '--pinned', '--no-trunc']].map(
      (args) => [args.join(' '), args] as const,
    ),
  )('%s: the same stdout', async (_name, args) => {
    const [ours, theirs] = [await crictl(...args), reference(...args)]
    expect({code: ours.code, stderr: ours.stderr}).toEqual({code: theirs.status, stderr: theirs.stderr})
    expect(busyboxOnly(ours.stdout)).toEqual(busyboxOnly(theirs.stdout))
    expect(busyboxOnly(ours.stdout).length).toBeGreaterThan(0)
  })

  it('pods, ps and their -q/-v/--no-trunc forms: the same stdout (ages aside)', async () => {
    const forms = [
      ['pods', '--namespace', namespace],
      ['pods', '--namespace', namespace, '--no-trunc'],
      ['pods', '--namespace', namespace, '-v'],
      ['pods', '--namespace', namespace, '--label', 'tier=web', '-q'],
      ['ps', '-a', '--pod', pod.id],
      ['ps', '-a', '--pod', pod.id, '-v'],
      ['ps', '-a', '--pod', pod.id, '-r', '--no-trunc'],
      ['ps', '--pod', pod.id, '--latest', '-o', 'table'],
      ['ps', '-a', '--pod', pod.id, '--name', '^fin', '-q'],
    ]
    for (const args of forms) {
      const [ours, theirs] = [await crictl(...args), reference(...args)]
      expect({args, code: ours.code, stderr: ours.stderr, stdout: withoutAges(ours.stdout)}).toEqual({
        args,
        code: theirs.status,
        stderr: theirs.stderr,
        stdout: withoutAges(theirs.stdout),
      })
    }
  })

  it("the config schemas of run, create, runp and pull jsonschema (and run's usage without a flag): the same bytes", async () => {
    const forms = [
      ['runp', 'jsonschema'],
      ['pull', 'js'],
      ['run', 'jsonschema'],
      ['run', 'js', '-p'],
      ['create', 'jsonschema', '-pc'],
    ]
    for (const args of forms) {
      const [ours, theirs] = [await crictl(...args), reference(...args)]
      expect({args, code: ours.code, stderr: ours.stderr, stdout: ours.stdout}).toEqual({
        args,
        code: theirs.status,
        stderr: theirs.stderr,
        stdout: theirs.stdout,
      })
      expect(theirs.stdout.length).toBeGreaterThan(0)
    }
  })
})
