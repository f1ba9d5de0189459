/**
 * What the light unary transport (src/lib/cri/http2/) promises a process, seen from outside it:
 * `podctl pods` loads neither node:http2 nor what it drags in (tls, http, _http_*), and an idle
 * connection never keeps a library user's process alive. Against bench/fake-cri.mjs (grpc-js's server).
 */
import {type ChildProcess, spawn} from 'node:child_process'
import {once} from 'node:events'
import {readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {socketDir} from '../support/fake-runtime.js'
import {endpointEnv, podctl, ROOT} from '../support/podctl.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
let fake: ChildProcess

beforeAll(async () => {
  fake = spawn(process.execPath, [join(ROOT, 'bench', 'fake-cri.mjs'), socket, '3'], {stdio: ['ignore', 'pipe', 'ignore']})
  fake.stdout!.setEncoding('utf8')
  await new Promise<void>((resolve) => {
    fake.stdout!.on('data', (chunk: string) => {
      if (chunk.includes('ready')) resolve()
    })
  })
}, 60_000)

afterAll(async () => {
  fake.kill('SIGTERM')
  if (fake.exitCode === null) await once(fake, 'exit')
})

describe('the unary transport seen from a process', () => {
  it('podctl pods lists over HTTP/2 without loading node:http2, tls or http', async () => {
    const lists = join(dir, 'modules')
    const preload = join(dir, 'record-modules.cjs')
    // Every podctl process (a launcher may start another) writes the built-in modules it loaded as it exits.
    const record = [
      `const {mkdirSync, writeFileSync} = require('fs')`,
      `process.on('exit', () => {`,
      `  mkdirSync(${JSON.stringify(lists)}, {recursive: true})`,
      `  writeFileSync(${JSON.stringify(lists)} + '/' + process.pid + '.json', JSON.stringify(process.moduleLoadList))`,
      `})`,
    ]
    writeFileSync(preload, record.join('\n'))
    const result = await podctl(['pods'], {env: endpointEnv(`unix://${socket}`, {NODE_OPTIONS: `--require ${preload}`})})
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout.split('\n')[0]).toMatch(/^POD ID\s+NAME\s+NAMESPACE\s+STATE/)
    expect(result.stdout.trim().split('\n')).toHaveLength(4)
    const loaded = readdirSync(lists).flatMap((file) => JSON.parse(readFileSync(join(lists, file), 'utf8')) as string[])
    expect(loaded).toContain('NativeModule net')
    expect(loaded.filter((name) => /^NativeModule (http2|tls|_http_\w+|https?|internal\/http2\/.*)$/.test(name))).toEqual([])
  })

  it('a library user whose calls are done exits without closing the client: the idle connection holds nothing', async () => {
    const client = pathToFileURL(join(ROOT, 'dist', 'lib', 'cri', 'client.js')).href
    const script = [
      `const {CriClient} = await import(${JSON.stringify(client)})`,
      `const cri = new CriClient({runtimeEndpoint: ${JSON.stringify(`unix://${socket}`)}, connectTimeoutMs: 2000, callTimeoutMs: 5000})`,
      `console.log((await cri.runtime('version', {})).runtimeName)`,
    ].join('\n')
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null]
    clearTimeout(killer)
    expect(signal).toBeNull()
    expect(code).toBe(0)
    expect(stdout.trim()).toBe('fake-cri')
  }, 30_000)
})
