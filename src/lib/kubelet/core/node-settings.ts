/** What every pod a command starts shares about the node: the host's resolv.conf, memory and CPUs, with the command's directories. */
import {readFile} from 'node:fs/promises'
import {cpus, totalmem} from 'node:os'

export async function nodeSettings<T extends {logsRoot: string; podDirRoot: string}>(
  options: T,
): Promise<T & {hostResolvConf: string; nodeMemoryBytes: number; nodeCpus: number}> {
  const hostResolvConf = await readFile('/etc/resolv.conf', 'utf8').catch(() => '')
  return {...options, hostResolvConf, nodeMemoryBytes: totalmem(), nodeCpus: cpus().length}
}
