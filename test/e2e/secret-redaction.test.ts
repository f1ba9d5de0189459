import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

/**
 * Env values taken from a Secret (secretKeyRef, envFrom secretRef, $(VAR) expansion of one) never
 * show in podctl's output: not in inspect (JSON or table, container or pod), not in ps/status, not
 * in run --debug. The variable names do; `exec ... printenv` (the user's explicit request) shows the value.
 */
const client = labClient()
const namespace = uniqueNamespace('e2e-redact')
const work = mkdtempSync(join(tmpdir(), 'podctl-redact-'))
const env = labEnv({HOME: work, PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: join(work, 'pods')})
const SECRET = 'pw-9f3a77c1-never-printed'
const PREFIXED = 'tok-51e0b2d4-never-printed'

const manifest = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: ${namespace}
stringData:
  password: ${SECRET}
  token: ${PREFIXED}
---
apiVersion: v1
kind: Pod
metadata:
  name: redact-pod
  namespace: ${namespace}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  containers:
    - name: app
      image: ${lab().busybox}
      command: ["/bin/sh", "-c", "sleep 3600", "$(DB_PASSWORD)"]
      envFrom:
        - prefix: S_
          secretRef:
            name: db
      env:
        - name: PLAIN
          value: visible-value
        - name: DB_PASSWORD
          valueFrom:
            secretKeyRef:
              name: db
              key: password
        - name: DSN
          value: "postgres://app:$(DB_PASSWORD)@db"
`

function run(args: string[], input?: string, extraEnv: Record<string, string> = {}) {
  return podctl(args, {env: {...env, ...extraEnv}, input})
}

function expectNoSecret(result: {stdout: string; stderr: string}) {
  for (const secret of [SECRET, PREFIXED]) {
    expect(result.stdout).not.toContain(secret)
    expect(result.stderr).not.toContain(secret)
  }
}

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('Secret-derived env values', () => {
  it('never show in run --debug, inspect, ps or status; exec printenv still shows them', async () => {
    const started = await run(['run', '-f', '-', '--debug'], manifest)
    expect(started.code, started.stderr).toBe(0)
    expect(started.stderr).toContain('debug: RuntimeService/CreateContainer')
    expectNoSecret(started)

    const inspect = await run(['inspect', '-n', namespace, 'redact-pod/app', '-o', 'json'])
    expect(inspect.code, inspect.stderr).toBe(0)
    expectNoSecret(inspect)
    const document = JSON.parse(inspect.stdout)
    expect(JSON.parse(document.status.annotations['io.podctl.secretEnv']).sort()).toEqual(['DB_PASSWORD', 'DSN', 'S_password', 'S_token'])
    const processEnv: string[] = document.info.runtimeSpec.process.env
    expect(processEnv).toEqual(
      expect.arrayContaining([
        'S_password=<redacted>',
        'S_token=<redacted>',
        'PLAIN=visible-value',
        'DB_PASSWORD=<redacted>',
        'DSN=<redacted>',
      ]),
    )
    expect(document.info.config.envs).toContainEqual({key: 'DB_PASSWORD', value: '<redacted>'})
    expect(document.info.config.envs).toContainEqual({key: 'PLAIN', value: 'visible-value'})
    expect(document.info.runtimeSpec.process.args).toEqual(['/bin/sh', '-c', 'sleep 3600', '<redacted>'])

    // Without the pod directory: the names come from the container's annotation.
    const elsewhere = await run(['inspect', '-n', namespace, 'redact-pod/app', '-o', 'yaml'], undefined, {
      PODCTL_POD_DIR_ROOT: join(work, 'nowhere'),
    })
    expect(elsewhere.code, elsewhere.stderr).toBe(0)
    expectNoSecret(elsewhere)
    expect(elsewhere.stdout).toContain('DB_PASSWORD=<redacted>')

    for (const args of [
      ['inspect', '-n', namespace, 'redact-pod/app'],
      ['inspect', '-n', namespace, 'redact-pod/app', '-o', 'table'],
      ['inspect', 'pod', '-n', namespace, 'redact-pod', '-o', 'json'],
      ['ps', '-n', namespace, '-o', 'json'],
      ['status', '-n', namespace, 'redact-pod', '-o', 'json'],
    ]) {
      const result = await run(args)
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0)
      expectNoSecret(result)
    }

    // The lab's busybox has no printenv applet: the shell prints the variables asked for.
    const script = String.raw`printf "%s\n" "$DB_PASSWORD" "$DSN" "$S_token"`
    const printenv = await run(['exec', '-n', namespace, 'redact-pod/app', '--', 'sh', '-c', script])
    expect(printenv.code, printenv.stderr).toBe(0)
    expect(printenv.stdout).toBe(`${SECRET}\npostgres://app:${SECRET}@db\n${PREFIXED}\n`)
  })

  it('kill leaves nothing behind and prints no value', async () => {
    const result = await run(['kill', '-n', namespace, 'redact-pod', '--grace-period', '0'])
    expect(result.code, result.stderr).toBe(0)
    expectNoSecret(result)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})
