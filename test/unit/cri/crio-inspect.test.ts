import {mkdtempSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cgroupDriverFromCrioInfo, crioInspect, pauseImageFromCrioConfig} from '../../../src/lib/cri/crio-inspect.js'

/** CRI-O's /config: TOML as `crio status config` prints it (abridged). */
const CONFIG = `[crio]
  root = "/var/lib/containers/storage"
[crio.image]
  default_transport = "docker://"
  # pause_image = "commented/out:1"
  pause_image = "localhost:5000/podctl/pause:3.9"
  pause_command = ""
[crio.runtime]
  cgroup_manager = "cgroupfs"
`

let server: Server
let endpoint: string

beforeAll(async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'podctl-crio-')), 'crio.sock')
  endpoint = `unix://${path}`
  server = createServer((request, response) => {
    if (request.url === '/info') response.end(JSON.stringify({storage_driver: 'overlay', cgroup_driver: 'cgroupfs'}))
    else if (request.url === '/config') response.end(CONFIG)
    else {
      response.statusCode = 404
      response.end('404 page not found')
    }
  })
  await new Promise<void>((resolve) => {
    server.listen(path, resolve)
  })
})

afterAll(async () => {
  await new Promise((resolve) => {
    server.close(resolve)
  })
})

describe("CRI-O's inspect endpoints on its socket", () => {
  it('reads the cgroup driver from /info and the pause image from /config', async () => {
    expect(cgroupDriverFromCrioInfo(await crioInspect(endpoint, '/info'))).toBe('cgroupfs')
    expect(pauseImageFromCrioConfig(await crioInspect(endpoint, '/config'))).toBe('localhost:5000/podctl/pause:3.9')
  })

  it('answers undefined for anything else: no socket, a refusal, a body that says nothing', async () => {
    expect(await crioInspect(`${endpoint}.missing`, '/info')).toBeUndefined()
    expect(cgroupDriverFromCrioInfo('not json')).toBeUndefined()
    expect(cgroupDriverFromCrioInfo('{"cgroup_driver":"other"}')).toBeUndefined()
    expect(pauseImageFromCrioConfig('[crio.image]\n  # pause_image = "x"\n')).toBeUndefined()
  })
})
