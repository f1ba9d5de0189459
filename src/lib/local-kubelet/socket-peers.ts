/**
 * Which of some processes hold a connection to a unix socket. The kernel keeps a connection's peer
 * only in sock_diag (what `ss -x` reads): the listening side of each accepted connection carries the
 * socket's path and its peer's inode, and a client's file descriptors name that inode
 * (/proc/PID/fd → socket:[INODE]). Run only when a kubelet process exists, so its cost (one `ss`) is
 * never paid on a node without one.
 */
import {execFile} from 'node:child_process'
import {readdirSync, readlinkSync} from 'node:fs'

import type {ProcOptions} from './processes.js'

const SS_TIMEOUT_MS = 2000

/** The pids among `pids` with a connection to the socket at `path`; undefined when `ss` could not tell. */
export async function pidsConnectedTo(path: string, pids: readonly number[], options: ProcOptions = {}): Promise<number[] | undefined> {
  if (pids.length === 0) return []
  const peers = await peerInodes(path)
  if (!peers) return undefined
  return pids.filter((pid) => socketInodes(pid, options).some((inode) => peers.has(inode)))
}

/** The peer inodes of the connections accepted on the socket at `path` (`ss -xn src PATH`). */
export async function peerInodes(path: string): Promise<Set<string> | undefined> {
  const output = await new Promise<string | undefined>((resolve) => {
    execFile('ss', ['-xnH', 'src', path], {timeout: SS_TIMEOUT_MS, encoding: 'utf8'}, (error, stdout) =>
      resolve(error ? undefined : stdout),
    )
  })
  return output === undefined ? undefined : parsePeerInodes(output, path)
}

/**
 * `ss -xnH` lines: Netid State Recv-Q Send-Q Local-Address Local-Port(inode) Peer-Address Peer-Port(inode).
 * The local address is the socket's path (it has no spaces: CRI endpoints never do).
 */
export function parsePeerInodes(output: string, path: string): Set<string> {
  const peers = new Set<string>()
  for (const line of output.split('\n')) {
    const fields = line.trim().split(/\s+/)
    if (fields.length < 8 || fields[4] !== path) continue
    if (/^\d+$/.test(fields[7]) && fields[7] !== '0') peers.add(fields[7])
  }

  return peers
}

function socketInodes(pid: number, {procRoot = '/proc'}: ProcOptions): string[] {
  const dir = `${procRoot}/${pid}/fd`
  let fds: string[]
  try {
    fds = readdirSync(dir)
  } catch {
    return []
  }

  return fds.flatMap((fd) => {
    try {
      const match = /^socket:\[(\d+)]$/.exec(readlinkSync(`${dir}/${fd}`))
      return match ? [match[1]] : []
    } catch {
      return []
    }
  })
}
