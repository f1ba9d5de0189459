/**
 * `podctl ui` from start to end: the full-screen terminal (the alternate screen, given back on every
 * way out: q, Ctrl-C, SIGTERM, an exception, process exit), the state and its refreshes
 * (node-watch.ts), the keys' effects (actions.ts), and the Ink view, loaded lazily (load-view.ts) and
 * taken down while a shell has the terminal.
 */
import {writeSync} from 'node:fs'

import type {CriClient} from '../cri/client.js'
import {asPodctlError} from '../errors.js'
import type {PodSandbox} from '../../generated/runtime/v1/api.js'
import {nameMatcher} from '../util/filters.js'
import {containerById, describePod, followLogs, killPod, shellIn} from './actions.js'
import type {KeyName} from './keys.js'
import {loadView, type ViewModule} from './load-view.js'
import {HeaderSampler} from './node-header.js'
import {NodeSampler} from './node-snapshot.js'
import {NodeWatch} from './node-watch.js'
import {type Line, screenLines} from './screen-lines.js'
import {type Effect, initialState, press, screen, type ViewState, withPaneLines, withSnapshot} from './view-state.js'

export interface NodeViewOptions {
  client: CriClient
  podDirRoot: string
  podLogsRoot: string
  /** -n: pods of this namespace (exact, or with * globs). */
  namespace?: string
  /** -l: pods with these labels (matched by the runtime). */
  labels?: Record<string, string>
  color: boolean
  /** SIGTERM, SIGHUP: leave as `q` does. */
  signal: AbortSignal
  stdin?: NodeJS.ReadStream
  stdout?: NodeJS.WriteStream
}

/** How the view ended: `q` or Ctrl-C, or a signal. */
export type Ending = 'quit' | 'signal'

/** The alternate screen: what was on the terminal comes back when the view ends. */
class FullScreen {
  private active = false
  private readonly restoreOnExit = () => this.leave()

  constructor(private readonly stdout: NodeJS.WriteStream) {}

  enter(): void {
    if (this.active) return
    this.active = true
    this.write('\u001B[?1049h\u001B[H\u001B[2J')
    process.once('exit', this.restoreOnExit)
  }

  leave(): void {
    if (!this.active) return
    this.active = false
    process.off('exit', this.restoreOnExit)
    // Cursor shown, alternate screen left, raw mode off: whatever state Ink or a shell left.
    this.write('\u001B[?25h\u001B[?1049l')
    const stdin = process.stdin as NodeJS.ReadStream & {isRaw?: boolean}
    if (stdin.isTTY && stdin.isRaw) stdin.setRawMode(false)
  }

  private write(text: string): void {
    // Synchronous: on process exit there is no later turn of the event loop to flush it.
    try {
      writeSync((this.stdout as NodeJS.WriteStream & {fd: number}).fd ?? 1, text)
    } catch {
      this.stdout.write(text)
    }
  }
}

export async function runNodeView(options: NodeViewOptions): Promise<Ending> {
  const stdin = options.stdin ?? process.stdin
  const stdout = options.stdout ?? process.stdout
  const session = new Session(options, stdin, stdout)
  return session.run()
}

class Session {
  private state: ViewState
  private readonly listeners = new Set<() => void>()
  private lines: Line[] = []
  private readonly stop = new AbortController()
  private readonly screenTerminal: FullScreen
  private readonly watch: NodeWatch
  private view?: ViewModule
  private mounted?: {unmount(): void}
  private logs?: AbortController
  private ended?: (ending: Ending) => void

  constructor(
    private readonly options: NodeViewOptions,
    private readonly stdin: NodeJS.ReadStream,
    private readonly stdout: NodeJS.WriteStream,
  ) {
    this.state = initialState(this.size())
    this.lines = screenLines(this.state)
    this.screenTerminal = new FullScreen(stdout)
    const matchNamespace = nameMatcher(options.namespace)
    const keep = options.namespace === undefined ? undefined : (sandbox: PodSandbox) => matchNamespace(sandbox.metadata?.namespace ?? '')
    this.watch = new NodeWatch({
      client: options.client,
      sampler: new NodeSampler(options.client, {podDirRoot: options.podDirRoot, keep, labels: options.labels}),
      header: new HeaderSampler(options.client),
      signal: this.stop.signal,
      onSnapshot: (snapshot, header) => this.update((state) => ({...withSnapshot(state, snapshot), header})),
      onLost: (message) => this.update((state) => ({...state, lost: message})),
    })
  }

