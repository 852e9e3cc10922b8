// Text from upstream (team, student and staff names, error messages) printed on an operator's terminal or in
// a log line: control characters would let it forge lines (CR/LF), rewrite what is already shown (ESC
// sequences) or reverse it (bidi overrides such as U+202E). They are replaced before anything is printed.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** The text with every control and bidi-control character replaced by a space (tabs and newlines too). */
export function terminalSafe(text: string): string {
  return text.replace(CONTROLS, ' ');
}
