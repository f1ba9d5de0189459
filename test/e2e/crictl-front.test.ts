import {mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {createPod, pullBusybox, removePodLogs, runContainer, type TestPod} from '../support/containers.js'
import {cleanupNamespace, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl, ROOT} from '../support/podctl.js'

/** bin/crictl: podctl as crictl v1.37 (issues 20, 34), started as a user starts crictl. */
const CRICTL = `${ROOT}bin/crictl`
const crictl = (args: string[]) => podctl(args, {entry: CRICTL, env})

/** What the reference crictl v1.37.0 printed for command lines that do not depend on the runtime's state. */
const REFERENCE: Array<{args: string[]; stdout: string; stderr: string; exit: number}> = JSON.parse(
  readFileSync(new URL('../fixtures/crictl/reference.json', import.meta.url), 'utf8'),
)
const reference = (...args: string[]) => {
  const found = REFERENCE.find((recorded) => JSON.stringify(recorded.args) === JSON.stringify(args))
  if (!found) throw new Error(`no reference recording of crictl ${args.join(' ')}`)
  return found
}

/** logrus' error line (crictl v1.37's main logs a failure at error level) when stderr is not a terminal. */
const fatalLine = (message: string) =>
  new RegExp(`^time="\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(Z|[+-]\\d\\d:\\d\\d)" level=error msg=${message}\\n$`)

const client = labClient()
const namespace = uniqueNamespace('crictl-front')
// An empty crictl config, so crictl's warning about a missing /etc/crictl.yaml stays out of stderr.
const config = join(mkdtempSync(join(tmpdir(), 'crictl-front-')), 'crictl.yaml')
writeFileSync(config, '')
const env = labEnv({CRI_CONFIG_FILE: config})
let pod: TestPod
let first: string
let second: string

beforeAll(async () => {
  await pullBusybox(client)
  pod = await createPod(client, {name: 'front', namespace})
  first = await runContainer(client, pod, {name: 'first', script: 'sleep 3600'})
  second = await runContainer(client, pod, {name: 'second', script: 'sleep 3600'})
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  removePodLogs(pod)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
})

describe('bin/crictl: the command line of crictl v1.37', () => {
  it.each([[[]], [['--help']], [['-h']], [['help']], [['help', 'rm']], [['rm', '-h']], [['rm', '--help']], [['ps', '-h']]])(
    'crictl %j prints the help crictl prints, byte for byte, and exits 0',
    async (args) => {
      const expected = reference(...args)
      expect(await crictl(args)).toMatchObject({code: 0, stdout: expected.stdout, stderr: ''})
    },
  )

  it('--version keeps crictl version v1.37.0 in front (awk "{print $3}" still reads v1.37.0)', async () => {
    const result = await crictl(['--version'])
    expect(result).toMatchObject({code: 0, stderr: ''})
    expect(result.stdout).toMatch(/^crictl version v1\.37\.0 \(podctl \d+\.\d+\.\d+.*\)\n$/)
  })

  it('an unknown flag: "Incorrect Usage" and the help on stdout, the fatal line on stderr, exit 1', async () => {
    const app = await crictl(['--invalid'])
    expect(app).toMatchObject({code: 1, stdout: reference('--invalid').stdout})
    expect(app.stderr).toMatch(fatalLine('"flag provided but not defined: -invalid"'))
    const command = await crictl(['ps', '--bogus'])
    expect(command).toMatchObject({code: 1, stdout: reference('ps', '--bogus').stdout})
    expect(command.stderr).toMatch(fatalLine('"flag provided but not defined: -bogus"'))
  })

  it("a link named crictl to bin/run.js is crictl too (node keeps the link's name in argv[1]); podctl stays podctl", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crictl-link-'))
    try {
      symlinkSync(`${ROOT}bin/run.js`, join(dir, 'crictl'))
      const linked = await podctl(['--version'], {entry: join(dir, 'crictl'), env})
      expect(linked.stdout).toMatch(/^crictl version v1\.37\.0 /)
      const own = await podctl(['--version'], {env})
      expect(own.stdout).toMatch(/^podctl\/\d/)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it("an unknown command is crictl's help topic error, exit 3", async () => {
    expect(await crictl(['foo'])).toMatchObject({code: 3, stdout: '', stderr: "No help topic for 'foo'\n"})
  })

  it.each([['rm'], ['rmi'], ['rmp']])('crictl %s without arguments shows its usage and exits 0', async (command) => {
    expect(await crictl([command])).toMatchObject({code: 0, stdout: reference(command).stdout, stderr: ''})
  })

  it('crictl stop without an ID: cli.Exit, its line alone, exit 1; start without one: "ID cannot be empty"', async () => {
    expect(await crictl(['stop'])).toMatchObject({code: 1, stdout: '', stderr: 'you must specify at least one CONTAINER-ID or use --all\n'})
    const result = await crictl(['start'])
    expect(result).toMatchObject({code: 1, stdout: ''})
    expect(result.stderr).toMatch(fatalLine('"ID cannot be empty"'))
  })

  it("ps -l is --latest (podctl's -l is --label): the newest container of the pod", async () => {
    const result = await crictl(['ps', '-l', '-q', '--no-trunc', '-p', pod.id])
    expect(result).toMatchObject({code: 0, stdout: `${second}\n`, stderr: ''})
    expect(first).not.toBe(second)
  })

  it('exec CID echo hi and exec -s CID echo hi run the command without "--"', async () => {
    expect(await crictl(['exec', second, 'echo', 'hi'])).toMatchObject({code: 0, stdout: 'hi\n', stderr: ''})
    // exec -s: Println of stdout, then of stderr (crictl's ExecSync).
    expect(await crictl(['exec', '-s', second.slice(0, 12), 'echo', 'hi'])).toMatchObject({code: 0, stdout: 'hi\n\n\n', stderr: ''})
  })

  it("a failure exits 1 with the logrus fatal line and crictl's words for the command", async () => {
    const result = await crictl(['inspect', 'no-such-container-0f3a'])
    expect(result).toMatchObject({code: 1, stdout: ''})
    expect(result.stderr).toMatch(
      fatalLine(String.raw`"get the status of containers: get container status: rpc error: code = NotFound [^\n]*"`),
    )
  })
})
