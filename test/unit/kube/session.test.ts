import {spawn, spawnSync} from 'node:child_process'

import {afterAll, describe, expect, it} from 'vitest'

import {
  currentSession,
  currentVantage,
  describeSession,
  isOrphaned,
  type Session,
  SessionAnnotation,
  sessionAnnotations,
  SessionLabel,
  sessionLabels,
  sessionOf,
  sessionState,
} from '../../../src/lib/kube/session.js'
import {startTicksOf} from '../../../src/lib/util/process-start.js'

// Another live process standing for a podctl session that still runs.
const owner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], {stdio: 'ignore'})
afterAll(() => {
  owner.kill('SIGKILL')
})

/** A process that has certainly exited, as a session records it. */
function deadSession(): Session {
  const pid = spawnSync(process.execPath, ['-e', '0']).pid as number
  return {...currentVantage(), pid, startTicks: 12_345}
}

function ownerSession(): Session {
  return {...currentVantage(), pid: owner.pid!, startTicks: startTicksOf(owner.pid!)}
}

/** A CRI object as the runtime lists it back. */
const labeled = (session: Session, more: Record<string, string> = {}) => ({
  labels: {...more, ...sessionLabels(session)},
  annotations: sessionAnnotations(session),
})

describe('session labels', () => {
  it('name this process: pid, start time, boot and pid namespace, all as strings', () => {
    const session = currentSession('podctl debug web --target main')
    const labels = sessionLabels(session)
    expect(labels).toEqual({
      [SessionLabel.pid]: String(process.pid),
      [SessionLabel.startTicks]: String(startTicksOf(process.pid)),
      [SessionLabel.bootId]: expect.stringMatching(/^[0-9a-f-]{36}$/),
      [SessionLabel.pidNamespace]: expect.stringMatching(/^pid:\[\d+\]$/),
    })
    expect(sessionAnnotations(session)).toEqual({[SessionAnnotation.description]: 'podctl debug web --target main'})
    expect(sessionAnnotations(currentSession())).toEqual({})
  })

  it('read back to the same session, and to none on an object that carries no session', () => {
    const session = currentSession('podctl debug node')
    expect(sessionOf(labeled(session, {app: 'x'}))).toEqual(session)
    expect(sessionOf({labels: {app: 'x'}})).toBeUndefined()
    expect(describeSession(session)).toBe(`pid ${process.pid} (podctl debug node)`)
    expect(describeSession({pid: 7})).toBe('pid 7')
  })
})

describe('session state', () => {
  it('is alive while the owning process runs, gone once it has exited', () => {
    expect(sessionState(currentSession())).toBe('alive')
    expect(sessionState(ownerSession())).toBe('alive')
    expect(sessionState(deadSession())).toBe('gone')
  })

  it('is gone when the pid runs but was given to another process (another start time)', () => {
    const reused = {...ownerSession(), startTicks: startTicksOf(owner.pid!)! - 1}
    expect(sessionState(reused)).toBe('gone')
  })

  it('is gone when the node has booted since, whatever the pid does now', () => {
    expect(sessionState({...ownerSession(), bootId: '00000000-0000-0000-0000-000000000000'})).toBe('gone')
    expect(sessionState({...ownerSession(), pidNamespace: 'pid:[1]', bootId: '00000000-0000-0000-0000-000000000000'})).toBe('gone')
  })

  it('is unknown from another pid namespace, or when the labels cannot be read: such objects are left alone', () => {
    expect(sessionState(deadSession(), {...currentVantage(), pidNamespace: 'pid:[4026532999]'})).toBe('unknown')
    const broken = (labels: Record<string, string>) => sessionState(sessionOf({labels})!)
    expect(broken({[SessionLabel.pid]: 'abc'})).toBe('unknown')
    expect(broken({[SessionLabel.pid]: '0'})).toBe('unknown')
    expect(broken({[SessionLabel.pid]: String(owner.pid), [SessionLabel.startTicks]: 'soon'})).toBe('unknown')
  })

  it('trusts the pid alone when no start time was recorded (a node without /proc)', () => {
    expect(sessionState({pid: owner.pid!})).toBe('alive')
    expect(sessionState({pid: deadSession().pid})).toBe('gone')
  })
})

describe('isOrphaned', () => {
  it('is true only for an object whose session is gone', () => {
    expect(isOrphaned(labeled(deadSession()))).toBe(true)
    expect(isOrphaned(labeled(ownerSession()))).toBe(false)
    expect(isOrphaned(labeled(currentSession()))).toBe(false)
    // No session: not a session's object, so never orphaned by this rule.
    expect(isOrphaned({labels: {}})).toBe(false)
    // A session this process cannot judge.
    expect(isOrphaned(labeled(deadSession()), {...currentVantage(), pidNamespace: 'pid:[4026532999]'})).toBe(false)
  })
})
