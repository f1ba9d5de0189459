/** What every pod a command starts shares about the node: the host's resolv.conf and memory, with the command's directories. */
import {readFile} from 'node:fs/promises'
import {totalmem} from 'node:os'

export async function nodeSettings<T extends {logsRoot: string; podDirRoot: string}>(
  options: T,
): Promise<T & {hostResolvConf: string; nodeMemoryBytes: number}> {
  return {...options, hostResolvConf: await readFile('/etc/resolv.conf', 'utf8').catch(() => ''), nodeMemoryBytes: totalmem()}
}
