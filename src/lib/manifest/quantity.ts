/**
 * Kubernetes resource quantities ("500m", "1", "128Mi", "1G", "1.5", "1e3"), parsed exactly
 * (bigint rationals, no floating point) and rounded up the way resource.Quantity's Value() and
 * MilliValue() do, so "100m" CPU and "1Gi" memory become the same numbers the kubelet sends.
 */
export interface Quantity {
  /** The text as written, for messages. */
  text: string
  numerator: bigint
  denominator: bigint
}

const BINARY_SUFFIX: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
}

const DECIMAL_SUFFIX: Record<string, number> = {n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18}

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/

/** Parses a quantity; returns undefined when the text is not one (callers name the field). */
export function parseQuantity(input: string | number): Quantity | undefined {
  const text = String(input).trim()
  const match = QUANTITY.exec(text)
  if (!match) return undefined
  const [, sign, number, suffix = ''] = match
  const [whole, fraction = ''] = number.split('.')
  let numerator = BigInt(`${whole || '0'}${fraction}`) * (sign === '-' ? -1n : 1n)
  let denominator = 10n ** BigInt(fraction.length)
  if (suffix in BINARY_SUFFIX) {
    numerator *= BINARY_SUFFIX[suffix]
  } else {
    const exponent = suffix in DECIMAL_SUFFIX ? DECIMAL_SUFFIX[suffix] : Number(suffix.slice(1))
    if (Math.abs(exponent) > 30) return undefined
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent)
    else denominator *= 10n ** BigInt(-exponent)
  }

  return {text, numerator, denominator}
}

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator
  return numerator % denominator > 0n ? quotient + 1n : quotient
}

/** resource.Quantity.Value(): the value rounded up to an integer (bytes for memory). */
export function quantityValue(quantity: Quantity): bigint {
  return ceilDiv(quantity.numerator, quantity.denominator)
}

/** resource.Quantity.MilliValue(): thousandths rounded up (millicores for CPU). */
export function quantityMilliValue(quantity: Quantity): bigint {
  return ceilDiv(quantity.numerator * 1000n, quantity.denominator)
}

export function isNegative(quantity: Quantity): boolean {
  return quantity.numerator < 0n
}

export function compareQuantities(a: Quantity, b: Quantity): number {
  const left = a.numerator * b.denominator
  const right = b.numerator * a.denominator
  return left < right ? -1 : left > right ? 1 : 0
}
