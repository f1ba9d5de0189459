import {describe, expect, it} from 'vitest'

import {AmbiguousError, NotFoundError, UsageError} from '../../../src/lib/errors.js'
import type {CriClient} from '../../../src/lib/cri/client.js'
import {groupByPod, leftAloneNote, selectPods, selectPodsFromRuntime, validateSelection} from '../../../src/lib/node/select.js'
import type {PodSandbox} from '../../../src/generated/runtime/v1/api.js'

function sandbox(id: string, name: string, namespace: string, createdAt: string, labels: Record<string, string> = {}): PodSandbox {
  return {
    id,
    metadata: {name, namespace, uid: `${name}-${namespace}`, attempt: 0},
    state: 'SANDBOX_READY' as PodSandbox['state'],
    createdAt,
    labels,
    annotations: {},
    runtimeHandler: '',
  }
}

const sandboxes = [
  sandbox('aaa111', 'web', 'default', '100', {app: 'web'}),
  sandbox('aaa222', 'web', 'default', '300', {app: 'web'}),
  sandbox('bbb111', 'web', 'prod', '200', {app: 'web'}),
  sandbox('ccc111', 'db', 'prod', '400', {app: 'db'}),
  sandbox('ddd111', 'job', 'ci-1', '50'),
]

const names = (outcome: ReturnType<typeof selectPods>) => outcome.pods.map((pod) => pod.fullName)

describe('validateSelection', () => {
  it('refuses nothing selected and mixed modes', () => {
    expect(() => validateSelection({refs: []})).toThrow(UsageError)
    expect(() => validateSelection({refs: ['web'], all: true})).toThrow(/either POD names or --all/)
    expect(() => validateSelection({refs: ['web'], labels: {app: 'web'}})).toThrow(/--label/)
    expect(() => validateSelection({refs: [], all: true, labels: {app: 'web'}})).toThrow(UsageError)
    expect(() => validateSelection({refs: [], all: true})).not.toThrow()
    expect(() => validateSelection({refs: [], labels: {app: 'web'}})).not.toThrow()
  })
})

describe('selectPods', () => {
  it('names resolve in the default namespace, or -n, with all attempts newest first', () => {
    const outcome = selectPods(sandboxes, {refs: ['web']})
    expect(names(outcome)).toEqual(['web_default'])
    expect(outcome.pods[0].sandboxes.map((s) => s.id)).toEqual(['aaa222', 'aaa111'])
    expect(names(selectPods(sandboxes, {refs: ['web'], namespace: 'prod'}))).toEqual(['web_prod'])
  })

  it('accepts full names and ID prefixes, once per pod', () => {
    expect(names(selectPods(sandboxes, {refs: ['web_prod', 'ccc', 'db_prod', 'aaa2']}))).toEqual(['web_prod', 'db_prod', 'web_default'])
  })

  it('collects unknown references without stopping the others', () => {
    const outcome = selectPods(sandboxes, {refs: ['nope', 'web', 'db', 'zzz', 'web_staging']})
    expect(names(outcome)).toEqual(['web_default'])
    expect(outcome.failures.map((failure) => failure.ref)).toEqual(['nope', 'db', 'zzz', 'web_staging'])
    expect(outcome.failures.every((failure) => failure.error instanceof NotFoundError)).toBe(true)
    // A prefix that names one pod is that pod; db lives in prod, so a bare "db" is not in default.
    expect(names(selectPods(sandboxes, {refs: ['b', 'aaa']}))).toEqual(['web_prod', 'web_default'])
  })

  it('an ID prefix shared by two pods is ambiguous', () => {
    const outcome = selectPods([...sandboxes, sandbox('aaa999', 'other', 'default', '10')], {refs: ['aaa']})
    expect(outcome.pods).toEqual([])
    expect(outcome.failures[0].error).toBeInstanceOf(AmbiguousError)
  })

  it('--all selects every pod, or one namespace with -n (exact or glob)', () => {
    expect(names(selectPods(sandboxes, {refs: [], all: true}))).toEqual(['db_prod', 'web_default', 'web_prod', 'job_ci-1'])
    expect(names(selectPods(sandboxes, {refs: [], all: true, namespace: 'prod'}))).toEqual(['db_prod', 'web_prod'])
    expect(names(selectPods(sandboxes, {refs: [], all: true, namespace: 'ci-*'}))).toEqual(['job_ci-1'])
    expect(names(selectPods(sandboxes, {refs: [], all: true, namespace: 'nothing'}))).toEqual([])
  })

  it('--label matches every pair, restricted by -n', () => {
    expect(names(selectPods(sandboxes, {refs: [], labels: {app: 'web'}}))).toEqual(['web_default', 'web_prod'])
    expect(names(selectPods(sandboxes, {refs: [], labels: {app: 'web'}, namespace: 'prod'}))).toEqual(['web_prod'])
    expect(names(selectPods(sandboxes, {refs: [], labels: {app: 'web', tier: 'x'}}))).toEqual([])
  })
})

