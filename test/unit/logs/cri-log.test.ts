import {describe, expect, it} from 'vitest'

import {parseDuration} from '../../../src/lib/util/duration.js'
import {
  assembleLines,
  EntryPrinter,
  fixedWidthTimestamp,
  formatLine,
  LineAssembler,
  type LogEntry,
  parseLogLine,
  parseLogText,
  parseRfc3339Nanos,
  parseSince,
  previousLogPath,
  selectLines,
} from '../../../src/lib/logs/cri-log.js'

const T0 = '2024-05-01T10:00:00.123456789Z'

describe('parseRfc3339Nanos', () => {
  it('keeps nanosecond precision', () => {
    expect(parseRfc3339Nanos(T0)).toBe(1_714_557_600_123_456_789n)
  })

  it('applies the offset and pads short fractions', () => {
    expect(parseRfc3339Nanos('2024-05-01T12:00:00.5+02:00')).toBe(1_714_557_600_500_000_000n)
    expect(parseRfc3339Nanos('2024-05-01T09:30:00-00:30')).toBe(1_714_557_600_000_000_000n)
  })

  it('stays exact when many lines share a second (the whole-second part is cached)', () => {
    expect(parseRfc3339Nanos('2024-05-01T10:00:00.000000001Z')).toBe(1_714_557_600_000_000_001n)
    expect(parseRfc3339Nanos('2024-05-01T10:00:00.999999999Z')).toBe(1_714_557_600_999_999_999n)
    expect(parseRfc3339Nanos('2024-05-01T10:00:00Z')).toBe(1_714_557_600_000_000_000n)
    expect(parseRfc3339Nanos('2024-05-01T10:00:00+01:00')).toBe(1_714_554_000_000_000_000n)
    expect(parseRfc3339Nanos('2024-02-30T10:00:00Z')).toBeUndefined()
    expect(parseRfc3339Nanos('2024-02-30T10:00:00.5Z')).toBeUndefined()
  })

  it('rejects what is not a timestamp', () => {
    for (const text of [
      '',
      'hello',
      '2024-05-01',
      '2024-05-01T10:00:00',
      '2024-13-01T10:00:00Z',
      '2024-02-30T10:00:00Z',
      '2024-05-01T10:00:00.1234567891Z',
    ]) {
      expect(parseRfc3339Nanos(text), text).toBeUndefined()
    }
  })
})

describe('fixedWidthTimestamp', () => {
  it('pads the fraction to nine digits and keeps the offset', () => {
    expect(fixedWidthTimestamp('2024-05-01T10:00:00.1Z')).toBe('2024-05-01T10:00:00.100000000Z')
    expect(fixedWidthTimestamp('2024-05-01T12:00:00+02:00')).toBe('2024-05-01T12:00:00.000000000+02:00')
    expect(fixedWidthTimestamp(T0)).toBe(T0)
  })
})

describe('parseLogLine: CRI format', () => {
  it('reads a full line', () => {
    expect(parseLogLine(`${T0} stdout F hello world`)).toEqual({
      time: T0,
      nanos: 1_714_557_600_123_456_789n,
      stream: 'stdout',
      partial: false,
      content: 'hello world',
    })
  })

  it('keeps the message exactly, spaces and tabs included', () => {
    expect(parseLogLine(`${T0} stderr F   two  spaces\tand tab `)?.content).toBe('  two  spaces\tand tab ')
  })

  it('marks P lines partial', () => {
    expect(parseLogLine(`${T0} stdout P abc`)).toMatchObject({partial: true, content: 'abc'})
  })

  it('reads an empty message with or without the separating space', () => {
    expect(parseLogLine(`${T0} stdout F `)?.content).toBe('')
    expect(parseLogLine(`${T0} stdout F`)?.content).toBe('')
  })

  it('accepts further ":"-separated tags (forward compatible)', () => {
    expect(parseLogLine(`${T0} stdout P:x msg`)).toMatchObject({partial: true, content: 'msg'})
  })

  it('rejects malformed lines', () => {
    for (const line of [
      'garbage',
      `${T0}`,
      `${T0} stdout`,
      `${T0} stdin F x`,
      `${T0} stdout X x`,
      `not-a-time stdout F x`,
      `${T0}  stdout F x`,
    ]) {
      expect(parseLogLine(line), line).toBeUndefined()
    }
  })
})

