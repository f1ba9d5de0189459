/**
 * crictl exec, attach, port-forward and logs (exec.go, attach.go, portforward.go, logs.go). exec runs
 * in the container the ID names, or with a filter flag in every container the filter matches;
 * without -s it streams over SPDY and, like crictl, exits 1 with `command terminated with exit code
 * N` instead of passing the code through. --transport websocket is refused (podctl streams over
 * SPDY only). logs reads the container's log file as crictl does.
 */
import type {Container} from '../../../generated/runtime/v1/api.js'
import type {CriClient} from '../../cri/client.js'
import {parseSince} from '../../logs/cri-log.js'
import {LogFileReader, OrderedWriter, showLog} from '../../logs/follow.js'
import {containerLiveness} from '../../node/container-logs.js'
import {parseDetachKeys} from '../../streaming/detach-keys.js'
import {forwardingLine, parsePortSpec} from '../../streaming/port-forward.js'
import {attachInteractive, execInteractive, portForwardStream} from '../../streaming/runtime-streams.js'
import {parseDuration} from '../../util/duration.js'
import {aggregate} from '../container-flow.js'
import {crictlLabels, listCrictlContainers} from '../list-calls.js'
import {info, error as logError, warning} from '../log.js'
import {CrictlError, type CrictlSession, describe, wrap} from '../session.js'

const EXEC_FILTERS = ['name', 'pod', 'image', 'state', 'label', 'latest', 'last']

/** tlsConfigFromFlags and the transport: what podctl can stream with. */
function checkStreamFlags(session: CrictlSession): void {
  const [ca, cert, key] = ['tls-ca', 'tls-cert', 'tls-key'].map((flag) => session.string(flag))
  if ((ca || cert || key) && (!cert || !key)) {
    throw new CrictlError(
      'get TLS config from flags: both flags --tls-cert and --tls-key are required for TLS streaming, only --tls-ca is optional',
    )
  }

  if (ca || cert || key) throw new CrictlError('get TLS config from flags: TLS streaming is not supported by podctl')
  const transport = session.string('transport')
  if (transport !== 'spdy')
    throw new CrictlError(
      `get executor: ${transport === 'websocket' ? 'websocket streaming is not supported by podctl' : `unknown transport: ${transport}`}`,
    )
}

/** The container crictl names by ID: the runtime resolves it, podctl's streams only need the ID. */
const byId = (id: string): Container => ({id, state: 'CONTAINER_RUNNING'}) as unknown as Container

async function execSync(session: CrictlSession, client: CriClient, id: string, cmd: readonly string[]): Promise<void> {
  const timeout = session.int('timeout')
  let response
  try {
    response = await client.runtime(
      'execSync',
      {containerId: id, cmd: [...cmd], timeout: String(timeout)},
      {timeoutMs: timeout > 0 ? session.settings.timeoutMs + timeout * 1000 : 24 * 3_600_000},
    )
  } catch (error) {
    throw wrap(`execing command in container ${id} synchronously`, error)
  }

  // cri-client turns a non-zero exit into an error before crictl prints anything.
  if (response.exitCode !== 0) {
    throw new CrictlError(
      `execing command in container ${id} synchronously: ` +
        `command '${cmd.join(' ')}' exited with ${response.exitCode}: ${Buffer.from(response.stderr).toString()}`,
    )
  }

  session.println(Buffer.from(response.stdout).toString())
  session.println(Buffer.from(response.stderr).toString())
}

async function execStreaming(session: CrictlSession, client: CriClient, id: string, cmd: readonly string[]): Promise<void> {
  const tty = session.bool('tty')
  const stdin = session.bool('interactive')
  try {
    if (tty && !stdin) throw new CrictlError('tty=true must be specified with interactive=true')
    if (tty && !process.stdin.isTTY) throw new CrictlError('input is not a terminal')
    const {exitCode} = await execInteractive(client, byId(id), cmd, {
      stdin,
      tty,
      detachKeys: parseDetachKeys(tty && stdin ? 'ctrl-p,ctrl-q' : ''),
    })
    if (exitCode !== 0) throw new CrictlError(`command terminated with exit code ${exitCode}`)
  } catch (error) {
    throw wrap(`execing command in container ${id}`, error)
  }
}

