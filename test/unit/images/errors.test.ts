import {describe, expect, test} from 'vitest'

import {formatGoDuration} from '../../../src/lib/util/duration.js'
import {ExitCode} from '../../../src/lib/errors.js'
import {
  ErrImagePullError,
  kubeletErrorText,
  pullFailure,
  RegistryUnavailableError,
  SignatureValidationFailedError,
  UnauthorizedError,
} from '../../../src/lib/images/errors.js'

describe('kubeletErrorText', () => {
  test('gRPC Unknown is reduced to its message (so prefixes can be matched), other codes read like grpc-go', () => {
    expect(kubeletErrorText(2, 'RegistryUnavailable: dial tcp 10.0.0.1:443: i/o timeout')).toBe(
      'RegistryUnavailable: dial tcp 10.0.0.1:443: i/o timeout',
    )
    expect(kubeletErrorText(5, 'failed to pull and unpack image "x": not found')).toBe(
      'rpc error: code = NotFound desc = failed to pull and unpack image "x": not found',
    )
    expect(kubeletErrorText(4, 'context deadline exceeded')).toBe('rpc error: code = DeadlineExceeded desc = context deadline exceeded')
  })
})

describe('pullFailure (evalCRIPullErr)', () => {
  test('a RegistryUnavailable prefix becomes the kubelet message with the rest appended', () => {
    const error = pullFailure('RegistryUnavailable: connection refused', 'example.com/app:v1')
    expect(error).toBeInstanceOf(RegistryUnavailableError)
    expect(error.code).toBe('RegistryUnavailable')
    expect(error.exitCode).toBe(ExitCode.IMAGE_PULL)
    expect(error.message).toBe('image pull failed for example.com/app:v1 because the registry is unavailable: connection refused')
  })

  test('a SignatureValidationFailed prefix keeps its own name', () => {
    const error = pullFailure('SignatureValidationFailed: no signature', 'app:v1')
    expect(error).toBeInstanceOf(SignatureValidationFailedError)
    expect(error.message).toBe('image pull failed for app:v1 because the signature validation failed: no signature')
  })

  test.each([
    'rpc error: code = Unknown desc = failed to pull and unpack image "r/x:1": ' +
      'failed to resolve reference "r/x:1": unexpected status code [manifests 1]: 401 Unauthorized',
    'failed to authorize: failed to fetch anonymous token: unexpected status: 403 Forbidden',
    'pull access denied, repository does not exist or may require authorization',
    'failed to fetch oauth token: unauthorized: authentication required',
  ])('registry refusals are Unauthorized (exit 13, kubelet reason ErrImagePull): %s', (text) => {
    const error = pullFailure(text, 'r/x:1')
    expect(error).toBeInstanceOf(UnauthorizedError)
    expect(error.code).toBe('Unauthorized')
    expect(error.reason).toBe('ErrImagePull')
    expect(error.exitCode).toBe(ExitCode.UNAUTHORIZED)
    expect(error.message).toBe(text)
  })

  test('anything else is ErrImagePull with the runtime text as the message', () => {
    const text = 'rpc error: code = NotFound desc = failed to pull and unpack image "localhost:5000/x:v1": not found'
    const error = pullFailure(text, 'localhost:5000/x:v1')
    expect(error).toBeInstanceOf(ErrImagePullError)
    expect(error.toJSON()).toEqual({
      code: 'ErrImagePull',
      exitCode: 10,
      message: text,
      reason: 'ErrImagePull',
      image: 'localhost:5000/x:v1',
    })
  })

  test('a port number like :4013 is not mistaken for a 401', () => {
    expect(pullFailure('dial tcp 127.0.0.1:4013: connect: connection refused', 'x').code).toBe('ErrImagePull')
  })
})

describe('formatGoDuration (time.Duration String, truncated to ms)', () => {
  test.each([
    [0, '0s'],
    [1, '1ms'],
    [523, '523ms'],
    [1000, '1s'],
    [1234, '1.234s'],
    [1500, '1.5s'],
    [10_050, '10.05s'],
    [60_000, '1m0s'],
    [123_500, '2m3.5s'],
    [3_600_000, '1h0m0s'],
    [3_723_004, '1h2m3.004s'],
    [999.9, '999ms'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text)
  })
})
