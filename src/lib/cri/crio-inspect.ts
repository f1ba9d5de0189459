/**
 * CRI-O's own HTTP endpoints on its CRI socket (server/inspect.go, served beside gRPC through cmux):
 * `/info` (JSON: storage driver and root, `cgroup_driver`) and `/config` (its whole configuration as
 * TOML). They are what `crio status info|config` reads, and the only place CRI-O up to 1.27 names its
 * cgroup driver (no RuntimeConfig before 1.28) and its pause image (no verbose Status info before 1.27).
 * Read-only and best effort: any failure (another runtime, a refused or slow answer) is undefined.
 */
import {request} from 'node:http'

import {socketPath} from './endpoint.js'

/** One small GET; CRI-O answers from memory. */
export const CRIO_INSPECT_TIMEOUT_MS = 2000
/** /config is some 30 KB of TOML; anything much larger is not CRI-O's answer. */
const MAX_BODY_BYTES = 1024 * 1024

/** The body of GET `path` on the endpoint's socket when it answers 200, else undefined. */
export async function crioInspect(endpoint: string, path: '/info' | '/config'): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    const call = request({socketPath: socketPath(endpoint), path, method: 'GET', timeout: CRIO_INSPECT_TIMEOUT_MS}, (response) => {
      if (response.statusCode !== 200) {
        response.resume()
        resolve(undefined)
        return
      }

      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size <= MAX_BODY_BYTES) {
          chunks.push(chunk)
          return
        }

        resolve(undefined)
        call.destroy()
      })
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
      response.on('error', () => resolve(undefined))
    })
    call.on('timeout', () => call.destroy())
    call.on('error', () => resolve(undefined))
    call.end()
  })
}

/** `cgroup_driver` of CRI-O's /info: "cgroupfs" or "systemd". */
export function cgroupDriverFromCrioInfo(body: string | undefined): 'cgroupfs' | 'systemd' | undefined {
  if (!body) return undefined
  try {
    const driver = (JSON.parse(body) as {cgroup_driver?: unknown}).cgroup_driver
    return driver === 'cgroupfs' || driver === 'systemd' ? driver : undefined
  } catch {
    return undefined
  }
}

/** `pause_image` of CRI-O's /config (TOML: `[crio.image]` … `pause_image = "…"`). */
export function pauseImageFromCrioConfig(body: string | undefined): string | undefined {
  const match = body && /^\s*pause_image\s*=\s*"([^"]+)"\s*$/m.exec(body)
  return match ? match[1] : undefined
}
