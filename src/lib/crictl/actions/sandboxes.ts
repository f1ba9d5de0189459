/** crictl runp, run, stopp and rmp (sandbox.go, container.go RunContainer): the CRI calls crictl makes, with its words. */
import type {CriClient} from '../../cri/client.js'
import {loadPodSandboxConfig} from '../config-files.js'
import {aggregate, createContainer, pullOptionsOf} from '../container-flow.js'
import {CrictlError, type CrictlSession, wrap} from '../session.js'
import {collectIds, startContainer} from './containers.js'

async function runPodSandbox(session: CrictlSession, client: CriClient, path: string): Promise<string> {
  let config
  try {
    config = await loadPodSandboxConfig(path)
  } catch (error) {
    throw wrap('load podSandboxConfig', error)
  }

  try {
    // cri-client gives RunPodSandbox twice the timeout.
    const {podSandboxId} = await client.runtime(
      'runPodSandbox',
      {config, runtimeHandler: session.string('runtime')},
      {timeoutMs: 2 * session.settings.timeoutMs},
    )
    return podSandboxId
  } catch (error) {
    throw wrap('run pod sandbox', error)
  }
}

async function runp(session: CrictlSession): Promise<void> {
  const client = await session.runtime(session.duration('cancel-timeout'))
  session.println(await runPodSandbox(session, client, session.args[0]))
}

async function run(session: CrictlSession): Promise<void> {
  if (session.bool('no-pull') && session.bool('with-pull')) throw new CrictlError('conflict: no-pull and with-pull are both set')
  const withPull = (!session.settings.disablePullOnRun && !session.bool('no-pull')) || session.bool('with-pull')
  const image = withPull ? await session.image() : undefined
  const runtime = await session.runtime(session.duration('cancel-timeout'))
  const [containerConfig, podConfig] = session.args
  try {
    const podId = await runPodSandbox(session, runtime, podConfig)
    let containerId: string
    try {
      containerId = await createContainer(runtime, image, {
        podId,
        containerConfig,
        podConfig,
        pull: withPull ? pullOptionsOf(session) : undefined,
      })
    } catch (error) {
      throw wrap('creating container failed', error)
    }

    try {
      await startContainer(session, runtime, containerId)
    } catch (error) {
      throw wrap(`starting the container ${JSON.stringify(containerId)}`, error)
    }
  } catch (error) {
    throw wrap('running container', error)
  }
}

async function stopPodSandbox(session: CrictlSession, client: CriClient, id: string): Promise<void> {
  if (id === '') throw new CrictlError('ID cannot be empty')
  await client.runtime('stopPodSandbox', {podSandboxId: id})
  session.println(`Stopped sandbox ${id}`)
}

async function stopp(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  for (const id of session.args) {
    try {
      await stopPodSandbox(session, client, id)
    } catch (error) {
      throw wrap(`stopping the pod sandbox ${JSON.stringify(id)}`, error)
    }
  }
}

async function removeOne(session: CrictlSession, client: CriClient, id: string): Promise<void> {
  let status
  try {
    ;({status} = await client.runtime('podSandboxStatus', {podSandboxId: id, verbose: false}))
  } catch (error) {
    throw wrap(`getting sandbox status of pod ${JSON.stringify(id)}`, error)
  }

  if (status?.state === 'SANDBOX_READY') {
    if (!session.bool('force')) throw new CrictlError(`pod sandbox ${JSON.stringify(id)} is running, please stop it first`)
    try {
      await stopPodSandbox(session, client, id)
    } catch (error) {
      throw wrap(`stopping the pod sandbox ${JSON.stringify(id)} failed`, error)
    }
  }

  try {
    if (id === '') throw new CrictlError('ID cannot be empty')
    await client.runtime('removePodSandbox', {podSandboxId: id})
  } catch (error) {
    throw wrap(`removing the pod sandbox ${JSON.stringify(id)}`, error)
  }

  session.println(`Removed sandbox ${id}`)
}

async function rmp(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  const ids = await collectIds(session, async () => (await client.runtime('listPodSandbox', {})).items, 'pod')
  if (!ids) return
  await aggregate(ids.map((id) => () => removeOne(session, client, id)))
}

export const ACTIONS = {runp, run, stopp, rmp}