describe('parseLogLine: Docker JSON fallback', () => {
  it('reads a complete line and drops its newline', () => {
    expect(parseLogLine(JSON.stringify({log: 'hi\n', stream: 'stderr', time: T0}))).toEqual({
      time: T0,
      nanos: 1_714_557_600_123_456_789n,
      stream: 'stderr',
      partial: false,
      content: 'hi',
    })
  })

  it('treats a message without newline as partial', () => {
    expect(parseLogLine(JSON.stringify({log: 'part', stream: 'stdout', time: T0}))).toMatchObject({partial: true, content: 'part'})
  })

  it('rejects JSON that is not a log line', () => {
    for (const line of [
      '{',
      '{}',
      '[1]',
      JSON.stringify({log: 'x\n', stream: 'stdin', time: T0}),
      JSON.stringify({log: 1, stream: 'stdout', time: T0}),
      JSON.stringify({log: 'x\n', stream: 'stdout', time: 'yesterday'}),
    ]) {
      expect(parseLogLine(line), line).toBeUndefined()
    }
  })
})

describe('parseLogText', () => {
  it('counts malformed lines and ignores blank ones', () => {
    const text = [`${T0} stdout F a`, 'oops', '', `${T0} stderr F b`, '{"log":', ''].join('\n')
    const parsed = parseLogText(text)
    expect(parsed.entries.map((e) => e.content)).toEqual(['a', 'b'])
    expect(parsed.malformed).toBe(2)
  })

  it('reads a file mixing CRI and Docker JSON lines', () => {
    const text = [`${T0} stdout F cri`, JSON.stringify({log: 'json\n', stream: 'stdout', time: T0})].join('\n')
    expect(parseLogText(text).entries.map((e) => e.content)).toEqual(['cri', 'json'])
  })
})

function entry(seconds: number, stream: 'stdout' | 'stderr', tag: 'P' | 'F', content: string): LogEntry {
  const time = `2024-05-01T10:00:${String(seconds).padStart(2, '0')}Z`
  return parseLogLine(`${time} ${stream} ${tag} ${content}`)!
}

describe('assembleLines', () => {
  it('joins P fragments with the next F of the same stream, timed by the first fragment', () => {
    const lines = assembleLines([entry(1, 'stdout', 'P', 'hel'), entry(2, 'stdout', 'P', 'lo '), entry(3, 'stdout', 'F', 'world')])
    expect(lines).toEqual([
      {
        time: '2024-05-01T10:00:01Z',
        nanos: parseRfc3339Nanos('2024-05-01T10:00:01Z'),
        stream: 'stdout',
        text: 'hello world',
        complete: true,
      },
    ])
  })

  it('keeps streams apart when they interleave', () => {
    const lines = assembleLines([entry(1, 'stdout', 'P', 'out-'), entry(2, 'stderr', 'F', 'err'), entry(3, 'stdout', 'F', 'end')])
    expect(lines.map((l) => [l.stream, l.text])).toEqual([
      ['stderr', 'err'],
      ['stdout', 'out-end'],
    ])
  })

  it('reports a line the container never finished as incomplete, last', () => {
    const lines = assembleLines([entry(1, 'stdout', 'P', 'no newline'), entry(2, 'stderr', 'F', 'x')])
    expect(lines.map((l) => [l.text, l.complete])).toEqual([
      ['x', true],
      ['no newline', false],
    ])
  })

  it('LineAssembler.flush forgets what it returned', () => {
    const assembler = new LineAssembler()
    assembler.push(entry(1, 'stdout', 'P', 'a'))
    expect(assembler.flush()).toHaveLength(1)
    expect(assembler.flush()).toEqual([])
  })
})

describe('selectLines', () => {
  const lines = assembleLines([
    entry(1, 'stdout', 'F', 'o1'),
    entry(2, 'stderr', 'F', 'e1'),
    entry(3, 'stdout', 'F', 'o2'),
    entry(4, 'stderr', 'F', 'e2'),
    entry(5, 'stdout', 'F', 'o3'),
  ])
  const texts = (selected: ReturnType<typeof selectLines>) => selected.map((l) => l.text)

  it('returns everything by default and for a negative tail', () => {
    expect(texts(selectLines(lines, {}))).toEqual(['o1', 'e1', 'o2', 'e2', 'o3'])
    expect(texts(selectLines(lines, {tail: -1}))).toEqual(['o1', 'e1', 'o2', 'e2', 'o3'])
  })

  it('tails whole lines, 0 meaning none', () => {
    expect(texts(selectLines(lines, {tail: 2}))).toEqual(['e2', 'o3'])
    expect(texts(selectLines(lines, {tail: 0}))).toEqual([])
    expect(texts(selectLines(lines, {tail: 99}))).toHaveLength(5)
  })

  it('applies --since (inclusive) and --stream before --tail', () => {
    expect(texts(selectLines(lines, {sinceNanos: parseRfc3339Nanos('2024-05-01T10:00:03Z')}))).toEqual(['o2', 'e2', 'o3'])
    expect(texts(selectLines(lines, {stream: 'stderr', tail: 1}))).toEqual(['e2'])
    expect(texts(selectLines(lines, {stream: 'stdout', sinceNanos: parseRfc3339Nanos('2024-05-01T10:00:02Z'), tail: 5}))).toEqual([
      'o2',
      'o3',
    ])
  })

  it('decides --since by the first fragment of a joined line', () => {
    const joined = assembleLines([entry(1, 'stdout', 'P', 'a'), entry(9, 'stdout', 'F', 'b')])
    expect(selectLines(joined, {sinceNanos: parseRfc3339Nanos('2024-05-01T10:00:05Z')})).toEqual([])
  })
})