async function exec(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  const image = await session.image()
  let ids = [session.args[0]]
  let cmd = session.args.slice(1)
  let printIds = false
  const ignoreErrors = session.bool('ignore-errors')
  const quiet = session.bool('quiet')
  if (ignoreErrors && !quiet) warning('The `--ignore-errors` option has been set all errors returned by the command will be ignored.')
  if (EXEC_FILTERS.some((flag) => session.isSet(flag))) {
    cmd = [...session.args]
    printIds = !quiet && !session.bool('parallel')
    const labels = crictlLabels(session.strings('label'))
    try {
      const containers = await listCrictlContainers(client, image, {
        name: session.value('name'),
        pod: session.value('pod'),
        image: session.value('image'),
        state: session.value('state'),
        latest: session.bool('latest'),
        last: session.int('last'),
        labels,
      })
      ids = containers.map((container) => container.id)
    } catch (error) {
      throw wrap('listing containers', error)
    }

    if (ids.length === 0) {
      logError('No containers found per filter flags')
      return session.usage()
    }
  }

  checkStreamFlags(session)
  const run = async (id: string) => {
    if (printIds) session.println(`${id}:`)
    await (session.bool('sync') ? execSync(session, client, id, cmd) : execStreaming(session, client, id, cmd))
  }

  try {
    // crictl starts them all at once; without --parallel podctl runs them one after another, so outputs do not mix.
    if (session.bool('parallel')) await aggregate(ids.map((id) => () => run(id)))
    else {
      const failures: string[] = []
      for (const id of ids) await run(id).catch((error: unknown) => failures.push(describe(error)))
      if (failures.length > 0) throw new CrictlError(failures.join('\n'))
    }
  } catch (error) {
    if (!ignoreErrors) throw error
  }
}

async function attach(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  checkStreamFlags(session)
  const tty = session.bool('tty')
  const stdin = session.bool('stdin')
  try {
    if (tty && !stdin) throw new CrictlError('tty=true must be specified with interactive=true')
    await attachInteractive(client, byId(session.args[0]), {stdin, tty, detachKeys: parseDetachKeys(tty && stdin ? 'ctrl-p,ctrl-q' : '')})
  } catch (error) {
    throw wrap('attaching running container failed', error)
  }
}

async function portForward(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  checkStreamFlags(session)
  const [id, ...specs] = session.args
  try {
    const ports = specs.map((spec) => parsePortSpec(spec))
    const sandbox = {id, state: 'SANDBOX_READY'} as Parameters<typeof portForwardStream>[1]
    const forwarder = await portForwardStream(client, sandbox, ports, {
      addresses: ['localhost'],
      onLine: (line, to) => (to === 'stdout' ? session.println(line) : process.stderr.write(`${line}\n`)),
    })
    for (const entry of forwarder.listening) session.println(forwardingLine(entry))
    const close = () => forwarder.close()
    process.once('SIGINT', close)
    process.once('SIGTERM', close)
    await forwarder.ended
  } catch (error) {
    throw wrap('port forward', error)
  }
}

/** logs.go's path of the previous attempt: the same directory, the attempt before, the same extension. */
function previousPath(logPath: string, attempt: number): string {
  const dot = logPath.lastIndexOf('.')
  const extension = dot === -1 ? '' : logPath.slice(dot)
  return `${logPath.slice(0, logPath.lastIndexOf('/') + 1)}${attempt - 1}${extension}`
}

async function logs(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  const id = session.args[0]
  if (session.bool('reopen')) {
    try {
      await client.runtime('reopenContainerLog', {containerId: id})
    } catch (error) {
      throw wrap('reopen container logs', error)
    }

    info('Container logs reopened')
  }

  const since = session.string('since')
  const sinceNanos = since === '' ? undefined : parseSince(since, Date.now(), parseDuration)
  if (since !== '' && sinceNanos === undefined) throw new CrictlError(`failed to parse value as time or duration: ${JSON.stringify(since)}`)
  const stream = session.string('stream')
  if (!['', 'stderr', 'stdout'].includes(stream))
    throw new CrictlError(`invalid stream ${JSON.stringify(stream)}, must be "stdout" or "stderr"`)
  if (session.isSet('tail') && session.isSet('stream')) throw new CrictlError('--tail and --stream are mutually exclusive')
  const {status} = await client.runtime('containerStatus', {containerId: id, verbose: false})
  let path = status?.logPath ?? ''
  if (path === '') throw new CrictlError('the container has not set log path')
  if (session.bool('previous')) {
    const attempt = status?.metadata?.attempt ?? 0
    if (attempt === 0) throw new CrictlError(`previous terminated container ${status?.metadata?.name ?? ''} not found`)
    path = previousPath(path, attempt)
  }

  const reader = await LogFileReader.open(path)
  const writer = new OrderedWriter({stdout: process.stdout, stderr: process.stderr}, session.int('limit-bytes'))
  try {
    await showLog(reader, writer, {
      sinceNanos,
      stream: stream === '' ? undefined : (stream as 'stdout' | 'stderr'),
      tail: session.int('tail'),
      timestamps: session.bool('timestamps'),
      follow: session.bool('follow'),
      isRunning: containerLiveness(client, status!.id),
    })
  } finally {
    await reader.close()
  }
}

export const ACTIONS = {exec, attach, 'port-forward': portForward, logs}