describe('groupByPod', () => {
  it('groups attempts by name and namespace', () => {
    const pods = groupByPod(sandboxes)
    expect(pods.find((pod) => pod.fullName === 'web_default')!.sandboxes.map((s) => s.id)).toEqual(['aaa222', 'aaa111'])
    expect(pods).toHaveLength(4)
  })
})

describe('selectPodsFromRuntime', () => {
  it('lists sandboxes (labels sent to the runtime) and containers once, concurrently, and selects from them', async () => {
    const calls: Array<{method: string; request: unknown}> = []
    const client = {
      async runtime(method: string, request: unknown) {
        calls.push({method, request})
        return method === 'listPodSandbox' ? {items: sandboxes} : {containers: [{id: 'c1'}]}
      },
    } as unknown as CriClient
    const outcome = await selectPodsFromRuntime(client, {refs: [], labels: {app: 'web'}, namespace: 'prod'})
    expect(calls).toEqual([
      {method: 'listPodSandbox', request: {filter: {labelSelector: {app: 'web'}}}},
      {method: 'listContainers', request: {filter: {}}},
    ])
    expect(names(outcome)).toEqual(['web_prod'])
    expect(outcome.containers).toEqual([{id: 'c1'}])
  })

  it('refuses a bad selection before any call', async () => {
    const client = {runtime: () => Promise.reject(new Error('called'))} as unknown as CriClient
    await expect(selectPodsFromRuntime(client, {refs: []})).rejects.toThrow(UsageError)
  })
})

describe('selectPods: kill -f workloads', () => {
  const replicas = [
    sandbox('r1', 'web-h4sh-bcdfg', 'prod', '10', {app: 'web', 'pod-template-hash': 'h4sh'}),
    sandbox('r2', 'web-h4sh-hjklm', 'prod', '20', {app: 'web', 'pod-template-hash': 'h4sh'}),
    // Same labels, another name form (a pod someone ran by hand), another namespace, other labels: not the Deployment's.
    sandbox('x1', 'web-manual', 'prod', '30', {app: 'web', 'pod-template-hash': 'h4sh'}),
    sandbox('x2', 'web-h4sh-bcdfg', 'default', '40', {app: 'web', 'pod-template-hash': 'h4sh'}),
    sandbox('x3', 'web-h4sh-npqrs', 'prod', '50', {app: 'web', 'pod-template-hash': 'other'}),
  ]
  const web = {
    kind: 'Deployment',
    name: 'web',
    namespace: 'prod',
    labels: {app: 'web', 'pod-template-hash': 'h4sh'},
    podName: /^web-h4sh-[bcdfghjklmnpqrstvwxz2456789]{5}$/,
  }

  it('selects every replica by labels, namespace and name form; a workload with none is NotFound', () => {
    const outcome = selectPods(replicas, {refs: ['solo_prod'], workloads: [web, {...web, name: 'api', labels: {app: 'api'}}]})
    expect(names(outcome)).toEqual(['web-h4sh-hjklm_prod', 'web-h4sh-bcdfg_prod'])
    expect(outcome.failures.map(({ref, error}) => [ref, error.constructor, error.message])).toEqual([
      ['solo_prod', NotFoundError, expect.stringContaining('"solo_prod" not found')],
      ['Deployment/api', NotFoundError, 'Deployment api: no pod of it in namespace "prod"'],
    ])
  })

  it('a workload that names no namespace is looked for in --namespace, else default', () => {
    const anywhere = {...web, namespace: undefined}
    expect(names(selectPods(replicas, {refs: [], workloads: [anywhere]}))).toEqual(['web-h4sh-bcdfg_default'])
    expect(names(selectPods(replicas, {refs: [], namespace: 'prod', workloads: [anywhere]}))).toHaveLength(2)
    expect(() => validateSelection({refs: [], all: true, workloads: [web]})).toThrow(/-f FILE or --all/)
  })
})