describe('parseSince', () => {
  const now = Date.UTC(2024, 4, 1, 10, 0, 0)

  it('reads durations relative to now', () => {
    expect(parseSince('10m', now, parseDuration)).toBe(BigInt(now - 600_000) * 1_000_000n)
    expect(parseSince('1h30m', now, parseDuration)).toBe(BigInt(now - 5_400_000) * 1_000_000n)
  })

  it('reads RFC 3339 times', () => {
    expect(parseSince('2024-05-01T09:00:00Z', now, parseDuration)).toBe(parseRfc3339Nanos('2024-05-01T09:00:00Z'))
  })

  it('rejects anything else', () => {
    expect(parseSince('yesterday', now, parseDuration)).toBeUndefined()
    expect(parseSince('2024-05-01', now, parseDuration)).toBeUndefined()
  })
})

describe('formatLine', () => {
  const [line] = assembleLines([entry(1, 'stdout', 'F', 'hi')])

  it('ends complete lines with a newline and prefixes fixed-width timestamps on request', () => {
    expect(formatLine(line)).toBe('hi\n')
    expect(formatLine(line, {timestamps: true})).toBe('2024-05-01T10:00:01.000000000Z hi\n')
  })

  it('prints an unfinished line as written, without a newline', () => {
    const [open] = assembleLines([entry(1, 'stdout', 'P', 'prompt> ')])
    expect(formatLine(open)).toBe('prompt> ')
  })
})

describe('EntryPrinter (follow mode)', () => {
  it('prints fragments at once, with the timestamp only at the start of the line', () => {
    const printer = new EntryPrinter({timestamps: true})
    expect(printer.render(entry(1, 'stdout', 'P', 'a'))).toBe('2024-05-01T10:00:01.000000000Z a')
    expect(printer.render(entry(2, 'stderr', 'F', 'e'))).toBe('2024-05-01T10:00:02.000000000Z e\n')
    expect(printer.render(entry(3, 'stdout', 'F', 'b'))).toBe('b\n')
    expect(printer.render(entry(4, 'stdout', 'F', 'c'))).toBe('2024-05-01T10:00:04.000000000Z c\n')
  })

  it('filters by stream and decides --since per line', () => {
    const printer = new EntryPrinter({stream: 'stdout', sinceNanos: parseRfc3339Nanos('2024-05-01T10:00:05Z')})
    expect(printer.render(entry(6, 'stderr', 'F', 'e'))).toBe('')
    expect(printer.render(entry(1, 'stdout', 'P', 'old'))).toBe('')
    expect(printer.render(entry(7, 'stdout', 'F', '-end'))).toBe('')
    expect(printer.render(entry(8, 'stdout', 'F', 'new'))).toBe('new\n')
  })

  it('continues a line left open by the initial read', () => {
    const printer = new EntryPrinter({timestamps: true})
    printer.continueLine('stdout')
    expect(printer.render(entry(9, 'stdout', 'F', 'rest'))).toBe('rest\n')
  })
})

describe('previousLogPath', () => {
  it('points at the previous attempt', () => {
    expect(previousLogPath('/var/log/pods/ns_pod_uid/app/3.log')).toBe('/var/log/pods/ns_pod_uid/app/2.log')
    expect(previousLogPath('/logs/app/10.log')).toBe('/logs/app/9.log')
  })

  it('has none for attempt 0 or other file names', () => {
    expect(previousLogPath('/var/log/pods/ns_pod_uid/app/0.log')).toBeUndefined()
    expect(previousLogPath('/logs/app.log')).toBeUndefined()
  })
})
