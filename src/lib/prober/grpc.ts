/**
 * pkg/probe/grpc: grpc.health.v1.Health/Check with the probe's service over a plaintext channel,
 * within the timeout (connect and call together). The two health messages are tiny, so they are
 * encoded here by hand: HealthCheckRequest {string service = 1}, HealthCheckResponse {enum status = 1}.
 */
import {grpcCodeName} from '../cri/status-names.js'
import {goSeconds, joinHostPort, KUBE_VERSION, type ProbeOutcome} from './types.js'

export const HEALTH_CHECK_PATH = '/grpc.health.v1.Health/Check'
export const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const

function encodeVarint(value: number): number[] {
  const bytes: number[] = []
  let rest = value
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80)
    rest = Math.floor(rest / 128)
  }

  bytes.push(rest)
  return bytes
}

function decodeVarint(buffer: Uint8Array, offset: number): [value: number, next: number] {
  let value = 0
  let scale = 1
  for (let at = offset; at < buffer.length && at < offset + 10; at++) {
    value += (buffer[at] & 0x7f) * scale
    if ((buffer[at] & 0x80) === 0) return [value, at + 1]
    scale *= 128
  }

  throw new Error('malformed varint')
}

/** A HealthCheckRequest or HealthCheckResponse field 1 as the wire has it. */
export function encodeHealthCheckRequest(service: string): Buffer {
  if (service === '') return Buffer.alloc(0)
  const text = Buffer.from(service, 'utf8')
  return Buffer.from([0x0a, ...encodeVarint(text.length), ...text])
}

export function decodeHealthCheckRequest(buffer: Uint8Array): string {
  let service = ''
  walkFields(buffer, (field, wire, value) => {
    if (field === 1 && wire === 2 && value instanceof Uint8Array) service = Buffer.from(value).toString('utf8')
  })
  return service
}

export function encodeHealthCheckResponse(status: number): Buffer {
  return status === 0 ? Buffer.alloc(0) : Buffer.from([0x08, ...encodeVarint(status)])
}

/** The response's status number (unknown fields skipped, as protobuf decoders do). */
export function decodeHealthCheckResponse(buffer: Uint8Array): number {
  let status = 0
  walkFields(buffer, (field, wire, value) => {
    if (field === 1 && wire === 0 && typeof value === 'number') status = value
  })
  return status
}

function walkFields(buffer: Uint8Array, visit: (field: number, wire: number, value: number | Uint8Array) => void): void {
  let at = 0
  while (at < buffer.length) {
    const [tag, afterTag] = decodeVarint(buffer, at)
    const field = Math.floor(tag / 8)
    const wire = tag & 7
    switch (wire) {
      case 0: {
        const [value, next] = decodeVarint(buffer, afterTag)
        visit(field, wire, value)
        at = next

        break
      }

      case 2: {
        const [length, start] = decodeVarint(buffer, afterTag)
        if (start + length > buffer.length) throw new Error('truncated message')
        visit(field, wire, buffer.subarray(start, start + length))
        at = start + length

        break
      }

      case 1:
      case 5: {
        at = afterTag + (wire === 1 ? 8 : 4)

        break
      }

      default: {
        throw new Error(`unsupported wire type ${wire}`)
      }
    }
  }
}

/** grpc-js status codes the kubelet tells apart. */
const UNIMPLEMENTED = 12
const DEADLINE_EXCEEDED = 4

export async function grpcProbe(host: string, port: number, service: string, timeoutSeconds: number): Promise<ProbeOutcome> {
  const grpc = await import('@grpc/grpc-js')
  const address = joinHostPort(host, port)
  const deadline = Date.now() + timeoutSeconds * 1000
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    'grpc.primary_user_agent': `kube-probe/${KUBE_VERSION.major}.${KUBE_VERSION.minor}`,
    // One connection per probe, never shared with another probe's channel.
    'grpc.use_local_subchannel_pool': 1,
  })
  try {
    // grpc.WithBlock: the connection first, within the timeout.
    const connected = await new Promise<Error | undefined>((resolve) => {
      client.waitForReady(deadline, (error) => resolve(error ?? undefined))
    })
    if (connected) {
      return /deadline/i.test(connected.message)
        ? {
            status: 'failure',
            output: `timeout: failed to connect service "${address}" within ${goSeconds(timeoutSeconds)}: context deadline exceeded`,
          }
        : {status: 'failure', output: `error: failed to connect service at "${address}": ${connected.message}`}
    }

    const response = await new Promise<{status?: number; error?: Error & {code?: number; details?: string}}>((resolve) => {
      client.makeUnaryRequest(
        HEALTH_CHECK_PATH,
        (value: string) => encodeHealthCheckRequest(value),
        (buffer: Buffer) => decodeHealthCheckResponse(buffer),
        service,
        new grpc.Metadata(),
        {deadline},
        (error, value) => resolve(error ? {error} : {status: value}),
      )
    })
    if (response.error) {
      const {code, details} = response.error
      if (code === UNIMPLEMENTED) {
        return {
          status: 'failure',
          output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${details}`,
        }
      }

      if (code === DEADLINE_EXCEEDED)
        return {status: 'failure', output: `timeout: health rpc did not complete within ${goSeconds(timeoutSeconds)}`}
      const name = code === undefined ? 'Unknown' : grpcCodeName(code)
      return {
        status: 'failure',
        output: `error: health rpc probe failed: rpc error: code = ${name} desc = ${details ?? response.error.message}`,
      }
    }

    const status = response.status ?? 0
    if (status !== 1) return {status: 'failure', output: `service unhealthy (responded with "${SERVING_STATUS[status] ?? String(status)}")`}
    return {status: 'success', output: 'service healthy'}
  } finally {
    client.close()
  }
}
