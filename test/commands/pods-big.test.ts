/**
 * `pods` at 5000 kubelet-labelled pods, against bench/fake-cri.mjs (the big-node bench's fake, which
 * logs the calls it answers): only the table shows the CONTAINERS column, so only the table (plain or
 * wide) makes ListContainers, 8 MB here; JSON, YAML, names and IDs read ListPodSandbox alone and print
 * what they printed before: the sandboxes as the runtime sent them, newest first.
 */
import {type ChildProcess, spawn} from 'node:child_process'
import {once} from 'node:events'
import {join} from 'node:path'

import * as grpc from '@grpc/grpc-js'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {ListPodSandboxResponse, type PodSandbox} from '../../src/generated/runtime/v1/api.js'
import {toJson} from '../../src/lib/output/serialize.js'
import {socketDir} from '../support/fake-runtime.js'
import {podctl, ROOT} from '../support/podctl.js'

const PODS = 5000
const dir = socketDir()
const socket = join(dir, 'cri.sock')
const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined}
const args = (...rest: string[]) => ['--runtime-endpoint', socket, ...rest]
let fake: ChildProcess
let calls: string[] = []

beforeAll(async () => {
  fake = spawn(process.execPath, [join(ROOT, 'bench', 'fake-cri.mjs'), socket, String(PODS)], {
    env: {...process.env, FAKE_CRI_LOG_CALLS: '1'},
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  let partial = ''
  let ready = () => {}
  const isReady = new Promise<void>((resolve) => {
    ready = resolve
  })
  fake.stdout!.setEncoding('utf8')
  fake.stdout!.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()!
    for (const line of lines) {
      if (line === 'ready') ready()
      else if (line.startsWith('call ')) calls.push(line.slice(5))
    }
  })
  await isReady
}, 60_000)

beforeEach(() => {
  calls = []
})

afterAll(async () => {
  fake.kill('SIGTERM')
  if (fake.exitCode === null) await once(fake, 'exit')
})

/** ListPodSandbox's answer as the fake sends it, decoded by the generated code (not the client's decoders). */
async function sandboxesAsSent(): Promise<PodSandbox[]> {
  const client = new grpc.Client(`unix://${socket}`, grpc.credentials.createInsecure(), {'grpc.max_receive_message_length': -1})
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    client.makeUnaryRequest(
      '/runtime.v1.RuntimeService/ListPodSandbox',
      (request: Buffer) => request,
      (response: Buffer) => response,
      Buffer.alloc(0),
      (error, response) => (error ? reject(error) : resolve(response!)),
    )
  })
  client.close()
  return ListPodSandboxResponse.decode(bytes).items
}

const newestFirst = (a: PodSandbox, b: PodSandbox) => Number(BigInt(b.createdAt) - BigInt(a.createdAt))

describe('pods at 5000 pods', () => {
  it('-o json prints every sandbox as sent, newest first, byte for byte, from ListPodSandbox alone', async () => {
    const [result, sent] = await Promise.all([podctl(args('pods', '-o', 'json'), {env}), sandboxesAsSent()])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(sent).toHaveLength(PODS)
    expect(result.stdout).toBe(`${toJson({items: [...sent].sort(newestFirst)})}\n`)
    expect(calls.filter((call) => call.startsWith('List'))).toEqual(['ListPodSandbox', 'ListPodSandbox'])
  }, 60_000)

  it('names, IDs and YAML make no ListContainers either', async () => {
    for (const output of [['-o', 'name'], ['-q'], ['-o', 'yaml'], ['-o', 'jsonpath={.items[0].id}']]) {
      calls = []
      const result = await podctl(args('pods', ...output), {env})
      expect(result.code, output.join(' ')).toBe(0)
      expect(calls, output.join(' ')).not.toContain('ListContainers')
    }
  }, 120_000)

  it("the table counts each pod's containers from one ListContainers, made alongside ListPodSandbox", async () => {
    const result = await podctl(args('pods'), {env})
    expect(result.code).toBe(0)
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(PODS + 1)
    expect(lines[0]).toMatch(/^POD ID\s+NAME\s+NAMESPACE\s+STATE\s+CONTAINERS\s+ATTEMPT\s+CREATED$/)
    // Pod i is the i-th newest; one pod in ten (i % 10 == 9) is not ready, its two containers exited.
    expect(lines[1]).toMatch(/\bReady\s+2\/2\s+0\s/)
    expect(lines[10]).toMatch(/\bNotReady\s+0\/2\s+0\s/)
    expect(calls.filter((call) => call.startsWith('List')).sort()).toEqual(['ListContainers', 'ListPodSandbox'])
  }, 60_000)
})
