/**
 * `podctl cp -` (tar streams, issue 35 item 3) and the library's copies (issue 36 item 6) on the
 * lab's busybox: archives out that GNU tar lists and extracts, GNU tar's archives in, a hostile
 * archive refused with nothing written outside the directory, and the same through the library.
 */
import {execFile} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {PassThrough, Readable} from 'node:stream'
import {promisify} from 'node:util'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {connect, HostAccessError, type Pod, type Runtime} from '../../src/lib/api/index.js'
import {encodeHeader, endOfArchive} from '../../src/lib/host/tar-format.js'
import {pullBusybox} from '../support/containers.js'
import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {BIN} from '../support/podctl.js'

const run = promisify(execFile)
const client = labClient()
const namespace = uniqueNamespace('cp-tar')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-cp-tar-pods-'))
const local = mkdtempSync(join(tmpdir(), 'podctl-cp-tar-'))
let runtime: Runtime
let box: Pod

/** A shell pipeline with this checkout's podctl as `podctl`, against the lab. */
async function shell(script: string): Promise<{code: number; stdout: string; stderr: string}> {
  const env = {...process.env, ...labEnv(), NO_COLOR: '1', PODCTL: `${process.execPath} ${BIN}`}
  try {
    const {stdout, stderr} = await run('bash', ['-o', 'pipefail', '-c', script], {env: env as NodeJS.ProcessEnv})
    return {code: 0, stdout, stderr}
  } catch (error) {
    const failed = error as {code: number; stdout: string; stderr: string}
    return {code: failed.code, stdout: failed.stdout, stderr: failed.stderr}
  }
}

async function inBox(script: string): Promise<string> {
  const result = await box.container().exec(['sh', '-c', script])
  expect(result).toMatchObject({exitCode: 0, stderr: ''})
  return result.stdout
}

beforeAll(async () => {
  await pullBusybox(client)
  runtime = await connect({runtimeEndpoint: lab().endpoint, podLogsRoot: lab().logRoot, podDirRoot, env: {}})
  box = await runtime.runPod({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name: 'box', namespace},
    spec: {terminationGracePeriodSeconds: 1, containers: [{name: 'main', image: lab().busybox, command: ['sleep', '3600']}]},
  })
  await inBox(
    'mkdir -p /data/sub /srv && echo hello > /data/greeting.txt && chown 1234:50 /data/greeting.txt && chmod 640 /data/greeting.txt' +
      ' && ln -s greeting.txt /data/link && touch -d "2020-01-02 03:04:05" /data/greeting.txt && echo run > /data/sub/run.sh',
  )
}, 120_000)

afterAll(async () => {
  await runtime?.[Symbol.asyncDispose]()
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(podDirRoot, {recursive: true, force: true})
  rmSync(local, {recursive: true, force: true})
})

