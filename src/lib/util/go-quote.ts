/**
 * Go's strconv.Quote (fmt's %q of a string), which Go programs put around names in their messages: the kubelet's
 * "already present on machine" events, its downward API label files, crictl's flag and logrus errors:
 * \a\b\f\n\r\t\v, \xNN below space and DEL, \uNNNN (\UNNNNNNNN) for other unprintable runes.
 */
export function goQuote(text: string): string {
  let out = '"'
  for (const char of text) {
    const code = char.codePointAt(0)!
    if (char === '"' || char === '\\') out += `\\${char}`
    else if (code >= 0x20 && code < 0x7f) out += char
    else if (code < 0x20 || code === 0x7f) {
      const named: Record<number, string> = {7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r'}
      out += named[code] ? `\\${named[code]}` : `\\x${code.toString(16).padStart(2, '0')}`
    } else if (/[\p{L}\p{M}\p{N}\p{P}\p{S}\u0020]/u.test(char)) out += char
    else out += code > 0xff_ff ? `\\U${code.toString(16).padStart(8, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  }

  return `${out}"`
}
