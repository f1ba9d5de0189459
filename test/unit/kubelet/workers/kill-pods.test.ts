import {describe, expect, it} from 'vitest'

import type {CriClient} from '../../../../src/lib/cri/client.js'
import {ExitCode, RuntimeError} from '../../../../src/lib/errors.js'
import {killPods} from '../../../../src/lib/kubelet/workers/kill-pods.js'
import type {PodSandbox} from '../../../../src/generated/runtime/v1/api.js'

const sandbox = (id: string, name: string) =>
  ({
    id,
    metadata: {name, namespace: 'default', uid: id, attempt: 0},
    state: 'SANDBOX_READY',
    createdAt: '1',
    labels: {},
    annotations: {},
  }) as PodSandbox

/** No containers: each kill is StopPodSandbox then RemovePodSandbox; `fail` names sandboxes whose stop fails. */
function client(fail: (id: string) => unknown) {
  const calls: string[] = []
  const runtime = async (method: string, request: {podSandboxId?: string}) => {
    calls.push(`${method} ${request.podSandboxId ?? ''}`.trim())
    if (method === 'stopPodSandbox') {
      const error = fail(request.podSandboxId ?? '')
      if (error) throw error
    }

    return {}
  }

  return {client: {runtime} as unknown as CriClient, calls}
}

describe('killPods', () => {
  it('kills every pod, reports each as it is killed, and keeps going past a failure', async () => {
    const {client: cri} = client((id) => (id === 'b' ? new RuntimeError('StopPodSandbox failed: busy') : undefined))
    const killed: string[] = []
    let settled = 0
    const pods = [
      {fullName: 'a_default', sandboxes: [sandbox('a', 'a')]},
      {fullName: 'b_default', sandboxes: [sandbox('b', 'b')]},
      {fullName: 'c_default', sandboxes: [sandbox('c', 'c')]},
    ]
    const outcome = await killPods(cri, pods, {
      parallel: 2,
      requestedBy: 'a test',
      containers: [],
      onKilled: (result) => killed.push(result.pod),
      onSettled: () => settled++,
    })
    expect(outcome.items.map((item) => item.pod)).toEqual(['a_default', 'b_default', 'c_default'])
    expect(killed.sort()).toEqual(['a_default', 'c_default'])
    expect(settled).toBe(3)
    expect(outcome.failures).toHaveLength(1)
    expect(outcome.failures[0].pod).toBe('b_default')
    expect(outcome.failures[0].error.message).toContain('StopPodSandbox failed: busy')
  })

  it('turns anything thrown that is not a PodctlError into an internal error', async () => {
    const {client: cri} = client(() => new TypeError('bug'))
    const outcome = await killPods(cri, [{fullName: 'a_default', sandboxes: [sandbox('a', 'a')]}], {
      parallel: 1,
      requestedBy: 'a test',
      containers: [],
    })
    expect(outcome.failures[0].error).toMatchObject({code: 'InternalError', exitCode: ExitCode.INTERNAL})
  })
})
