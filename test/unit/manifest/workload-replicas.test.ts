import {describe, expect, it} from 'vitest'

import type {JsonObject} from '../../../src/lib/manifest/fields.js'
import {podMatchesFromDocuments, podsFromDocuments} from '../../../src/lib/manifest/inputs.js'
import {podsFromWorkload, templateHash} from '../../../src/lib/manifest/workloads.js'

const container = {name: 'app', image: 'busybox'}

function deployment(replicas?: number): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {name: 'web', namespace: 'prod'},
    spec: {
      ...(replicas === undefined ? {} : {replicas}),
      selector: {matchLabels: {app: 'web'}},
      template: {metadata: {labels: {app: 'web'}}, spec: {containers: [container]}},
    },
  }
}

function statefulSet(spec: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {name: 'db'},
    spec: {
      serviceName: 'db',
      replicas: 3,
      selector: {matchLabels: {app: 'db'}},
      template: {metadata: {labels: {app: 'db'}}, spec: {containers: [container]}},
      volumeClaimTemplates: [{metadata: {name: 'data'}}],
      ...spec,
    },
  }
}

function job(spec: JsonObject): JsonObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {name: 'work', uid: 'u-1'},
    spec: {template: {spec: {restartPolicy: 'Never', containers: [container]}}, ...spec},
  }
}

const names = (pods: Array<{document: JsonObject}>) => pods.map((pod) => (pod.document.metadata as {name: string}).name)
const counter = () => {
  let next = 0
  return () => next++ % 27
}

