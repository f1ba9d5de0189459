/**
 * podctl ui's keys and screen, pure: a node of three pods given as a listing, keys pressed one by one,
 * and the lines a person sees at 80x24 (every line exactly 80 columns, 23 lines so the terminal
 * never scrolls; the selected row marked by ">" as well as inverse, so it reads without colour).
 */
import {describe, expect, it} from 'vitest'

import {type Container, ContainerState, type PodSandbox, PodSandboxState} from '../../../src/generated/runtime/v1/api.js'
import {listedPodStatuses} from '../../../src/lib/kubelet/status/listed-pods.js'
import {KEY_HELP} from '../../../src/lib/ui/keys.js'
import type {NodeHeader} from '../../../src/lib/ui/node-header.js'
import type {NodeSnapshot} from '../../../src/lib/ui/node-snapshot.js'
import {screenLines} from '../../../src/lib/ui/screen-lines.js'
import {type Effect, initialState, press, screen, type ViewState, withPaneLines, withSnapshot} from '../../../src/lib/ui/view-state.js'

const NOW_NS = BigInt(Date.now()) * 1_000_000n

function sandbox(name: string, namespace: string, ageSeconds: number): PodSandbox {
  return {
    id: `sb-${name}`.padEnd(64, '0'),
    metadata: {name, namespace, uid: `uid-${name}`, attempt: 0},
    state: PodSandboxState.SANDBOX_READY,
    createdAt: String(NOW_NS - BigInt(ageSeconds) * 1_000_000_000n),
    labels: {},
    annotations: {'io.podctl.restartPolicy': 'Always'},
    runtimeHandler: '',
  }
}

function container(pod: PodSandbox, name: string, state: Container['state']): Container {
  return {
    id: `c-${pod.metadata!.name}-${name}`.padEnd(64, '0'),
    podSandboxId: pod.id,
    metadata: {name, attempt: 0},
    image: {image: 'localhost:5000/podctl/busybox:1.36', annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: ''},
    imageRef: 'sha256:1',
    imageId: '',
    state,
    createdAt: pod.createdAt,
    labels: {'io.kubernetes.container.name': name, 'io.kubernetes.pod.uid': pod.metadata!.uid},
    annotations: {'io.podctl.containerType': 'app'},
  }
}

function node(): NodeSnapshot {
  const web = sandbox('web', 'shop', 3600)
  const db = sandbox('db', 'shop', 90)
  const dns = sandbox('coredns', 'kube-system', 7200)
  const containers = [
    container(web, 'app', ContainerState.CONTAINER_RUNNING),
    container(db, 'postgres', ContainerState.CONTAINER_RUNNING),
    container(dns, 'coredns', ContainerState.CONTAINER_RUNNING),
  ]
  const pods = listedPodStatuses(
    {sandboxes: [web, db, dns], containers, sandboxIps: new Map([[web.id, '10.235.0.7']]), exited: new Map()},
    new Map(),
  )
  return {
    pods,
    usage: new Map([[containers[0].id, {cpuCores: 0.012, memoryBytes: 12 * 1024 * 1024}]]),
    ports: new Map(),
    takenAt: Date.now(),
    tookMs: 4,
    counts: {pods: 3, readyPods: 3, containers: 3, runningContainers: 3},
  }
}

const header: NodeHeader = {
  runtime: 'containerd v2.4.2',
  endpoint: 'unix:///run/containerd/containerd.sock',
  conditions: [{type: 'RuntimeReady', status: true, reason: ''}],
  imageFs: {usedBytes: 10 * 1024 * 1024},
  owner: 'none (no kubelet, no podctl supervisor)',
  kubelet: false,
}

function start(columns = 80, rows = 24): ViewState {
  return {...withSnapshot(initialState({columns, rows}), node()), header}
}

/** Presses keys in turn; the effects they asked for, in order. */
function keys(state: ViewState, ...names: string[]): {state: ViewState; effects: Effect[]} {
  const effects: Effect[] = []
  for (const name of names) {
    const step = press(state, name)
    state = step.state
    if (step.effect) effects.push(step.effect)
  }

  return {state, effects}
}

const text = (state: ViewState) => screenLines(state).map((line) => line.text.trimEnd())

