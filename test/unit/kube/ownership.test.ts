/**
 * The ownership proof every removal path asks: which sandboxes and containers are podctl's. Objects
 * as crictl, a kubelet (including the static pod `run --static` hands it) and podctl make them.
 */
import {describe, expect, it} from 'vitest'

import {Container, PodSandbox} from '../../../src/generated/runtime/v1/api.js'
import {
  containerOwnership,
  isPodctlContainer,
  isPodctlSandbox,
  type PodRecords,
  type RecordedPod,
  sandboxOwnership,
} from '../../../src/lib/kube/ownership.js'

const UID = '5d3e1c9a-0b7f-4c1e-9a55-1f0e2d3c4b5a'
const kubeletLabels = {'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'shop', 'io.kubernetes.pod.uid': UID}

function sandbox(annotations: Record<string, string>, uid = UID): PodSandbox {
  return PodSandbox.fromPartial({
    id: 'sb1',
    metadata: {name: 'web', namespace: 'shop', uid, attempt: 0},
    labels: kubeletLabels,
    annotations,
  })
}

function container(annotations: Record<string, string>, labels: Record<string, string> = {}): Container {
  return Container.fromPartial({
    id: 'c1',
    metadata: {name: 'app', attempt: 0},
    labels: {...kubeletLabels, 'io.kubernetes.container.name': 'app', ...labels},
    annotations,
  })
}

/** What `podctl run` writes on a sandbox (kube/labels.ts newPodAnnotations), as a user's annotation beside it. */
const RUN_SANDBOX = {team: 'checkout', 'io.podctl.restartPolicy': 'Always', 'io.podctl.podDirectory': `/var/lib/podctl/pods/${UID}`}
/** The kubelet's container annotations with podctl's io.podctl.containerType. */
const RUN_CONTAINER = {
  'io.kubernetes.container.hash': '1a2b3c4d',
  'io.kubernetes.container.restartCount': '0',
  'io.podctl.containerType': 'app',
}

function record(fields: Partial<RecordedPod>): PodRecords {
  return new Map([[UID, {uid: UID, name: 'web', namespace: 'shop', owner: 'this', containers: ['app'], ...fields}]])
}

describe('sandboxes', () => {
  it("are podctl's when they carry the annotations run writes on every sandbox", () => {
    expect(sandboxOwnership(sandbox(RUN_SANDBOX))).toEqual({
      ours: true,
      rule: 'podctl-annotations',
      why: 'made by podctl (io.podctl.restartPolicy and io.podctl.podDirectory annotations)',
    })
    expect(isPodctlSandbox(sandbox(RUN_SANDBOX))).toBe(true)
  })

  it("are not podctl's as crictl makes them, with the kubelet's labels only", () => {
    expect(sandboxOwnership(sandbox({}))).toEqual({
      ours: false,
      rule: 'not-podctl',
      why: 'not made by podctl (no io.podctl annotations, no podctl record)',
    })
  })

  it("are not podctl's when a kubelet runs the static pod run --static wrote (io.podctl.staticPod alone)", () => {
    const annotations = {
      'io.podctl.staticPod': 'true',
      'kubernetes.io/config.source': 'file',
      'kubernetes.io/config.hash': 'abc',
    }
    expect(isPodctlSandbox(sandbox(annotations))).toBe(false)
  })

  it('need both annotations, the directory naming their own uid', () => {
    expect(isPodctlSandbox(sandbox({'io.podctl.restartPolicy': 'Always'}))).toBe(false)
    expect(isPodctlSandbox(sandbox({'io.podctl.podDirectory': `/var/lib/podctl/pods/${UID}`}))).toBe(false)
    expect(isPodctlSandbox(sandbox({...RUN_SANDBOX, 'io.podctl.podDirectory': '/var/lib/podctl/pods/another-uid'}))).toBe(false)
    expect(isPodctlSandbox(sandbox(RUN_SANDBOX, ''))).toBe(false)
  })

  it("of older podctl versions are podctl's where a record of this runtime names their pod", () => {
    expect(sandboxOwnership(sandbox({}), record({owner: 'this'}))).toMatchObject({ours: true, rule: 'podctl-record'})
    // A record written before records named their runtime: the sandbox is on this runtime, so the pod is.
    expect(sandboxOwnership(sandbox({}), record({owner: 'legacy'}))).toMatchObject({ours: true, rule: 'podctl-record'})
    // The record must name this very pod, not only its uid.
    expect(sandboxOwnership(sandbox({}), record({name: 'db'}))).toMatchObject({ours: false, rule: 'not-podctl'})
  })

  it('are left alone when a record of their uid names another runtime, whatever they carry', () => {
    const other = record({owner: 'other', runtimeEndpoint: 'unix:///run/crio/crio.sock'})
    expect(sandboxOwnership(sandbox(RUN_SANDBOX), other)).toEqual({
      ours: false,
      rule: 'other-runtime',
      why: 'its pod is recorded for another runtime (unix:///run/crio/crio.sock)',
    })
  })
})

describe('containers', () => {
  it("are podctl's when they carry io.podctl.containerType beside the kubelet's labels", () => {
    expect(containerOwnership(container(RUN_CONTAINER))).toEqual({
      ours: true,
      rule: 'podctl-annotations',
      why: 'made by podctl (io.podctl.containerType annotation)',
    })
    expect(isPodctlContainer(container({...RUN_CONTAINER, 'io.podctl.containerType': 'init'}))).toBe(true)
  })

  it("are not podctl's as the kubelet or crictl make them", () => {
    const kubelet = {'io.kubernetes.container.hash': '1a2b3c4d', 'io.kubernetes.container.restartCount': '2'}
    expect(containerOwnership(container(kubelet))).toMatchObject({ours: false, rule: 'not-podctl'})
    const crictl = Container.fromPartial({id: 'c2', metadata: {name: 'app', attempt: 1}, labels: {}, annotations: {}})
    expect(containerOwnership(crictl)).toMatchObject({ours: false, rule: 'not-podctl'})
  })

  it('need the pod uid and container name labels, and a known type', () => {
    expect(isPodctlContainer(container({'io.podctl.containerType': 'debug'}))).toBe(false)
    const unlabelled = Container.fromPartial({id: 'c3', labels: {}, annotations: {'io.podctl.containerType': 'app'}})
    expect(isPodctlContainer(unlabelled)).toBe(false)
  })

  it("of older podctl versions are podctl's where their pod's record of this runtime lists them", () => {
    expect(containerOwnership(container({}), record({}))).toMatchObject({ours: true, rule: 'podctl-record'})
    expect(containerOwnership(container({}), record({containers: ['sidecar']}))).toMatchObject({ours: false, rule: 'not-podctl'})
  })

  it('are left alone when their pod is recorded for another runtime', () => {
    expect(containerOwnership(container(RUN_CONTAINER), record({owner: 'other'}))).toMatchObject({ours: false, rule: 'other-runtime'})
  })
})
