import {mkdtempSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {CriClient} from '../../../src/lib/cri/client.js'
import {runtimeSandboxImage} from '../../../src/lib/images/sandbox-image.js'

let server: Server
let endpoint: string

beforeAll(async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'podctl-crio-')), 'crio.sock')
  endpoint = `unix://${path}`
  // CRI-O 1.26's /config, abridged.
  server = createServer((_request, response) => response.end('[crio.image]\n  pause_image = "localhost:5000/podctl/pause:3.9"\n'))
  await new Promise<void>((resolve) => {
    server.listen(path, resolve)
  })
})

afterAll(async () => {
  await new Promise((resolve) => {
    server.close(resolve)
  })
})

function client(runtimeName: string): CriClient {
  return {runtimeEndpoint: endpoint, runtime: async () => ({runtimeName})} as unknown as CriClient
}

describe('runtimeSandboxImage', () => {
  it("takes the verbose Status' config first (containerd, CRI-O 1.27+) without another call", async () => {
    const info = {config: JSON.stringify({sandboxImage: 'registry.k8s.io/pause:3.10'})}
    const noCalls = {runtime: () => Promise.reject(new Error('must not call'))} as unknown as CriClient
    expect(await runtimeSandboxImage(noCalls, info)).toBe('registry.k8s.io/pause:3.10')
  })

  it("reads CRI-O 1.26's pause_image from its /config, and asks nothing of another runtime", async () => {
    expect(await runtimeSandboxImage(client('cri-o'), {})).toBe('localhost:5000/podctl/pause:3.9')
    expect(await runtimeSandboxImage(client('containerd'), {})).toBeUndefined()
  })
})
