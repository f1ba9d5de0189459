/**
 * The tar format `podctl cp -` speaks (POSIX.1-2001 pax over ustar, what GNU tar writes with
 * --format=pax and reads in every form): 512-byte headers, octal numeric fields, and pax extended
 * headers for what ustar cannot hold (names over 255 bytes, link targets over 100, sizes of 8 GiB
 * and up, large ids). Read side only: GNU tar's longname/longlink entries and base-256 numbers, so
 * archives made by `tar -c` in its default (gnu) format come in too.
 */
import {UsageError} from '../errors.js'

export const BLOCK = 512

export type TarType = 'file' | 'directory' | 'symlink' | 'hardlink' | 'other'

export interface TarHeader {
  /** The path in the archive: directories without their trailing "/". */
  name: string
  type: TarType
  /** Permission bits and setuid/setgid/sticky (0o7777). */
  mode: number
  uid: number
  gid: number
  size: number
  /** Seconds since the epoch. */
  mtime: number
  /** A symlink's or hard link's target. */
  linkname: string
}

/** Largest value of an 11-digit octal field (size, mtime), and of a 7-digit one (mode, uid, gid). */
const MAX_OCTAL_11 = 0o777_7777_7777
const MAX_OCTAL_7 = 0o777_7777

const TYPE_FLAGS: Record<Exclude<TarType, 'other'>, string> = {file: '0', directory: '5', symlink: '2', hardlink: '1'}

function writeString(block: Buffer, offset: number, length: number, value: string): void {
  block.write(value, offset, length, 'utf8')
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii')
}

function checksum(block: Buffer): number {
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]
  return sum
}

/** ustar's name and prefix for `name`, or undefined when it does not fit (then a pax path record carries it). */
function splitName(name: string): {name: string; prefix: string} | undefined {
  if (Buffer.byteLength(name) <= 100) return {name, prefix: ''}
  for (let slash = name.indexOf('/'); slash !== -1; slash = name.indexOf('/', slash + 1)) {
    const prefix = name.slice(0, slash)
    const rest = name.slice(slash + 1)
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest !== '') return {name: rest, prefix}
  }

  return undefined
}

/** One pax record, "LEN key=value\n", where LEN counts its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`
  const bodyLength = Buffer.byteLength(body)
  let length = bodyLength + 1
  while (String(length).length + bodyLength !== length) length = String(length).length + bodyLength
  return `${length}${body}`
}

function ustarBlock(header: TarHeader, typeFlag: string, name: {name: string; prefix: string}): Buffer {
  const block = Buffer.alloc(BLOCK)
  writeString(block, 0, 100, name.name)
  writeOctal(block, 100, 8, header.mode & 0o7777)
  writeOctal(block, 108, 8, header.uid <= MAX_OCTAL_7 ? header.uid : 0)
  writeOctal(block, 116, 8, header.gid <= MAX_OCTAL_7 ? header.gid : 0)
  writeOctal(block, 124, 12, header.size <= MAX_OCTAL_11 ? header.size : 0)
  writeOctal(block, 136, 12, Math.min(Math.max(0, Math.floor(header.mtime)), MAX_OCTAL_11))
  block[156] = typeFlag.codePointAt(0)!
  if (Buffer.byteLength(header.linkname) <= 100) writeString(block, 157, 100, header.linkname)
  block.write('ustar\u000000', 257, 8, 'ascii')
  writeString(block, 345, 155, name.prefix)
  writeOctal(block, 148, 7, checksum(block))
  block[155] = 0x20
  return block
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK
}

/**
 * The blocks that start an entry: a pax extended header first when ustar cannot hold a field, then
 * the ustar header (a directory's name ends in "/", as tar writes it).
 */