describe('workload replicas', () => {
  it('a Deployment makes spec.replicas pods (default 1) of one ReplicaSet, distinct names, one pod-template-hash', () => {
    expect(podsFromWorkload(deployment(), 'Deployment', 'd.yaml').pods).toHaveLength(1)
    const {pods} = podsFromWorkload(deployment(2), 'Deployment', 'd.yaml', {random: counter()})
    const hash = templateHash((deployment().spec as JsonObject).template)
    expect(names(pods)).toEqual([`web-${hash}-bcdfg`, `web-${hash}-hjklm`])
    expect(pods.map((pod) => (pod.document.metadata as {labels: object}).labels)).toEqual([
      {app: 'web', 'pod-template-hash': hash},
      {app: 'web', 'pod-template-hash': hash},
    ])
    expect(pods.map((pod) => pod.owner)).toEqual([
      {kind: 'Deployment', name: 'web', via: `ReplicaSet web-${hash}`, replica: 0, replicas: 2},
      {kind: 'Deployment', name: 'web', via: `ReplicaSet web-${hash}`, replica: 1, replicas: 2},
    ])
    expect(pods.every((pod) => pod.startAfter === undefined)).toBe(true)
  })

  it('--replicas replaces spec.replicas, 0 included; a negative spec.replicas is refused with its path', () => {
    expect(podsFromWorkload(deployment(2), 'Deployment', 'd.yaml', {replicas: 4}).pods).toHaveLength(4)
    expect(podsFromWorkload(deployment(2), 'Deployment', 'd.yaml', {replicas: 0}).pods).toEqual([])
    expect(() => podsFromWorkload(deployment(-1), 'Deployment', 'd.yaml')).toThrow(/^d\.yaml: spec\.replicas /)
  })

  it('a StatefulSet makes <sts>-<ordinal> from spec.ordinals.start, each with its hostname, subdomain, labels and claim', () => {
    const {pods} = podsFromWorkload(statefulSet({ordinals: {start: 5}}), 'StatefulSet', 's.yaml')
    expect(names(pods)).toEqual(['db-5', 'db-6', 'db-7'])
    const second = pods[1].document
    expect(second.spec).toMatchObject({
      hostname: 'db-6',
      subdomain: 'db',
      volumes: [{name: 'data', persistentVolumeClaim: {claimName: 'data-db-6'}}],
    })
    expect((second.metadata as {labels: object}).labels).toMatchObject({
      'statefulset.kubernetes.io/pod-name': 'db-6',
      'apps.kubernetes.io/pod-index': '6',
    })
  })

  it('OrderedReady starts each StatefulSet pod once the one before is ready; Parallel starts them together', () => {
    const ordered = podsFromWorkload(statefulSet(), 'StatefulSet', 's.yaml').pods
    expect(ordered.map((pod) => pod.startAfter?.pod)).toEqual([undefined, 'db-0', 'db-1'])
    expect(ordered[2].startAfter).toEqual({
      pod: 'db-1',
      until: 'ready',
      reason: 'StatefulSet db starts pod db-2 once db-1 is Running and Ready (OrderedReady)',
    })
    const parallel = podsFromWorkload(statefulSet({podManagementPolicy: 'Parallel'}), 'StatefulSet', 's.yaml').pods
    expect(parallel.map((pod) => pod.startAfter)).toEqual([undefined, undefined, undefined])
    expect(() => podsFromWorkload(statefulSet({podManagementPolicy: 'Random'}), 'StatefulSet', 's.yaml')).toThrow(
      /spec\.podManagementPolicy/,
    )
  })

  it('a Job runs completions pods, at most parallelism at once: pod N waits for pod N - parallelism to complete', () => {
    const {pods} = podsFromWorkload(job({completions: 4, parallelism: 2}), 'Job', 'j.yaml')
    expect(pods).toHaveLength(4)
    expect(pods.map((pod) => pod.startAfter?.until)).toEqual([undefined, undefined, 'completed', 'completed'])
    expect(pods[2].startAfter?.pod).toBe(names(pods)[0])
    expect(pods[3].startAfter?.pod).toBe(names(pods)[1])
    // completions defaults to parallelism, parallelism to 1.
    expect(podsFromWorkload(job({parallelism: 3}), 'Job', 'j.yaml').pods.every((pod) => !pod.startAfter)).toBe(true)
    expect(podsFromWorkload(job({parallelism: 3}), 'Job', 'j.yaml').pods).toHaveLength(3)
    expect(podsFromWorkload(job({}), 'Job', 'j.yaml').pods).toHaveLength(1)
  })

  it('an Indexed Job gets <job>-<index>-<5 chars> and its completion index in label, annotation and JOB_COMPLETION_INDEX', () => {
    const {pods} = podsFromWorkload(job({completionMode: 'Indexed', completions: 3, parallelism: 3}), 'Job', 'j.yaml')
    expect(names(pods).map((name) => name.replace(/-[^-]{5}$/, ''))).toEqual(['work-0', 'work-1', 'work-2'])
    const metadata = pods[2].document.metadata as {labels: Record<string, string>; annotations: Record<string, string>}
    expect(metadata.labels['batch.kubernetes.io/job-completion-index']).toBe('2')
    expect(metadata.annotations['batch.kubernetes.io/job-completion-index']).toBe('2')
    expect(JSON.stringify(pods[2].document.spec)).toContain('JOB_COMPLETION_INDEX')
  })

  it('a DaemonSet makes one pod on one node, whatever --replicas says', () => {
    const daemonSet = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: {name: 'agent'},
      spec: {selector: {matchLabels: {app: 'a'}}, template: {metadata: {labels: {app: 'a'}}, spec: {containers: [container]}}},
    }
    expect(podsFromWorkload(daemonSet, 'DaemonSet', 'ds.yaml', {replicas: 3}).pods).toHaveLength(1)
  })

  it('podsFromDocuments: every replica is a pod; workloads scaled to 0 make none without an error', () => {
    const pods = podsFromDocuments([{document: statefulSet({volumeClaimTemplates: []}), label: 's.yaml'}])
    expect(pods.map((pod) => [pod.name, pod.subdomain, pod.startAfter?.pod])).toEqual([
      ['db-0', 'db', undefined],
      ['db-1', 'db', 'db-0'],
      ['db-2', 'db', 'db-1'],
    ])
    expect(podsFromDocuments([{document: deployment(3), label: 'd.yaml'}], {replicas: 0})).toEqual([])
  })
})

