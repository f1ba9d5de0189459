/**
 * Whose a pod log directory or a /var/log/containers link is: podctl's mark only in directories it
 * created, read back for this runtime; links podctl's only when they are symbolic links into a log
 * directory podctl can prove its own.
 */
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import type {RecordedPod} from '../../../../src/lib/kube/ownership.js'
import {
  containerLogLinkOwnership,
  markPodLogDirectory,
  parsePodLogsDirectoryName,
  POD_LOGS_MARK,
  podLogDirectoryOwnership,
  removeEmptyPodLogDirectory,
} from '../../../../src/lib/kubelet/core/owned-logs.js'

const A = 'unix:///run/a/containerd.sock'
const B = 'unix:///run/b/containerd.sock'
const work = mkdtempSync(join(tmpdir(), 'podctl-owned-logs-'))
const logsRoot = join(work, 'pods')
const links = join(work, 'containers')
mkdirSync(links, {recursive: true})
afterAll(() => rmSync(work, {recursive: true, force: true}))

async function madeByPodctl(name: string, uid: string, runtime = A): Promise<string> {
  const directory = join(logsRoot, name)
  mkdirSync(directory, {recursive: true})
  await markPodLogDirectory(directory, true, {uid, runtimeEndpoint: runtime})
  return directory
}

const noRecords = async (): Promise<RecordedPod | undefined> => undefined

describe('pod log directories', () => {
  it('parses <namespace>_<name>_<uid> as the kubelet (the UID is the last part)', () => {
    expect(parsePodLogsDirectoryName('ns_web_1234-abcd')).toEqual({namespace: 'ns', podUid: '1234-abcd'})
    expect(parsePodLogsDirectoryName('stray')).toBeUndefined()
  })

  it('are marked only when podctl created them, naming the uid and the runtime', async () => {
    const directory = await madeByPodctl('shop_web_u1', 'u1', '/run/a/containerd.sock')
    expect(JSON.parse(readFileSync(join(directory, POD_LOGS_MARK), 'utf8'))).toEqual({madeBy: 'podctl', uid: 'u1', runtimeEndpoint: A})
    const existing = join(logsRoot, 'shop_theirs_u2')
    mkdirSync(existing, {recursive: true})
    await markPodLogDirectory(existing, false, {uid: 'u2', runtimeEndpoint: A})
    expect(existsSync(join(existing, POD_LOGS_MARK))).toBe(false)
  })

  it("are podctl's when marked for this runtime and this pod; others are said why", async () => {
    const directory = await madeByPodctl('shop_mine_u3', 'u3')
    expect(await podLogDirectoryOwnership(directory, 'u3', A)).toEqual({
      ours: true,
      rule: 'podctl-mark',
      why: `made by podctl on this runtime (its ${POD_LOGS_MARK})`,
    })
    expect(await podLogDirectoryOwnership(directory, 'u3', B)).toMatchObject({ours: false, rule: 'other-runtime'})
    expect(await podLogDirectoryOwnership(directory, 'u9', A)).toMatchObject({ours: false, why: `its ${POD_LOGS_MARK} names another pod`})
    const foreign = join(logsRoot, 'shop_kubelets_u4')
    mkdirSync(join(foreign, 'app'), {recursive: true})
    expect(await podLogDirectoryOwnership(foreign, 'u4', A)).toEqual({
      ours: false,
      rule: 'not-podctl',
      why: `not made by podctl (no ${POD_LOGS_MARK})`,
    })
  })

  it("are not podctl's because of a mark someone else wrote badly", async () => {
    const directory = join(logsRoot, 'shop_odd_u5')
    mkdirSync(directory, {recursive: true})
    writeFileSync(join(directory, POD_LOGS_MARK), JSON.stringify({uid: 'u5', runtimeEndpoint: A}))
    expect((await podLogDirectoryOwnership(directory, 'u5', A)).ours).toBe(false)
  })
})