describe('selectPods: only the pods podctl made (kill --all, -l, -f as podctl, not as crictl)', () => {
  /** What podctl writes on every sandbox it makes. */
  const made = (one: PodSandbox): PodSandbox => ({
    ...one,
    annotations: {'io.podctl.restartPolicy': 'Always', 'io.podctl.podDirectory': `/var/lib/podctl/pods/${one.metadata?.uid}`},
  })
  const mixed = [
    made(sandbox('p1', 'web', 'ci', '10', {app: 'web'})),
    // crictl's pod, and a kubelet's static pod run --static handed it: labels alike, none of podctl's sandbox annotations.
    sandbox('c1', 'tool', 'ci', '20', {app: 'web'}),
    {...sandbox('k1', 'etcd-node', 'ci', '30', {app: 'web'}), annotations: {'io.podctl.staticPod': 'true'}},
    made(sandbox('p2', 'web-h4sh-bcdfg', 'ci', '40', {app: 'web', 'pod-template-hash': 'h4sh'})),
    sandbox('c2', 'web-h4sh-hjklm', 'ci', '50', {app: 'web', 'pod-template-hash': 'h4sh'}),
  ]

  it("--all and --label choose podctl's pods and name the others left alone", () => {
    const all = selectPods(mixed, {refs: [], all: true, namespace: 'ci', onlyPodctl: true})
    expect(names(all)).toEqual(['web-h4sh-bcdfg_ci', 'web_ci'])
    expect(all.leftAlone).toEqual(['etcd-node_ci', 'tool_ci', 'web-h4sh-hjklm_ci'])
    expect(names(selectPods(mixed, {refs: [], labels: {app: 'web'}, onlyPodctl: true}))).toEqual(['web-h4sh-bcdfg_ci', 'web_ci'])
    // As crictl (rmp -a): every pod.
    const every = selectPods(mixed, {refs: [], all: true})
    expect(names(every)).toHaveLength(5)
    expect(every.leftAlone).toBeUndefined()
  })

  it("-f's workloads choose podctl's replicas; a pod named by reference is chosen whatever made it", () => {
    const web = {kind: 'Deployment', name: 'web', namespace: 'ci', labels: {'pod-template-hash': 'h4sh'}, podName: /^web-h4sh-[a-z]{5}$/}
    const outcome = selectPods(mixed, {refs: ['tool_ci'], workloads: [web], onlyPodctl: true})
    expect(names(outcome)).toEqual(['tool_ci', 'web-h4sh-bcdfg_ci'])
    expect(outcome.leftAlone).toEqual(['web-h4sh-hjklm_ci'])
  })

  it('says what it left alone, and how to kill one of them', () => {
    expect(leftAloneNote(['tool_ci'], 'kill')).toBe('left alone 1 pod podctl did not make (tool_ci); name a pod to kill it')
    expect(leftAloneNote(['a', 'b', 'c', 'd', 'e', 'f', 'g'], 'remove')).toBe(
      'left alone 7 pods podctl did not make (a, b, c, d, e and 2 more); name a pod to remove it',
    )
  })
})
