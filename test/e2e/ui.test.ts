/**
 * `podctl ui` on the lab as a person uses it (issue 38's "done when"): in an 80x24 pseudo-terminal
 * the view lists the namespace's pods with CPU and memory from the runtime's stats; `/` filters;
 * Enter then `l` shows a container's log lines; `s` opens a shell in the container (a command's output on
 * the screen), and exiting it brings the view back; `d` describes the pod; `q` exits 0
 * with the terminal restored. Runs on every runtime of the lab.
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, beforeAll, describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl} from '../support/podctl.js'
import {podctlOnPty, type PtySession} from '../support/pty-screen.js'

const client = labClient()
const namespace = uniqueNamespace('ui')
const work = mkdtempSync(join(tmpdir(), 'podctl-ui-e2e-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: join(work, 'logs'), PODCTL_POD_DIR_ROOT: join(work, 'pods'), NO_COLOR: '1'})
let session: PtySession | undefined

useLabNamespace(client, namespace, work)

function pod(name: string, greeting: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sh, -c, 'echo ${greeting}; echo second line; exec sleep 3600']
`
}

beforeAll(async () => {
  for (const [name, greeting] of [
    ['web', 'hello from web'],
    ['db', 'hello from db'],
  ]) {
    const file = join(work, `${name}.yaml`)
    writeFileSync(file, pod(name, greeting))
    const result = await podctl(['run', '-f', file, '--wait', 'running', '-q'], {env})
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
  }
}, 120_000)

afterEach(() => {
  session?.kill()
  session = undefined
})

describe('podctl ui on the lab, 80x24', () => {
  it('lists the pods with CPU and memory; / filters; Enter then l shows the log; q exits 0 restored', async () => {
    session = podctlOnPty(['ui', '-n', namespace], env)
    await session.waitFor(new RegExp(`^${lab().runtimeName} `))
    // CPU is the difference of two samples: it shows from the second refresh on.
    await session.waitFor(new RegExp(String.raw`^. web +${namespace.slice(0, 8)}.* 1/1 +Running +0 +\d+m +[\d.]+[KM]i `), 30_000)
    await session.waitFor(/^. db .* 1\/1 +Running /)
    session.press('/web\r')
    await session.waitFor(/^Pods \/web \(1 of 2\)/)
    expect(session.lines().some((line) => / db /.test(line))).toBe(false)
    session.press('\r')
    await session.waitFor(/^Containers of web_/)
    session.press('l')
    await session.waitFor(/^ {2}hello from web$/)
    await session.waitFor(/^ {2}second line$/)
    session.press('q')
    expect(await session.ended()).toEqual({code: 0, echo: true, canonical: true, normalScreen: true})
  }, 90_000)

  it('s opens a shell in the container and exiting it comes back to the view; d describes the pod', async () => {
    session = podctlOnPty(['ui', '-n', namespace], env)
    await session.waitFor(/^> db /)
    session.press('\r')
    await session.waitFor(/^Containers of db_/)
    session.press('s')
    await session.waitFor(/^podctl ui: a shell in db_/)
    session.press('echo "sum=$((40 + 2))"\r')
    await session.waitFor(/^sum=42$/)
    session.press('exit 3\r')
    await session.waitFor(/^The shell in db_.*\/app exited 3$/)
    await session.waitFor(/^Containers of db_/)
    session.press('d')
    await session.waitFor(/^Describe db_/)
    await session.waitFor(/^ {2}Phase: +Running \(ready\)$/)
    await session.waitFor(/^ {2}Events:$/)
    session.press('\u0003')
    expect(await session.ended()).toEqual({code: 0, echo: true, canonical: true, normalScreen: true})
  }, 90_000)
})