describe('podctl cp - (tar streams)', () => {
  it("writes a directory as a tar stream GNU tar lists with the container's owners, modes and mtimes, and extracts", async () => {
    const listed = await shell(`$PODCTL cp -n ${namespace} box/main:/data - | TZ=UTC tar -tvf - --numeric-owner`)
    expect(listed).toMatchObject({code: 0, stderr: ''})
    const lines = listed.stdout.trim().split('\n')
    expect(lines).toHaveLength(5)
    expect(lines[0]).toMatch(/^drwxr-xr-x 0\/0 +0 .* data\/$/)
    expect(lines[1]).toMatch(/^-rw-r----- 1234\/50 +6 2020-01-02 03:04 data\/greeting.txt$/)
    expect(lines[2]).toMatch(/^lrwxrwxrwx 0\/0 +0 .* data\/link -> greeting.txt$/)
    const out = join(local, 'out')
    mkdirSync(out)
    const extracted = await shell(`$PODCTL cp -n ${namespace} box/main:/data/greeting.txt - | tar -xf - -C ${out}`)
    expect(extracted).toMatchObject({code: 0, stdout: '', stderr: ''})
    expect(readFileSync(join(out, 'greeting.txt'), 'utf8')).toBe('hello\n')
  })

  it("extracts GNU tar's archive from stdin into a directory, as the container's root untarring it would", async () => {
    const source = join(local, 'src')
    mkdirSync(join(source, 'tree/deep'), {recursive: true})
    writeFileSync(join(source, 'tree/deep/a.txt'), 'from the host\n', {mode: 0o600})
    symlinkSync('deep/a.txt', join(source, 'tree/ln'))
    const result = await shell(`tar -c -C ${source} --owner=7 --group=8 tree | $PODCTL cp - box/main:/srv -n ${namespace}`)
    expect(result).toMatchObject({code: 0, stderr: ''})
    expect(result.stdout).toMatch(/^copied into [0-9a-f]{12}: 1 file, 14B, 2 directories, 1 symlink\n$/)
    expect(await inBox('stat -c "%a %u %g" /srv/tree/deep/a.txt; cat /srv/tree/ln')).toBe('600 7 8\nfrom the host\n')
  })

  it('refuses an entry that climbs out of the directory, naming it (exit 18), and writes nothing outside', async () => {
    const archive = join(local, 'evil.tar')
    const file = (name: string, content: string) => [
      encodeHeader({name, type: 'file', mode: 0o644, uid: 0, gid: 0, mtime: 0, size: content.length, linkname: ''}),
      Buffer.from(content.padEnd(512, '\0')),
    ]
    writeFileSync(archive, Buffer.concat([...file('fine.txt', 'ok'), ...file('../../evil', 'x'), endOfArchive()]))
    const result = await shell(`$PODCTL cp - box/main:/srv -n ${namespace} < ${archive}`)
    expect(result).toMatchObject({
      code: 18,
      stdout: '',
      stderr:
        'Error: tar entry ../../evil: ".." would lead out of the directory; podctl cp refuses it; ' +
        'extracted before it and left in place: 1 file (2 bytes)\n',
    })
    expect(await inBox('cat /srv/fine.txt; ls /evil / 2>&1 | grep -c evil || true')).toBe('ok1\n')
  })
})

describe('the library copies', () => {
  it('copies a file in and out, and a tar stream in and out, through the container root', async () => {
    const container = box.container()
    writeFileSync(join(local, 'lib-in.txt'), 'library\n')
    expect(await container.copyIn(join(local, 'lib-in.txt'), '/tmp/lib.txt')).toMatchObject({direction: 'in', files: 1, bytes: 8})
    expect(await container.copyOut('/tmp/lib.txt', join(local, 'lib-out.txt'))).toMatchObject({direction: 'out', files: 1})
    expect(readFileSync(join(local, 'lib-out.txt'), 'utf8')).toBe('library\n')

    const archive = new PassThrough()
    const chunks: Buffer[] = []
    archive.on('data', (chunk: Buffer) => chunks.push(chunk))
    expect(await container.copyArchiveOut('/data', archive)).toMatchObject({files: 2, directories: 2, symlinks: 1})
    expect(await container.copyArchiveIn(Readable.from([Buffer.concat(chunks)]), '/tmp')).toMatchObject({files: 2, directories: 2})
    expect(await inBox('cat /tmp/data/greeting.txt; stat -c "%a %u %g" /tmp/data/greeting.txt')).toBe('hello\n640 1234 50\n')
  })

  it('refuses a symlink trick in the library words, as a HostAccessError', async () => {
    const link = encodeHeader({name: 'up', type: 'symlink', mode: 0o777, uid: 0, gid: 0, mtime: 0, size: 0, linkname: '/'})
    const through = encodeHeader({name: 'up/etc/evil', type: 'file', mode: 0o644, uid: 0, gid: 0, mtime: 0, size: 0, linkname: ''})
    const error = await box
      .container()
      .copyArchiveIn(Readable.from([link, through, endOfArchive()]), '/srv')
      .catch((error_: unknown) => error_)
    expect(error).toBeInstanceOf(HostAccessError)
    expect((error as Error).message).toMatch(
      /^tar entry up\/etc\/evil: \/srv\/up in container main \([0-9a-f]+\) is a symlink; the copy extracts nothing through it; /,
    )
    expect((error as Error).message).toMatch(/; extracted before it and left in place: 0 files \(0 bytes\), 1 symlink$/)
    expect(await inBox('ls /etc/evil 2>&1 | grep -c "No such" || true')).toBe('1\n')
  })
})
