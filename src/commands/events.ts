import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {eventDocument, watchContainerEvents} from '../lib/node/container-events.js'
import {nanosToIso, truncateId} from '../lib/output/format.js'
import type {ContainerEventResponse} from '../generated/runtime/v1/api.js'

/** What a split stream means for this command, after the runtime's own reason. */
const SPLIT_CONSEQUENCE =
  'a kubelet, a podctl supervisor or another events command listening now takes some of the events, which this one misses ' +
  '(podctl supervisors leave such a runtime to its listeners and list it instead)'

export default class Events extends BaseCommand<typeof Events> {
  // The stream lasts until Ctrl-C: --timeout bounds connecting, not the watch.
  static override timeoutBoundsCommand = false
  static override enableJsonFlag = false
  static override hiddenAliases = ['event']
  static override summary = "Stream the runtime's container events (CRI GetContainerEvents) until Ctrl-C."

  static override description = `Prints each event as the runtime sends it: a container created, started, \
stopped or deleted, with the pod sandbox's status and its containers' statuses (the stream the kubelet's Evented \
PLEG reads). JSON (the default, as crictl events) prints one document per event: containerId, containerEventType \
(CONTAINER_CREATED_EVENT, CONTAINER_STARTED_EVENT, CONTAINER_STOPPED_EVENT, CONTAINER_DELETED_EVENT), createdAt \
(Unix nanoseconds, as a string), podSandboxStatus and containersStatuses. -o table prints one line per event. \
Events that happened before the command started (containerd queues them while nobody listens \
and sends them all at once to the next subscriber) are skipped, with one note on stderr when the first is skipped; \
--queued prints them too, as crictl events does. Ctrl-C ends the stream (exit 0). A runtime without the call, \
such as containerd before 1.7, is reported at once with exit 6 (Unimplemented), and so is a stream the runtime ends \
at once without an event (CRI-O without enable_pod_events). Where the runtime gives each event to one listener only \
(containerd 1.7, CRI-O before 1.28), a line on stderr says that other listeners and this command split the events \
(docs/runtimes.md).`

  static override examples = [
    example('Watch every event as JSON'),
    example('One line per event', '-o table'),
    example('Only the event types, for a script', `-o go-template='{{.containerEventType}} {{.containerId}}'`),
    example('Also the events queued while nobody listened', '--queued'),
  ]

  static override flags = {
    output: outputFlag(['json', 'yaml', 'table'], {templates: true}),
    template: Flags.string({summary: 'Go-template field paths to print per event, e.g. {{.containerEventType}}.'}),
    queued: Flags.boolean({summary: 'Also print the events the runtime queued before this command started (skipped by default).'}),
  }

  public async run(): Promise<void> {
    const interruption = this.interruptSignal()
    const client = await this.client()
    // Printed one after another, in the order received (YAML output loads its library on first use).
    let printed: Promise<void> = Promise.resolve()
    let first = true
    let skipping = false
    const print = (event: ContainerEventResponse) => {
      printed = printed.then(async () => {
        if (this.output.kind === 'yaml' && !first) process.stdout.write('---\n')
        first = false
        await this.emit(eventDocument(event), () => this.line(event))
      })
    }

    // crictl prints the queued events; so does podctl as crictl.
    const all = this.flags.queued
    await watchContainerEvents(client, print, {
      signal: interruption.signal,
      since: all ? undefined : this.startedAt,
      onSplit: (reason) => this.stderrLine(`${reason}: ${SPLIT_CONSEQUENCE}`),
      onQueued: () => {
        // Said once, when the first one comes: the stream may run for hours before Ctrl-C.
        if (!skipping) this.stderrLine('Skipping the events the runtime queued before this command started (--queued prints them)')
        skipping = true
      },
    })
    await printed
  }

  private line(event: ContainerEventResponse): string {
    const pod = event.podSandboxStatus?.metadata
    const type = String(event.containerEventType)
      .replace(/^CONTAINER_/, '')
      .replace(/_EVENT$/, '')
    const where = pod ? ` pod=${pod.name}_${pod.namespace}` : ''
    return `${nanosToIso(event.createdAt) ?? ''} ${type} container=${truncateId(event.containerId)}${where}`
  }
}