describe("a rolled-back pod's log directory", () => {
  it('goes when it holds nothing but the mark and empty log files; one with a byte of log, or not podctl’s, stays', async () => {
    const empty = await madeByPodctl('ci_pulled_u10', 'u10')
    mkdirSync(join(empty, 'app'))
    writeFileSync(join(empty, 'app', '0.log'), '')
    expect(await removeEmptyPodLogDirectory(empty, 'u10', A)).toBe(true)
    expect(existsSync(empty)).toBe(false)

    const written = await madeByPodctl('ci_crashed_u11', 'u11')
    mkdirSync(join(written, 'app'))
    writeFileSync(join(written, 'app', '0.log'), '2026-12-07T14:00:00Z stderr F boom\n')
    expect(await removeEmptyPodLogDirectory(written, 'u11', A)).toBe(false)
    expect(existsSync(join(written, 'app', '0.log'))).toBe(true)

    const theirs = join(logsRoot, 'ci_theirs_u12')
    mkdirSync(theirs, {recursive: true})
    expect(await removeEmptyPodLogDirectory(theirs, 'u12', A)).toBe(false)
    const otherRuntime = await madeByPodctl('ci_other_u13', 'u13', B)
    expect(await removeEmptyPodLogDirectory(otherRuntime, 'u13', A)).toBe(false)
    expect([existsSync(theirs), existsSync(otherRuntime)]).toEqual([true, true])
  })
})

describe('/var/log/containers links', () => {
  const id = (digit: string) => digit.repeat(64)

  it("are podctl's when they point into a log directory podctl made on this runtime, even when the file is gone", async () => {
    const directory = await madeByPodctl('shop_linked_u6', 'u6')
    const link = join(links, `linked_shop_app-${id('1')}.log`)
    symlinkSync(join(directory, 'app', '0.log'), link)
    const owner = await containerLogLinkOwnership(link, {logsRoot, runtime: A, recordOf: noRecords})
    expect(owner).toMatchObject({ours: true, rule: 'podctl-mark'})
    expect(owner.why).toBe(`points into shop_linked_u6, made by podctl on this runtime (its ${POD_LOGS_MARK})`)
    expect(await containerLogLinkOwnership(link, {logsRoot, runtime: B, recordOf: noRecords})).toMatchObject({rule: 'other-runtime'})
  })

  it("are podctl's when a record of this runtime names the directory they point into", async () => {
    const link = join(links, `gone_shop_app-${id('2')}.log`)
    symlinkSync(join(logsRoot, 'shop_gone_u7', 'app', '1.log'), link)
    const recorded: RecordedPod = {uid: 'u7', name: 'gone', namespace: 'shop', owner: 'this', containers: ['app']}
    const recordOf = async (uid: string) => (uid === 'u7' ? recorded : undefined)
    expect(await containerLogLinkOwnership(link, {logsRoot, runtime: A, recordOf})).toMatchObject({ours: true, rule: 'podctl-record'})
    const legacy = async (uid: string) => (uid === 'u7' ? {...recorded, owner: 'legacy' as const} : undefined)
    expect((await containerLogLinkOwnership(link, {logsRoot, runtime: A, recordOf: legacy})).ours).toBe(false)
  })

  it("are not podctl's when they point elsewhere, into an unmarked directory, or are not links", async () => {
    const outside = join(links, `user_shop_app-${id('3')}.log`)
    symlinkSync('/nonexistent/app.log', outside)
    expect(await containerLogLinkOwnership(outside, {logsRoot, runtime: A, recordOf: noRecords})).toMatchObject({
      ours: false,
      why: `not a link podctl makes (it points outside ${logsRoot})`,
    })
    const unmarked = join(links, `kubelet_shop_app-${id('4')}.log`)
    symlinkSync(join(logsRoot, 'shop_kubelet_u8', 'app', '0.log'), unmarked)
    expect(await containerLogLinkOwnership(unmarked, {logsRoot, runtime: A, recordOf: noRecords})).toMatchObject({rule: 'not-podctl'})
    const file = join(links, `file_shop_app-${id('5')}.log`)
    writeFileSync(file, 'a user wrote this\n')
    expect(await containerLogLinkOwnership(file, {logsRoot, runtime: A, recordOf: noRecords})).toMatchObject({
      ours: false,
      why: 'not a link podctl makes (not a symbolic link)',
    })
  })
})
