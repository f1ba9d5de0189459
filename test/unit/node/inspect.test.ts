import {describe, expect, it} from 'vitest'

import {resolveInspectTarget, rewriteTimestamps, statusDocument} from '../../../src/lib/node/inspect.js'
import {parseVerboseInfo} from '../../../src/lib/node/verbose-info.js'
import {runtimeInfoDocument} from '../../../src/lib/node/runtime-info.js'
import type {Container, Image, PodSandbox, StatusResponse} from '../../../src/generated/runtime/v1/api.js'

describe('rewriteTimestamps', () => {
  it('rewrites every *At int64 at any depth and nothing else', () => {
    const status = {
      id: 'x',
      createdAt: '1700000000000000001',
      startedAt: '1700000000500000000',
      finishedAt: '0',
      exitCode: 3,
      labels: {createdAt: 'not-a-number'},
      nested: [{finishedAt: '1700000001000000000', restartCount: '12'}],
    }
    expect(rewriteTimestamps(status)).toEqual({
      id: 'x',
      createdAt: '2023-11-14T22:13:20.000000001Z',
      startedAt: '2023-11-14T22:13:20.5Z',
      finishedAt: null,
      exitCode: 3,
      labels: {createdAt: 'not-a-number'},
      nested: [{finishedAt: '2023-11-14T22:13:21Z', restartCount: '12'}],
    })
    expect(status.createdAt).toBe('1700000000000000001')
  })
})

describe('verbose info merging', () => {
  it('parses JSON values into objects and keeps other strings', () => {
    expect(
      parseVerboseInfo({info: '{"pid":42,"runtimeSpec":{"ociVersion":"1.0.2"}}', list: '[1,2]', note: 'plain text', num: '7'}),
    ).toEqual({
      info: {pid: 42, runtimeSpec: {ociVersion: '1.0.2'}},
      list: [1, 2],
      note: 'plain text',
      num: 7,
    })
  })

  it('puts the status first and every info key beside it, never over it', () => {
    const document = statusDocument({id: 'abc', createdAt: '1700000000000000000'}, {info: '{"pid":1}', status: '"x"'})
    expect(document).toEqual({status: {id: 'abc', createdAt: '2023-11-14T22:13:20Z'}, info: {pid: 1}, statusInfo: 'x'})
    expect(Object.keys(document)[0]).toBe('status')
  })

  it('builds the info document with handlers and features only when reported', () => {
    const response = {
      status: {conditions: [{type: 'RuntimeReady', status: true, reason: '', message: ''}]},
      info: {config: '{"sandboxImage":"pause:3.9"}', golang: '"go1.20"'},
      runtimeHandlers: [],
      features: undefined,
    } as unknown as StatusResponse
    expect(runtimeInfoDocument(response)).toEqual({
      status: {conditions: [{type: 'RuntimeReady', status: true, reason: '', message: ''}]},
      config: {sandboxImage: 'pause:3.9'},
      golang: 'go1.20',
    })
    const withHandlers = {
      ...response,
      runtimeHandlers: [{name: 'runc', features: {recursiveReadOnlyMounts: true, userNamespaces: false}}],
      features: {supplementalGroupsPolicy: true},
    }
    expect(runtimeInfoDocument(withHandlers as StatusResponse)).toMatchObject({
      runtimeHandlers: [{name: 'runc', features: {recursiveReadOnlyMounts: true}}],
      features: {supplementalGroupsPolicy: true},
    })
  })
})

describe('resolveInspectTarget', () => {
  const sandboxes = [
    {id: 'a1' + '0'.repeat(62), metadata: {name: 'web', namespace: 'shop', uid: 'u', attempt: 0}, createdAt: '1'},
    {id: 'b2' + '0'.repeat(62), metadata: {name: 'db', namespace: 'default', uid: 'u', attempt: 0}, createdAt: '1'},
  ] as PodSandbox[]
  const containers = [
    {id: 'a9' + '0'.repeat(62), podSandboxId: sandboxes[0].id, metadata: {name: 'nginx', attempt: 0}, labels: {}, createdAt: '2'},
    {id: 'c3' + '0'.repeat(62), podSandboxId: sandboxes[1].id, metadata: {name: 'pg', attempt: 0}, labels: {}, createdAt: '2'},
  ] as Container[]
  const images = [{id: 'sha256:d4' + '0'.repeat(62), repoTags: ['localhost:5000/app:v1'], repoDigests: []}] as unknown as Image[]
  const lists = {containers, sandboxes, images}

  it('finds each kind without being told', () => {
    expect(resolveInspectTarget(lists, 'c3', undefined)).toMatchObject({kind: 'container', id: containers[1].id})
    expect(resolveInspectTarget(lists, 'web/nginx', undefined, {namespace: 'shop'})).toMatchObject({
      kind: 'container',
      id: containers[0].id,
    })
    expect(resolveInspectTarget(lists, 'db', undefined)).toMatchObject({kind: 'pod', id: sandboxes[1].id})
    expect(resolveInspectTarget(lists, 'web_shop', undefined)).toMatchObject({kind: 'pod', id: sandboxes[0].id})
    expect(resolveInspectTarget(lists, 'localhost:5000/app:v1', undefined)).toMatchObject({kind: 'image'})
    expect(resolveInspectTarget(lists, 'd4', undefined)).toMatchObject({kind: 'image'})
  })

  it('refuses a reference that matches several kinds, listing them (exit 15)', () => {
    const run = () => resolveInspectTarget(lists, 'a', undefined)
    expect(run).toThrow(expect.objectContaining({exitCode: 15}))
    expect(run).toThrow(/container a900000000000 \(nginx\).*pod a100000000000 \(web_shop\)/)
  })

  it('lets a kind settle the ambiguity', () => {
    expect(resolveInspectTarget(lists, 'a', 'pod')).toMatchObject({kind: 'pod', id: sandboxes[0].id})
    expect(resolveInspectTarget(lists, 'a', 'container')).toMatchObject({kind: 'container', id: containers[0].id})
  })

  it('is NotFound (exit 5) when nothing matches', () => {
    expect(() => resolveInspectTarget(lists, 'zzz', undefined)).toThrow(expect.objectContaining({exitCode: 5}))
    expect(() => resolveInspectTarget(lists, 'db', 'image')).toThrow(/image "db" not found/)
  })
})
