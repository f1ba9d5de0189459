/**
 * The number formats crictl prints through docker/go-units and Go's fmt: sizes with %g and a
 * decimal unit, and Go's default time.Time string (pods -v "Created:").
 */
const DECIMAL_UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB']

/** go-units HumanSizeWithPrecision: divide by 1000 while ≥ 1000, then %.{precision}g and the unit ("1.03MB", "304kB"). */
export function goHumanSize(bytes: number | string | bigint, precision = 4): string {
  let size = Number(bytes)
  let unit = 0
  while (size >= 1000 && unit < DECIMAL_UNITS.length - 1) {
    size /= 1000
    unit++
  }

  return `${goFormatG(size, precision)}${DECIMAL_UNITS[unit]}`
}

/** Go's %.{precision}g: shortest of fixed and exponent forms, trailing zeros dropped, exponent as e+03. */
export function goFormatG(value: number, precision: number): string {
  if (value === 0) return '0'
  const exponent = Math.floor(Math.log10(Math.abs(Number(value.toPrecision(precision)))))
  if (exponent < -4 || exponent >= precision) {
    const [mantissa, exp] = value.toExponential(precision - 1).split('e')
    const digits = exp.replace(/^[+-]/, '')
    return `${stripZeros(mantissa)}e${exp.startsWith('-') ? '-' : '+'}${digits.padStart(2, '0')}`
  }

  return stripZeros(value.toFixed(Math.max(0, precision - 1 - exponent)))
}

function stripZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text
}
