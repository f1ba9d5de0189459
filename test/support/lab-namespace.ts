import {rmSync} from 'node:fs'

import {afterAll, beforeAll, expect} from 'vitest'

import type {CriClient} from '../../src/lib/cri/client.js'
import {pullBusybox} from './containers.js'
import {cleanupNamespace, sandboxesIn} from './lab.js'

/**
 * The hooks of an e2e file whose pods run the lab's busybox in a namespace of their own: the image
 * is pulled before the first test; after the last, the namespace is emptied, nothing may be left in
 * it (a leak fails the file), the client is closed and `work`, if given, is removed.
 */
export function useLabNamespace(client: CriClient, namespace: string, work?: string): void {
  beforeAll(async () => {
    await pullBusybox(client)
  })

  afterAll(async () => {
    await cleanupNamespace(client, namespace)
    expect(await sandboxesIn(client, namespace)).toEqual([])
    client.close()
    if (work) rmSync(work, {recursive: true, force: true})
  })
}