export function encodeHeader(header: TarHeader): Buffer {
  const archiveName = header.type === 'directory' ? `${header.name}/` : header.name
  const split = splitName(archiveName)
  const records: string[] = []
  if (!split) records.push(paxRecord('path', archiveName))
  if (Buffer.byteLength(header.linkname) > 100) records.push(paxRecord('linkpath', header.linkname))
  if (header.size > MAX_OCTAL_11) records.push(paxRecord('size', String(header.size)))
  if (header.uid > MAX_OCTAL_7) records.push(paxRecord('uid', String(header.uid)))
  if (header.gid > MAX_OCTAL_7) records.push(paxRecord('gid', String(header.gid)))
  const typeFlag = header.type === 'other' ? '0' : TYPE_FLAGS[header.type]
  const main = ustarBlock(header, typeFlag, split ?? {name: archiveName.slice(-100).replace(/^[^/]*\//, ''), prefix: ''})
  if (records.length === 0) return main
  const body = Buffer.from(records.join(''))
  const base = archiveName.replace(/\/$/, '').split('/').at(-1) ?? ''
  const pax = {...header, name: `PaxHeader/${base}`.slice(0, 100), size: body.length, linkname: '', type: 'file' as const}
  return Buffer.concat([ustarBlock(pax, 'x', {name: pax.name, prefix: ''}), body, Buffer.alloc(padding(body.length)), main])
}

/** The two zero blocks that end an archive. */
export function endOfArchive(): Buffer {
  return Buffer.alloc(2 * BLOCK)
}

export function paddingOf(size: number): number {
  return padding(size)
}

/** A header block as read, before pax or GNU long names apply. */
export interface RawHeader {
  name: string
  typeFlag: string
  mode: number
  uid: number
  gid: number
  size: number
  mtime: number
  linkname: string
}

function readString(block: Buffer, offset: number, length: number): string {
  const end = block.indexOf(0, offset)
  return block.toString('utf8', offset, end === -1 || end > offset + length ? offset + length : end)
}

/** An octal field (NUL or space ended), or GNU's base-256 form (high bit set) for large values. */
function readNumber(block: Buffer, offset: number, length: number, field: string, at: number): number {
  if (block[offset] & 0x80) {
    if (block[offset] & 0x40) throw new UsageError(`the tar header at byte ${at} has a negative ${field}`)
    let value = block[offset] & 0x3f
    for (let i = 1; i < length; i++) value = value * 256 + block[offset + i]
    if (!Number.isSafeInteger(value)) throw new UsageError(`the tar header at byte ${at} has a ${field} too large to read`)
    return value
  }

  const text = block
    .toString('latin1', offset, offset + length)
    .replace(/\0.*$/s, '')
    .trim()
  if (text === '') return 0
  if (!/^[0-7]+$/.test(text))
    throw new UsageError(`the tar header at byte ${at} has a ${field} that is not a number (${JSON.stringify(text)})`)
  return Number.parseInt(text, 8)
}

export function isZeroBlock(block: Buffer): boolean {
  return block.every((byte) => byte === 0)
}

/** Decodes a header block (`at`: its byte offset in the archive, for messages); its checksum must match. */
export function decodeHeader(block: Buffer, at: number): RawHeader {
  let stored: number
  try {
    stored = readNumber(block, 148, 8, 'checksum', at)
  } catch {
    throw new UsageError(`not a tar archive: the header at byte ${at} has no checksum`)
  }

  let signed = 0
  for (let i = 0; i < BLOCK; i++) signed += i >= 148 && i < 156 ? 0x20 : (block[i] << 24) >> 24
  if (stored !== checksum(block) && stored !== signed) {
    throw new UsageError(`not a tar archive: the header at byte ${at} has a wrong checksum`)
  }

  const magic = block.toString('ascii', 257, 263)
  const prefix = magic === 'ustar\0' ? readString(block, 345, 155) : ''
  const name = readString(block, 0, 100)
  return {
    name: prefix === '' ? name : `${prefix}/${name}`,
    typeFlag: block[156] === 0 ? '0' : String.fromCodePoint(block[156]),
    mode: readNumber(block, 100, 8, 'mode', at) & 0o7777,
    uid: readNumber(block, 108, 8, 'uid', at),
    gid: readNumber(block, 116, 8, 'gid', at),
    size: readNumber(block, 124, 12, 'size', at),
    mtime: readNumber(block, 136, 12, 'mtime', at),
    linkname: readString(block, 157, 100),
  }
}

/** The records of a pax extended header ("LEN key=value\n" each). */
export function parsePax(body: Buffer, at: number): Map<string, string> {
  const records = new Map<string, string>()
  let offset = 0
  while (offset < body.length) {
    const space = body.indexOf(0x20, offset)
    const length = space === -1 ? Number.NaN : Number(body.toString('ascii', offset, space))
    if (!Number.isInteger(length) || length <= 0 || offset + length > body.length || body[offset + length - 1] !== 0x0a) {
      if (body.subarray(offset).every((byte) => byte === 0)) break
      throw new UsageError(`the pax header at byte ${at} has a malformed record`)
    }

    const record = body.toString('utf8', space + 1, offset + length - 1)
    const equals = record.indexOf('=')
    if (equals <= 0) throw new UsageError(`the pax header at byte ${at} has a malformed record`)
    records.set(record.slice(0, equals), record.slice(equals + 1))
    offset += length
  }

  return records
}

/** The type a header flag stands for ('7', contiguous, is a regular file to everyone but old Masscomp). */
export function typeOf(flag: string, name: string): TarType {
  if (flag === '0' || flag === '7') return name.endsWith('/') ? 'directory' : 'file'
  if (flag === '5') return 'directory'
  if (flag === '2') return 'symlink'
  return flag === '1' ? 'hardlink' : 'other'
}
