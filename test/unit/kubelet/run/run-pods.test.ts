import {describe, expect, it} from 'vitest'

import type {CriClient} from '../../../../src/lib/cri/client.js'
import {PodctlError} from '../../../../src/lib/errors.js'
import {sandboxesByFullName} from '../../../../src/lib/kubelet/kuberuntime/sandbox.js'
import {failedOutcome, waitModes} from '../../../../src/lib/kubelet/run/run-pods.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'
import type {PodSandbox} from '../../../../src/generated/runtime/v1/api.js'

const sandbox = (id: string, name: string, namespace: string) => ({id, metadata: {name, namespace, uid: id, attempt: 0}}) as PodSandbox

describe('sandboxesByFullName', () => {
  it('finds the sandboxes of the pods to run by name_namespace, with one listing', async () => {
    const calls: string[] = []
    const items = [
      sandbox('a', 'web', 'default'),
      sandbox('b', 'web', 'prod'),
      sandbox('c', 'web', 'default'),
      sandbox('d', 'db', 'default'),
    ]
    const runtime = async (method: string) => {
      calls.push(method)
      return {items}
    }

    const client = {runtime} as unknown as CriClient
    const found = await sandboxesByFullName(client, [
      {name: 'web', namespace: 'default'},
      {name: 'new', namespace: 'default'},
    ])
    expect(calls).toEqual(['listPodSandbox'])
    expect([...found.keys()]).toEqual(['web_default'])
    expect(found.get('web_default')!.map((s) => s.id)).toEqual(['a', 'c'])
  })
})

describe('failedOutcome', () => {
  it('is the outcome of a pod that never got a sandbox', () => {
    const failure = new PodctlError('InternalError', 1, 'boom')
    const pod = {name: 'web', namespace: 'default', uid: 'u1'} as PodModel
    expect(failedOutcome(pod, failure)).toEqual({
      failure,
      result: {
        pod: 'web',
        namespace: 'default',
        uid: 'u1',
        sandboxId: null,
        attempt: 0,
        ip: null,
        containers: [],
        phase: null,
        logDirectory: '',
        exitCode: null,
        rolledBack: false,
        removed: false,
        error: {code: 'InternalError', exitCode: 1, message: 'boom'},
      },
    })
  })
})

describe('waitModes', () => {
  const pod = (name: string, startAfter?: PodModel['startAfter']) => ({name, namespace: 'ns', startAfter}) as PodModel

  it('a pod another one starts after is waited for until ready (OrderedReady) or completed (Job parallelism)', () => {
    const reason = 'because'
    const pods = [pod('db-0'), pod('db-1', {pod: 'db-0', until: 'ready', reason}), pod('j-2', {pod: 'j-1', until: 'completed', reason})]
    expect(waitModes(pods, 'running')).toEqual(
      new Map([
        ['db-0_ns', 'ready'],
        ['j-1_ns', 'completed'],
      ]),
    )
    // --wait completed is kept: it waits longer than ready.
    expect(waitModes(pods, 'completed').get('db-0_ns')).toBe('completed')
    expect(waitModes([pod('web')], 'none')).toEqual(new Map())
  })
})