  async run(): Promise<Ending> {
    const ending = new Promise<Ending>((resolve) => {
      this.ended = resolve
    })
    const onSignal = () => this.ended?.('signal')
    this.options.signal.addEventListener('abort', onSignal, {once: true})
    const onResize = () => this.update((state) => ({...state, size: this.size()}))
    this.stdout.on('resize', onResize)
    try {
      this.view = await loadView()
      this.screenTerminal.enter()
      this.mountView()
      const watching = this.watch.run()
      const how = await ending
      this.stop.abort()
      this.logs?.abort()
      await watching
      return how
    } finally {
      this.stop.abort()
      this.options.signal.removeEventListener('abort', onSignal)
      this.stdout.off('resize', onResize)
      this.mounted?.unmount()
      this.screenTerminal.leave()
    }
  }

  private size(): {columns: number; rows: number} {
    return {columns: this.stdout.columns || 80, rows: this.stdout.rows || 24}
  }

  private mountView(): void {
    this.mounted = this.view!.mount(
      {
        lines: () => this.lines,
        subscribe: (listener) => {
          this.listeners.add(listener)
          return () => this.listeners.delete(listener)
        },
        press: (key) => this.press(key),
      },
      {stdin: this.stdin, stdout: this.stdout, color: this.options.color},
    )
  }

  private update(change: (state: ViewState) => ViewState): void {
    this.state = change(this.state)
    this.lines = screenLines(this.state)
    for (const listener of this.listeners) listener()
  }

  private press(key: KeyName): void {
    let effect: Effect | undefined
    this.update((state) => {
      const step = press(state, key)
      effect = step.effect
      return step.state
    })
    if (effect) void this.carryOut(effect)
  }

  private async carryOut(effect: Effect): Promise<void> {
    const {client} = this.options
    try {
      switch (effect.kind) {
        case 'quit':
          this.ended?.('quit')
          return
        case 'stop-logs':
          this.logs?.abort()
          return
        case 'logs':
          return await this.showLogs(effect.containerId, effect.previous)
        case 'describe': {
          const lines = await describePod(client, effect.pod, this.options.podDirRoot, this.watch.events)
          this.update((state) => (screen(state).kind === 'describe' ? withPaneLines(state, lines) : state))
          return
        }

        case 'kill':
          this.say(`Killing pod ${effect.pod.pod.fullName}…`, false)
          this.say(await killPod(client, effect.pod, this.options), false)
          this.watch.refreshSoon()
          return
        case 'shell':
          return await this.shell(effect.containerId, effect.title)
      }
    } catch (error) {
      const message = asPodctlError(error).message
      if (effect.kind === 'logs' || effect.kind === 'describe') this.update((state) => withPaneLines(state, state.pane.lines, message))
      else this.say(message, true)
    }
  }

  private async showLogs(containerId: string, previous: boolean): Promise<void> {
    this.logs?.abort()
    const controller = new AbortController()
    this.logs = controller
    await followLogs(this.options.client, containerId, {
      previous,
      signal: controller.signal,
      onLines: (lines, note) => {
        if (!controller.signal.aborted) this.update((state) => withPaneLines(state, lines, note))
      },
    })
  }

  /** The terminal goes to the shell: the view comes down, the screen the user had comes back, and after the shell the view again. */
  private async shell(containerId: string, title: string): Promise<void> {
    await containerById(this.options.client, containerId)
    this.mounted?.unmount()
    this.mounted = undefined
    this.screenTerminal.leave()
    this.stdout.write(`podctl ui: a shell in ${title}; exit it to come back to the view\r\n`)
    let outcome: string
    try {
      outcome = `The shell in ${title} exited ${await shellIn(this.options.client, containerId)}`
    } catch (error) {
      outcome = `No shell in ${title}: ${asPodctlError(error).message}`
    }

    if (this.stop.signal.aborted) return
    this.screenTerminal.enter()
    this.mountView()
    // The shell's copy of stdin paused it when it ended (streaming/remote-command.ts), and a paused
    // terminal stream gives Ink's reader nothing. With Ink's 'readable' listener on, resume() lets
    // reads through and leaves the stream non-flowing, so no key is lost.
    this.stdin.resume()
    this.say(outcome, outcome.startsWith('No shell'))
  }

  private say(text: string, bad: boolean): void {
    this.update((state) => ({...state, message: {text, bad}}))
  }
}