describe('replica identity', () => {
  const metadataOf = (pods: Array<{document: JsonObject}>) => pods.map((pod) => pod.document.metadata)

  it('the same workload read twice names and labels its pods the same (a re-read file changes nothing)', () => {
    for (const [document, kind] of [
      [deployment(3), 'Deployment'],
      [job({completions: 2, parallelism: 2}), 'Job'],
      [{...job({completions: 2}), metadata: {name: 'work'}}, 'Job'],
    ] as const) {
      const first = podsFromWorkload(structuredClone(document), kind, 'w.yaml').pods
      const again = podsFromWorkload(structuredClone(document), kind, 'w.yaml').pods
      expect(metadataOf(again)).toEqual(metadataOf(first))
      expect(new Set(names(first)).size).toBe(first.length)
    }
  })

  it("a changed template, another namespace or another replica gives other names, each of the controller's form", () => {
    const base = podsFromWorkload(deployment(2), 'Deployment', 'd.yaml').pods
    const changed = deployment(2)
    ;((changed.spec as JsonObject).template as {spec: {containers: object[]}}).spec.containers = [{name: 'app', image: 'busybox:2'}]
    const moved = {...deployment(2), metadata: {name: 'web', namespace: 'staging'}}
    const others = [...podsFromWorkload(changed, 'Deployment', 'd.yaml').pods, ...podsFromWorkload(moved, 'Deployment', 'd.yaml').pods]
    expect(names(others).filter((name) => names(base).includes(name))).toEqual([])
    const [match] = podMatchesFromDocuments([{document: deployment(2), label: 'd.yaml'}])
    if (!('workload' in match)) throw new Error('not a workload')
    for (const name of names(base)) expect(match.workload.podName.test(name)).toBe(true)
  })

  it('a Job without a uid gets the same UUID-shaped controller-uid each time; a written uid is kept', () => {
    const unnamed = {...job({}), metadata: {name: 'work'}}
    const labels = (document: JsonObject) =>
      (podsFromWorkload(document, 'Job', 'j.yaml').pods[0].document.metadata as {labels: Record<string, string>}).labels
    const uid = labels(structuredClone(unnamed))['controller-uid']
    expect(uid).toMatch(/^[\da-f]{8}-[\da-f]{4}-5[\da-f]{3}-a[\da-f]{3}-[\da-f]{12}$/)
    expect(labels(structuredClone(unnamed))['controller-uid']).toBe(uid)
    expect(labels(job({}))['controller-uid']).toBe('u-1')
  })
})

describe('kill -f matches', () => {
  it('finds a workload pods by labels and the form of their names, a Pod by its name', () => {
    const matches = podMatchesFromDocuments([
      {document: deployment(2), label: 'all.yaml (document 1)'},
      {document: statefulSet(), label: 'all.yaml (document 2)'},
      {
        document: {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'solo'}, spec: {containers: [container]}},
        label: 'all.yaml (document 3)',
      },
      {document: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'cm'}}, label: 'all.yaml (document 4)'},
    ])
    expect(matches).toHaveLength(3)
    const [web, db, solo] = matches
    const hash = templateHash((deployment().spec as JsonObject).template)
    if (!('workload' in web) || !('workload' in db) || !('pod' in solo)) throw new Error('unexpected kinds')
    expect(web.workload).toMatchObject({
      kind: 'Deployment',
      name: 'web',
      namespace: 'prod',
      labels: {app: 'web', 'pod-template-hash': hash},
    })
    expect(web.workload.podName.test(`web-${hash}-bcdfg`)).toBe(true)
    expect(web.workload.podName.test(`web-${hash}-bcdf`)).toBe(false)
    expect(web.workload.podName.test(`web-other-bcdfg`)).toBe(false)
    expect(db.workload.podName.test('db-12')).toBe(true)
    expect(db.workload.podName.test('db-x')).toBe(false)
    expect(db.workload.labels).toMatchObject({app: 'db'})
    expect(solo.pod).toEqual({name: 'solo'})
  })

  it('a Job pod is found by job-name, whatever the run uid was', () => {
    const [match] = podMatchesFromDocuments([{document: job({completionMode: 'Indexed'}), label: 'j.yaml'}])
    if (!('workload' in match)) throw new Error('not a workload')
    expect(match.workload.labels).toEqual({'job-name': 'work'})
    expect(match.workload.podName.test('work-3-bcdfg')).toBe(true)
    expect(match.workload.podName.test('work-bcdfg')).toBe(true)
  })

  it('a manifest of only ConfigMaps names no pod', () => {
    expect(() => podMatchesFromDocuments([{document: {apiVersion: 'v1', kind: 'ConfigMap'}, label: 'cm.yaml'}])).toThrow(
      'cm.yaml: no Pod or workload found',
    )
  })
})
