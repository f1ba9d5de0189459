/**
 * crictl stats, statsp, metricsp, metricdescs and events (container_stats.go, pod_stats.go,
 * pod_metrics.go, metric_descs.go, events.go), with handleDisplay's --watch: the display again every
 * 500 ms until Ctrl-C.
 */
import type {CriClient} from '../../cri/client.js'
import {crictlMessage} from '../documents.js'
import {byAttributesId} from '../list-order.js'
import {GoTemplateError, renderGoTemplate} from '../go-template.js'
import {crictlLabels} from '../list-calls.js'
import {crictlPodStatsText, crictlStatsText} from '../stats-text.js'
import {toProtojson} from '../protojson.js'
import {type CrictlSession, wrap} from '../session.js'

const sleep = (ms: number) =>
  new Promise((resolve) => {
    setTimeout(resolve, ms)
  })

/** handleDisplay: once, or with --watch every 500 ms (the first after 500 ms) until Ctrl-C. */
async function handleDisplay(watch: boolean, display: () => Promise<void>): Promise<void> {
  if (!watch) return display()
  const interrupted = new AbortController()
  const stop = () => interrupted.abort()
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  try {
    while (!interrupted.signal.aborted) {
      await sleep(500)
      if (!interrupted.signal.aborted) await display()
    }
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}

async function stats(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  const id = session.string('id') || (session.args[0] ?? '')
  const filter = {id, podSandboxId: session.string('pod'), labelSelector: crictlLabels(session.strings('label'))}
  const output = session.string('output')
  const list = async () => byAttributesId((await client.runtime('listContainerStats', {filter})).stats)
  try {
    await handleDisplay(session.bool('watch'), async () => {
      const first = await list()
      if (output === 'json' || output === 'yaml')
        return session.println(crictlMessage('ListContainerStatsResponse', {stats: first}, output))
      await sleep(session.int('seconds') * 1000)
      session.out(crictlStatsText(first, await list(), session.bool('all')))
    })
  } catch (error) {
    throw wrap('get container stats', error)
  }
}

async function statsp(session: CrictlSession): Promise<void> {
  let client: CriClient
  try {
    client = await session.runtime()
  } catch (error) {
    throw wrap('get runtime service', error)
  }

  const id = session.string('id') || (session.args[0] ?? '')
  let labelSelector
  try {
    labelSelector = crictlLabels(session.strings('label'))
  } catch (error) {
    throw wrap('parse pod labels', error)
  }

  const output = session.string('output')
  const list = async () => {
    try {
      return byAttributesId((await client.runtime('listPodSandboxStats', {filter: {id, labelSelector}})).stats)
    } catch (error) {
      throw wrap('list pod sandbox stats', error)
    }
  }

  try {
    await handleDisplay(session.bool('watch'), async () => {
      const first = await list()
      if (output === 'json' || output === 'yaml')
        return session.println(crictlMessage('ListPodSandboxStatsResponse', {stats: first}, output))
      await sleep(session.int('seconds') * 1000)
      session.out(crictlPodStatsText(first, await list()))
    })
  } catch (error) {
    throw wrap('get pod stats', error)
  }
}

async function metricsp(session: CrictlSession): Promise<void> {
  let client: CriClient
  try {
    client = await session.runtime()
  } catch (error) {
    throw wrap('get runtime service', error)
  }

  const format = session.string('output') === 'yaml' ? 'yaml' : 'json'
  try {
    await handleDisplay(session.bool('watch'), async () => {
      let podMetrics
      try {
        ;({podMetrics} = await client.runtime('listPodSandboxMetrics', {}))
      } catch (error) {
        throw wrap('list pod sandbox metrics', error)
      }

      session.println(crictlMessage('ListPodSandboxMetricsResponse', {podMetrics}, format))
    })
  } catch (error) {
    throw wrap('get pod metrics', error)
  }
}

async function metricdescs(session: CrictlSession): Promise<void> {
  let client: CriClient
  try {
    client = await session.runtime()
  } catch (error) {
    throw wrap('get runtime service', error)
  }

  try {
    let descriptors
    try {
      ;({descriptors} = await client.runtime('listMetricDescriptors', {}))
    } catch (error) {
      throw wrap('list metric descriptors', error)
    }

    session.println(crictlMessage('ListMetricDescriptorsResponse', {descriptors}, session.string('output') === 'yaml' ? 'yaml' : 'json'))
  } catch (error) {
    throw wrap('get metric descriptors', error)
  }
}

async function events(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  const output = session.string('output')
  const controller = new AbortController()
  const stop = () => controller.abort()
  process.once('SIGINT', stop)
  try {
    await client.runtimeStream(
      'getContainerEvents',
      {},
      (event) => {
        if (output === 'go-template') {
          try {
            session.println(renderGoTemplate(session.string('template'), toProtojson('ContainerEventResponse', event)))
          } catch (error) {
            if (!(error instanceof GoTemplateError)) throw error
            session.println(`failed to format container event with the error: ${error.message}`)
          }
        } else {
          session.println(crictlMessage('ContainerEventResponse', event, output === 'yaml' ? 'yaml' : 'json'))
        }
      },
      {signal: controller.signal},
    )
  } catch (error) {
    if (!controller.signal.aborted) throw wrap('getting container events', error)
  } finally {
    process.off('SIGINT', stop)
  }
}

export const ACTIONS = {stats, statsp, metricsp, metricdescs, events}
