/** crictl create, start, stop, rm, update and checkpoint (container.go): the CRI calls crictl makes, with its words. */
import {readdir, rm} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'

import type {CriClient} from '../../cri/client.js'
import {listCrictlContainers} from '../list-calls.js'
import {error as logError} from '../log.js'
import {aggregate, createContainer, pullOptionsOf} from '../container-flow.js'
import {CrictlError, CrictlExit, type CrictlSession, wrap} from '../session.js'

async function create(session: CrictlSession): Promise<void> {
  if (session.bool('no-pull') && session.bool('with-pull')) throw new CrictlError('conflict: no-pull and with-pull are both set')
  const withPull = (!session.bool('no-pull') && session.settings.pullImageOnCreate) || session.bool('with-pull')
  const image = withPull ? await session.image() : undefined
  const runtime = await session.runtime(session.duration('cancel-timeout'))
  const [podId, containerConfig, podConfig] = session.args
  try {
    session.println(
      await createContainer(runtime, image, {podId, containerConfig, podConfig, pull: withPull ? pullOptionsOf(session) : undefined}),
    )
  } catch (error) {
    throw wrap('creating container', error)
  }
}

/** StartContainer, printing the ID. */
export async function startContainer(session: CrictlSession, client: CriClient, id: string): Promise<void> {
  if (id === '') throw new CrictlError('ID cannot be empty')
  await client.runtime('startContainer', {containerId: id})
  session.println(id)
}

async function start(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  for (const id of session.args) {
    try {
      await startContainer(session, client, id)
    } catch (error) {
      throw wrap(`starting the container ${JSON.stringify(id)}`, error)
    }
  }
}

async function stopContainer(session: CrictlSession, client: CriClient, id: string, timeout: number): Promise<void> {
  if (id === '') throw new CrictlError('ID cannot be empty')
  // cri-client's deadline for StopContainer is the timeout plus the grace period.
  await client.runtime(
    'stopContainer',
    {containerId: id, timeout: String(timeout)},
    {timeoutMs: session.settings.timeoutMs + Math.max(timeout, 0) * 1000},
  )
  session.println(id)
}

async function stop(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  const all = session.bool('all')
  if (all && session.args.length > 0) throw new CrictlExit('cannot specify CONTAINER-ID(s) when using --all', 1)
  let ids = [...session.args]
  if (all) {
    try {
      ids = (await listCrictlContainers(client, undefined, {state: 'running'})).map((container) => container.id)
    } catch (error) {
      throw wrap('listing containers', error)
    }

    if (ids.length === 0) return session.println('No running containers found.')
  } else if (ids.length === 0) {
    throw new CrictlExit('you must specify at least one CONTAINER-ID or use --all', 1)
  }

  for (const id of ids) {
    try {
      await stopContainer(session, client, id, session.int('timeout'))
    } catch (error) {
      throw wrap(`stopping the container ${JSON.stringify(id)}`, error)
    }
  }
}

/** collectIDs: the arguments, or with --all every listed ID (none: crictl's info line). Undefined when there is nothing to do. */
export async function collectIds(
  session: CrictlSession,
  list: () => Promise<Array<{id: string}>>,
  what: string,
): Promise<string[] | undefined> {
  let ids = [...session.args]
  if (session.bool('all')) ids = (await list()).map((item) => item.id)
  if (ids.length > 0) return ids
  if (!session.bool('all')) return session.usage()
  const {info} = await import('../log.js')
  info(`No ${what}s to remove`)
  return undefined
}

/** The container's log file and its rotations, as crictl removes them unless --keep-logs. */
async function removeLogs(logPath: string, id: string): Promise<void> {
  // filepath.Glob(logPath + ".*"): the rotations beside it, sorted, then the file itself.
  const base = `${basename(logPath)}.`
  const names = await readdir(dirname(logPath)).catch(() => [] as string[])
  const files = names
    .filter((name) => name.startsWith(base))
    .sort()
    .map((name) => join(dirname(logPath), name))
  files.push(logPath)
  for (const file of files) {
    try {
      await rm(file)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const reason = code === 'ENOENT' ? 'no such file or directory' : String(code)
      logError(`removing log file ${file} for container ${JSON.stringify(id)} failed: remove ${file}: ${reason}`)
    }
  }
}

async function removeOne(session: CrictlSession, client: CriClient, id: string): Promise<void> {
  let status
  try {
    ;({status} = await client.runtime('containerStatus', {containerId: id, verbose: false}))
  } catch (error) {
    throw wrap(`getting container status ${JSON.stringify(id)}`, error)
  }

  if (status?.state === 'CONTAINER_RUNNING') {
    if (!session.bool('force')) throw new CrictlError(`container ${JSON.stringify(id)} is running, please stop it first`)
    try {
      await stopContainer(session, client, id, 0)
    } catch (error) {
      throw wrap(`stopping the container ${JSON.stringify(id)}`, error)
    }
  }

  try {
    await client.runtime('removeContainer', {containerId: id})
  } catch (error) {
    throw wrap(`removing container ${JSON.stringify(id)}`, error)
  }

  session.println(id)
  if (!session.bool('keep-logs') && status?.logPath) await removeLogs(status.logPath, id)
}

async function rmCommand(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  const ids = await collectIds(session, async () => (await client.runtime('listContainers', {})).containers, 'container')
  if (!ids) return
  await aggregate(ids.map((id) => () => removeOne(session, client, id)))
}

async function update(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  const linux = {
    cpuPeriod: String(session.int('cpu-period')),
    cpuQuota: String(session.int('cpu-quota')),
    cpuShares: String(session.int('cpu-share')),
    cpusetCpus: session.string('cpuset-cpus'),
    cpusetMems: session.string('cpuset-mems'),
    memoryLimitInBytes: String(session.int('memory')),
    oomScoreAdj: String(session.int('oom-score-adj')),
  }
  for (const id of session.args) {
    try {
      if (id === '') throw new CrictlError('ID cannot be empty')
      await client.runtime('updateContainerResources', {containerId: id, linux})
      session.println(id)
    } catch (error) {
      throw wrap(`updating container resources for ${JSON.stringify(id)}`, error)
    }
  }
}

async function checkpoint(session: CrictlSession): Promise<void> {
  const location = session.string('export')
  if (location === '') {
    throw new CrictlError(
      'cannot checkpoint a container without specifying the checkpoint destination. Use --export=/path/to/checkpoint.tar',
    )
  }

  const client = await session.runtime()
  for (const id of session.args) {
    try {
      if (id === '') throw new CrictlError('ID cannot be empty')
      await client.runtime('checkpointContainer', {containerId: id, location})
      session.println(id)
    } catch (error) {
      throw wrap(`checkpointing the container ${JSON.stringify(id)} failed`, error)
    }
  }
}

export const ACTIONS = {create, start, stop, rm: rmCommand, update, checkpoint}