describe('podctl ui screen', () => {
  it('fits 80x24: 23 lines of exactly 80 columns, header, pods sorted by name, footer', () => {
    const lines = screenLines(start())
    expect(lines).toHaveLength(23)
    for (const line of lines) expect(line.text).toHaveLength(80)
    const shown = text(start())
    expect(shown[0]).toBe('containerd v2.4.2 · runtime ready · unix:///run/containerd/containerd.sock')
    expect(shown[1]).toBe('pods 3/3 ready · containers 3/3 running · images 10.0 MiB'.replace('10.0 MiB', shown[1].split('images ')[1]))
    expect(shown[2]).toBe('owner: none (no kubelet, no podctl supervisor)')
    expect(shown[3]).toMatch(/^Pods \(3 of 3\) · sort: name \^ · refreshed in 4 ms$/)
    expect(shown[4]).toMatch(/^ {2}NAME +NAMESPACE +READY STATUS +RESTARTS +CPU +MEM +AGE$/)
    expect(shown[5]).toMatch(/^> coredns +kube-system +1\/1 +Running +0 +- +- +2h$/)
    expect(shown[6]).toMatch(/^ {2}db +shop +1\/1 +Running +0 +- +- +90s$/)
    expect(shown[7]).toMatch(/^ {2}web +shop +1\/1 +Running +0 +12m +12Mi +60m$/)
    expect(shown[22]).toMatch(/^Enter containers {2}\/ filter/)
    expect(screenLines(start()).filter((line) => line.selected)).toHaveLength(1)
  })

  it('shows the IP column on a wider terminal', () => {
    const shown = text(start(120, 30))
    expect(shown[4]).toMatch(/AGE +IP$/)
    expect(shown.find((line) => line.includes(' web '))).toMatch(/10\.235\.0\.7$/)
    expect(screenLines(start(120, 30))).toHaveLength(29)
  })

  it('/ filters by name as typed; Enter keeps the filter, Esc clears it', () => {
    const typed = keys(start(), '/', 'w', 'e').state
    expect(text(typed)[3]).toMatch(/^Pods \/we_ \(1 of 3\)/)
    expect(text(typed)[22]).toBe('Filter by name: type, Enter to keep, Esc to clear')
    const kept = keys(typed, 'enter').state
    expect(text(kept)[3]).toMatch(/^Pods \/we \(1 of 3\)/)
    expect(text(kept)[5]).toMatch(/^> web /)
    expect(text(keys(kept, 'escape').state)[3]).toMatch(/^Pods \(3 of 3\)/)
    // q while typing is part of the name, not quit.
    expect(keys(start(), '/', 'q').effects).toEqual([])
  })

  it("Enter shows a pod's containers; l asks for its log, p the previous attempt; Esc goes back", () => {
    const {state} = keys(start(), 'down', 'down', 'enter')
    expect(text(state)[3]).toBe('Containers of web_shop')
    expect(text(state)[5]).toMatch(/^> app +Running +true +0 +- +12m +12Mi/)
    const logs = keys(state, 'l')
    expect(screen(logs.state).kind).toBe('logs')
    expect(logs.effects).toEqual([{kind: 'logs', containerId: expect.stringMatching(/^c-web-app/), previous: false}])
    const withLines = withPaneLines(logs.state, ['hello', 'world'])
    expect(text(withLines).slice(3, 6)).toEqual(['Logs web_shop/app · following', '  hello', '  world'])
    const previous = keys(withLines, 'p')
    expect(previous.effects).toEqual([{kind: 'logs', containerId: expect.stringMatching(/^c-web-app/), previous: true}])
    expect(text(previous.state)[3]).toBe('Logs web_shop/app (previous attempt) · following')
    const back = keys(previous.state, 'escape')
    expect(back.effects).toEqual([{kind: 'stop-logs'}])
    expect(screen(keys(back.state, 'escape').state).kind).toBe('pods')
  })

  it('s asks for a shell in the running container, d for describe', () => {
    const shell = keys(start(), 'end', 'enter', 's')
    expect(shell.effects).toEqual([{kind: 'shell', containerId: expect.stringMatching(/^c-web-app/), title: 'web_shop/app'}])
    const describe = keys(start(), 'd')
    expect(screen(describe.state).kind).toBe('describe')
    expect(describe.effects).toEqual([{kind: 'describe', pod: expect.objectContaining({name: 'coredns'})}])
  })

  it('K asks first: y kills through the library, anything else cancels', () => {
    const asked = keys(start(), 'K')
    expect(asked.effects).toEqual([])
    expect(text(asked.state)[22]).toBe('Kill pod coredns_kube-system? preStop, grace period, stop, remove [y/N]')
    expect(keys(asked.state, 'y').effects).toEqual([{kind: 'kill', pod: expect.objectContaining({name: 'coredns'})}])
    const cancelled = keys(asked.state, 'n')
    expect(cancelled.effects).toEqual([])
    expect(text(cancelled.state)[22]).toBe('Kill of coredns_kube-system cancelled')
  })

  it('? lists every key of the screen; any key closes it; q and Ctrl-C quit', () => {
    const help = keys(start(), '?').state
    const shown = text(help)
    expect(shown[3]).toBe('Keys on the pods screen')
    for (const entry of [...KEY_HELP.pods, ...KEY_HELP.everywhere]) expect(shown).toContain(`  ${entry.keys.padEnd(22)} ${entry.what}`)
    expect(keys(help, 'x').state.help).toBe(false)
    expect(keys(start(), 'q').effects).toEqual([{kind: 'quit'}])
    expect(keys(start(), '/', 'ctrl-c').effects).toEqual([{kind: 'quit'}])
  })

  it('o sorts by the next column; memory sorts largest first', () => {
    const byMemory = keys(start(), 'o', 'o', 'o', 'o', 'o').state
    expect(text(byMemory)[3]).toMatch(/sort: memory v/)
    expect(text(byMemory)[5]).toMatch(/^> web /)
  })

  it('says a lost runtime in the footer and keeps the last pods', () => {
    const lost = {...start(), lost: 'runtime at unix:///x refused the connection'}
    expect(text(lost)[22]).toBe('Runtime lost, trying again every second: runtime at unix:///x refused the conne…')
    expect(text(lost)[5]).toMatch(/coredns/)
  })
})
